"""Signing in to the app with the API server's users (``KEIRI_API_KEYS_FILE`` / ``KEIRI_API_KEY``).

Without users the app is open, as before (``keiri-agent ui`` listens on the loopback address
unless told otherwise). With users, :func:`check_access` runs before any page: the key this
browser session signed in with is checked against the users read afresh on every script run
(a user removed from the file, or a changed key, is signed out at the next click), and without
a valid key the sign-in form is drawn in place of whichever page was asked for (so a link to a
page opens that page once the key is accepted). Users and keys are the server's
(:func:`keiri_agent.users.load_users`; the key is compared by its hash, in constant time).

The key lives only in this session's Session State: the password box is emptied when the form
is sent, and the key is never drawn, logged, put in the URL or written to disk. Signing out
clears the whole Session State, so the next person in this browser starts with nothing of the
last one's inputs and results.

The role matters on the 設計 page: only an approver may approve or reject a plan version, never
their own (``keiri_agent.versions.review``), and saves and runs record the signed-in user
(:func:`current_user`; the OS user when the app is open). The 実行 page's history is the same
for everyone signed in (each run names who started it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Final

import streamlit as st

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.ui.error_view import render_error, settings_or_error
from keiri_agent.users import User, Users, load_users, os_user

__all__ = [
    "KEY_STATE",
    "ROLE_LABELS",
    "Access",
    "acting_name",
    "check_access",
    "current_user",
    "render_account",
]

KEY_STATE: Final = "signin_key"  # the key this session signed in with (Session State only)
FORM_KEY: Final = "signin_form"
KEY_INPUT: Final = "signin_key_input"
SUBMIT_KEY: Final = "signin_submit"
SIGNOUT_KEY: Final = "signin_signout"
REFUSAL_STATE: Final = "signin_refusal"  # why the last key was refused, shown once
ROLE_LABELS: Final = {"admin": "管理者", "approver": "承認者", "user": "利用者"}
WRONG_KEY: Final = "API キーが正しくありません。"
NO_KEY: Final = "API キーを入力してください。"


def _signed_in(users: Users) -> User | None:
    """The user whose key this session holds; a key no longer valid ends the session."""
    key = st.session_state.get(KEY_STATE)
    if key is None:
        return None
    user = users.by_key(key) if isinstance(key, str) else None
    if user is None:
        st.session_state.clear()
    return user


def _submit(users: Users) -> None:
    """The form was sent (a callback: it runs before the script, so the box can be emptied
    and an accepted key opens the pages in this very run)."""
    key = str(st.session_state.get(KEY_INPUT) or "").strip()
    st.session_state[KEY_INPUT] = ""  # the box does not keep the key past this click
    if key and users.by_key(key) is not None:
        st.session_state[KEY_STATE] = key
    else:
        st.session_state[REFUSAL_STATE] = WRONG_KEY if key else NO_KEY


def _render_form(users: Users) -> None:
    """The sign-in page: the key, and a refusal that says only that it is wrong."""
    st.title("サインイン")
    st.caption(
        "この画面を使うには API キーが必要です。管理者から受け取ったキーを入力してください。"
    )
    with st.form(FORM_KEY):
        st.text_input("API キー", type="password", key=KEY_INPUT, autocomplete="off")
        st.form_submit_button(
            "サインイン", key=SUBMIT_KEY, type="primary", on_click=_submit, args=(users,)
        )
    refusal = st.session_state.pop(REFUSAL_STATE, None)
    if refusal is not None:
        st.error(refusal, icon="❌")


@dataclass(frozen=True)
class Access:
    """What this script run shows: the sign-in ``form`` in place of every page, or the pages
    for ``user`` (None: no users are configured, the app is open)."""

    user: User | None = None
    form: Callable[[], None] | None = None


def check_access() -> Access:
    """Who may use the app in this run. When the settings or the users file cannot be read,
    their error is drawn and the script run stops here: nothing opens until they are fixed."""
    settings = settings_or_error()
    if settings is None:
        st.stop()
    try:
        users = load_users(settings)
    except BlockError as exc:
        render_error(exc)
        st.stop()
    if not users:
        return Access()
    user = _signed_in(users)
    return Access(user=user) if user is not None else Access(form=partial(_render_form, users))


def current_user(settings: Settings) -> tuple[Users, User | None]:
    """The users, and the one this session signed in as (None when no users are configured:
    the app is open and acts as the OS user)."""
    users = load_users(settings)
    key = st.session_state.get(KEY_STATE)
    return users, users.by_key(key) if users and isinstance(key, str) else None


def acting_name(settings: Settings) -> str:
    """The name this session's saves and runs are recorded under."""
    _users, user = current_user(settings)
    return user.name if user is not None else os_user()


def render_account(user: User) -> None:
    """Who is signed in, in the sidebar, with サインアウト."""
    with st.sidebar:
        st.caption(f"サインイン中: **{user.name}**（{ROLE_LABELS[user.role]}）")
        if st.button("サインアウト", key=SIGNOUT_KEY, icon=":material/logout:"):
            st.session_state.clear()
            st.rerun()
