"""Session State conventions (seed 002 §10 ``ui/session_state.py``).

Each page owns the keys that start with its prefix (``analysis_...``). Values survive reruns
until the page resets them explicitly; nothing is cleared behind the user's back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import streamlit as st

__all__ = ["get_or_create", "page_key", "reset"]

T = TypeVar("T")


def page_key(page: str, name: str) -> str:
    """The Session State key of ``name`` on ``page`` (``analysis_session``)."""
    return f"{page}_{name}"


def get_or_create(key: str, factory: Callable[[], T]) -> T:
    """The value under ``key``, created with ``factory`` on first use."""
    if key not in st.session_state:
        st.session_state[key] = factory()
    value: T = st.session_state[key]
    return value


def reset(page: str, *, keep: Iterable[str] = ()) -> list[str]:
    """Delete every key of ``page`` except ``keep``; returns the deleted keys."""
    prefix = page_key(page, "")
    kept = set(keep)
    doomed = [
        k for k in map(str, st.session_state.keys()) if k.startswith(prefix) and k not in kept
    ]
    for key in doomed:
        del st.session_state[key]
    return doomed
