"""Entry script of the keiri-agent Streamlit app: page setup, navigation and the sidebar.

Run with ``keiri-agent ui`` or ``streamlit run app.py`` at the repository root; both execute
``main()``. Streamlit's own chrome is put in Japanese first (``chrome``). Pages come from
``keiri_agent.ui.views.PAGES``; an address none of them has gets a Japanese page of its own
(``unknown_address``). When users are
configured (``KEIRI_API_KEYS_FILE`` / ``KEIRI_API_KEY``) no page runs before sign-in
(``keiri_agent.ui.signin``).
"""

from __future__ import annotations

import streamlit as st

from keiri_agent.ui.chrome import ICON_PATH, apply_chrome
from keiri_agent.ui.sidebar import render_sidebar
from keiri_agent.ui.signin import check_access, render_account
from keiri_agent.ui.unknown_address import unknown_address_page
from keiri_agent.ui.views import LINKS, PAGES

__all__ = ["main"]

APP_TITLE = "keiri-agent"


def main() -> None:
    """Ask for sign-in when users are configured, then build the navigation, draw the
    settings sidebar and run the selected page."""
    st.set_page_config(page_title=APP_TITLE, page_icon=str(ICON_PATH), layout="wide")
    apply_chrome()
    with st.sidebar:
        st.title(APP_TITLE)
        st.caption("経理などバックオフィス業務のための LLM ワークベンチ")
    access = check_access()
    pages = [
        st.Page(
            access.form or spec.render,
            title=spec.title,
            icon=spec.icon,
            # The first page is at the root and reserves no other name (an address like
            # /home is then unknown_address's, not Streamlit's English "Page not found").
            url_path=spec.url_path if index else "",
            default=index == 0,
        )
        for index, spec in enumerate(PAGES)
    ]
    LINKS.clear()
    LINKS.update({spec.url_path: page for spec, page in zip(PAGES, pages, strict=True)})
    served = [page.url_path for page in pages]
    if (unknown := unknown_address_page(served)) is not None:  # Streamlit's English otherwise
        pages.append(unknown)
    if access.form is not None:  # not signed in: the form, with no navigation and no sidebar
        st.navigation(pages, position="hidden").run()
        return
    page = st.navigation(pages)
    if access.user is not None:
        render_account(access.user)
    render_sidebar()
    page.run()


if __name__ == "__main__":  # Streamlit runs the entry script as __main__
    main()
