"""What the agent pages (変換, ヘルプデスク, データ分析) share: their opening, their primary
action (変換する, 質問する...) and the 再実行 of its error.

:func:`open_page` draws the title and the caption and loads the settings (showing the error
when they cannot be loaded). The action runs when its button is pressed, or in the rerun that
an error's 再実行 button asks for: :func:`render_retryable_error` sets the page's pending flag
and reruns the page, and :func:`action_requested` consumes the flag, so the page repeats the
action with the inputs as they are.
"""

from __future__ import annotations

import streamlit as st

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.ui.error_view import render_error, settings_or_error

__all__ = ["action_requested", "open_page", "render_retryable_error"]


def open_page(title: str, caption: str) -> Settings | None:
    """Draw the page's title and caption; the settings, or None once their error is shown."""
    st.title(title)
    st.caption(caption)
    return settings_or_error()


def action_requested(label: str, *, key: str, pending_key: str, blocked: bool, icon: str) -> bool:
    """Draw the primary button; True when it was pressed or a 再実行 is pending, unless
    ``blocked`` (the button is then disabled)."""
    clicked = st.button(label, key=key, type="primary", disabled=blocked, icon=icon)
    pending = bool(st.session_state.pop(pending_key, False))
    return (clicked or pending) and not blocked


def render_retryable_error(error: BlockError, *, retry_key: str, pending_key: str) -> None:
    """Show ``error``; its 再実行 button reruns the page with the action pending."""
    if render_error(error, retry_key=retry_key):
        st.session_state[pending_key] = True
        st.rerun()
