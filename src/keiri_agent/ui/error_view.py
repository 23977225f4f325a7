"""Showing a ``BlockError`` as seed 002 §9.3 draws it: the message, the details in an expander,
the hint, and a rerun button when rerunning can succeed."""

from __future__ import annotations

import streamlit as st

from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import BlockError

__all__ = ["render_error", "settings_or_error"]


def render_error(error: BlockError, *, retry_key: str | None = None) -> bool:
    """Show ``error``; returns True when its 再実行 button (shown with ``retry_key``) was pressed."""
    st.error(error.message, icon="❌")
    with st.expander("エラー詳細"):
        st.json(
            {
                "code": error.code,
                "details": error.details,
                "input_snapshot": error.input_snapshot,
                "recoverable": error.recoverable,
            }
        )
    if error.hint:
        st.info(error.hint, icon="💡")
    if retry_key is not None and error.recoverable:
        return st.button("再実行", key=retry_key, help="同じ内容をもう一度実行します。")
    return False


def settings_or_error() -> Settings | None:
    """The settings, or None once the error saying why they cannot be loaded is shown."""
    try:
        return load_settings()
    except BlockError as exc:
        render_error(exc)
        return None
