"""Session State conventions (seed 002 §10 ``ui/session_state.py``).

Each page owns the keys that start with its prefix (``analysis_...``). Values survive reruns
until the page resets them explicitly; nothing is cleared behind the user's back.

Streamlit drops a widget's state when a run does not draw it (another page's run, or a branch
of the page not taken), so a page keeps a copy of each input widget's value under
``{page}_kept``: :func:`restore` seeds the widget from that copy before it is drawn, and
:func:`keep` copies the value back after. :func:`reset` clears the copies with the page.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any, TypeVar

import streamlit as st

__all__ = [
    "get_or_create",
    "keep",
    "kept",
    "kept_widget",
    "page_key",
    "page_keys",
    "reset",
    "reset_with_new_uploaders",
    "restore",
    "uploader_key",
]

T = TypeVar("T")
_NO_DEFAULT: Any = object()
_UPLOADER_GENERATION = "uploader_generation"


def page_key(page: str, name: str) -> str:
    """The Session State key of ``name`` on ``page`` (``analysis_session``)."""
    return f"{page}_{name}"


def page_keys(page: str, *names: str) -> tuple[str, ...]:
    """The Session State keys of ``names`` on ``page``, in order (see :func:`page_key`)."""
    return tuple(page_key(page, name) for name in names)


def get_or_create(key: str, factory: Callable[[], T]) -> T:
    """The value under ``key``, created with ``factory`` on first use."""
    if key not in st.session_state:
        st.session_state[key] = factory()
    value: T = st.session_state[key]
    return value


def kept(page: str) -> dict[str, Any]:
    """The page's kept widget values (widget key → value)."""
    return get_or_create(page_key(page, "kept"), dict)


def restore(
    page: str, key: str, default: Any = _NO_DEFAULT, *, allowed: Collection[Any] | None = None
) -> str:
    """Give the widget under ``key`` its kept value (else ``default``, when given) if Streamlit
    dropped its state; a kept value not in ``allowed`` is not restored. Returns ``key``."""
    if key not in st.session_state:
        value = kept(page).get(key, default)
        if value is not _NO_DEFAULT and (allowed is None or value in allowed):
            st.session_state[key] = value
    return key


def keep(page: str, key: str, value: T) -> T:
    """Remember ``value`` as the widget's kept value; returns it."""
    kept(page)[key] = value
    return value


def kept_widget(
    page: str,
    key: str,
    widget: Callable[..., T],
    *args: Any,
    default: Any = _NO_DEFAULT,
    allowed: Collection[Any] | None = None,
    **kwargs: Any,
) -> T:
    """Draw ``widget(*args, key=key, **kwargs)`` seeded from its kept value (see :func:`restore`)
    and keep the value it returns."""
    return keep(
        page, key, widget(*args, key=restore(page, key, default, allowed=allowed), **kwargs)
    )


def reset(page: str, *, keep: Iterable[str] = ()) -> list[str]:
    """Delete every key of ``page`` except ``keep``; returns the deleted keys."""
    prefix = page_key(page, "")
    kept_keys = set(keep)
    doomed = [
        k for k in map(str, st.session_state.keys()) if k.startswith(prefix) and k not in kept_keys
    ]
    for key in doomed:
        del st.session_state[key]
    return doomed


def _uploader_generation(page: str) -> int:
    return int(st.session_state.get(page_key(page, _UPLOADER_GENERATION), 0))


def uploader_key(page: str, name: str) -> str:
    """The key of the page's file uploader ``name`` (``analysis_uploader_0``): it changes with
    each :func:`reset_with_new_uploaders`, and a new key is an empty uploader."""
    return page_key(page, f"{name}_{_uploader_generation(page)}")


def reset_with_new_uploaders(page: str) -> list[str]:
    """:func:`reset` the page and empty its file uploaders (they get new keys: the count of
    resets survives the reset); returns the deleted keys."""
    generation = _uploader_generation(page)
    doomed = reset(page)
    st.session_state[page_key(page, _UPLOADER_GENERATION)] = generation + 1
    return doomed
