"""The 設計 page's Session State: its keys (prefix ``design_``), the widget values that survive
page switches, and this session's folder.

Streamlit drops a widget's state when a run does not draw it (another page's run), so each
input widget is seeded from a kept copy (``design_kept``) whenever its own state is missing, and
its value is copied back after it is drawn. Uploads are saved into this session's folder under
``KEIRI_WORKSPACE_ROOT``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from keiri_agent.config import Settings
from keiri_agent.ui import session_state
from keiri_agent.workspace import new_session_dir

__all__ = [
    "ANSWERS_KEY",
    "CHAT_KEY",
    "CHECK_KEY",
    "DOCS_CHANGED_KEY",
    "DOCUMENTS_KEY",
    "ERROR_KEY",
    "INSTRUCTION_KEY",
    "KEPT_KEY",
    "MODE_KEY",
    "PAGE",
    "PLAN_ID_KEY",
    "SAVED_KEY",
    "SEARCH_KEY",
    "TAGS_KEY",
    "TEMPLATES_KEY",
    "TOPK_KEY",
    "YAML_KEY",
    "keep",
    "restore",
    "session_dir",
    "set_widget",
]

PAGE = "design"
(
    INSTRUCTION_KEY,
    TAGS_KEY,
    SEARCH_KEY,
    TEMPLATES_KEY,
    MODE_KEY,
    PLAN_ID_KEY,
    YAML_KEY,
    KEPT_KEY,
    CHAT_KEY,
    ANSWERS_KEY,
    ERROR_KEY,
    DOCUMENTS_KEY,
    DOCS_CHANGED_KEY,
    SESSION_DIR_KEY,
    TOPK_KEY,
    CHECK_KEY,
    SAVED_KEY,
) = session_state.page_keys(
    PAGE,
    "instruction",
    "tags",
    "template_search",
    "templates",
    "apply_mode",
    "plan_id",
    "yaml",
    "kept",  # widget key → value (session_state.kept)
    "chat",
    "answers",  # render_fields' store
    "error",  # the last generation or answer error
    "documents",
    "documents_changed",
    "session_dir",
    "topk",
    "check",
    "saved",
)
T = TypeVar("T")


def restore(key: str, default: Any) -> None:
    """Give the widget under ``key`` its kept value (Streamlit drops it when another page runs)."""
    session_state.restore(PAGE, key, default)


def keep(key: str, value: T) -> T:
    return session_state.keep(PAGE, key, value)


def set_widget(key: str, value: Any) -> None:
    """Set a widget's value before it is drawn in this run (and its kept copy)."""
    st.session_state[key] = value
    keep(key, value)


def session_dir(settings: Settings, name: str) -> Path:
    """``<workspace>/<session>/<name>``, the session folder created on first use."""
    root = st.session_state.get(SESSION_DIR_KEY)
    if root is None:
        root = new_session_dir(settings.keiri_workspace_root)
        st.session_state[SESSION_DIR_KEY] = root
    folder = Path(root) / name
    folder.mkdir(exist_ok=True)
    return folder
