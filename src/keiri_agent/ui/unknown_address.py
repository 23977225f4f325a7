"""A page for an address the app has no page at, so that Streamlit does not answer it in English.

Opened at an address no page has (an old bookmark, a typo: ``/home``, ``/実行``), Streamlit runs
the first page under a dialog of its own, in English ("Page not found. The page that you have
requested does not seem to exist. Running the app's main page."), which no setting changes. The
app therefore gives such an address a page of its own, hidden from the navigation, that says in
Japanese that there is no page there and to choose one in the navigation: Streamlit finds a page
for the address and has nothing to report.

Streamlit matches the name the browser asked for (the address after the app's base path) with the
pages' ``url_path``; that name is the script run's intent (``pages_manager.intended_page_name``,
set by Streamlit before the script runs, empty when a page was chosen in the navigation).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

__all__ = ["NOT_FOUND_TITLE", "unknown_address_page"]

NOT_FOUND_TITLE: Final = "ページが見つかりません"


def _asked_for(known: Collection[str]) -> str | None:
    """The page name the browser asked for, when no page in ``known`` (the url paths served) has
    it."""
    ctx = get_script_run_ctx()
    if ctx is None or ctx.pages_manager.intended_page_script_hash:
        return None
    name = ctx.pages_manager.intended_page_name or ""
    if not name.strip("/ ") or name in known or "/" in name.strip("/"):
        return None  # the first page, a page the app has, or a path Streamlit does not serve
    return name


def unknown_address_page(known: Collection[str]) -> st.Page | None:
    """A hidden page at the address asked for when no page in ``known`` has it, else None."""
    name = _asked_for(known)
    if name is None:
        return None

    def render() -> None:
        st.header(NOT_FOUND_TITLE)
        st.text(f"「/{name}」というページはありません。")  # the address as typed, not Markdown
        st.write("左のメニューから使うページを選んでください。")

    return st.Page(render, title=NOT_FOUND_TITLE, url_path=name, visibility="hidden")
