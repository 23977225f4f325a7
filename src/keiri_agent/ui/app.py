"""Entry script of the keiri-agent Streamlit app: page setup, navigation and the sidebar.

Run with ``keiri-agent ui`` or ``streamlit run app.py`` at the repository root (seed 002 §10);
both execute ``main()``. Pages come from ``keiri_agent.ui.views.PAGES``.
"""

from __future__ import annotations

import streamlit as st

from keiri_agent.ui.sidebar import render_sidebar
from keiri_agent.ui.views import PAGES

__all__ = ["main"]

APP_TITLE = "keiri-agent"


def main() -> None:
    """Build the navigation, draw the settings sidebar and run the selected page."""
    st.set_page_config(page_title=APP_TITLE, page_icon=":material/calculate:", layout="wide")
    pages = [
        st.Page(spec.render, title=spec.title, icon=spec.icon, url_path=spec.url_path)
        for spec in PAGES
    ]
    page = st.navigation(pages)
    with st.sidebar:
        st.title(APP_TITLE)
        st.caption("経理などバックオフィス業務のための LLM ワークベンチ")
    render_sidebar()
    page.run()


if __name__ == "__main__":  # Streamlit runs the entry script as __main__
    main()
