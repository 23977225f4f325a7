"""Who the command line acts as: the user of ``KEIRI_USER_KEY``, or the OS user.

With a users file (``KEIRI_API_KEYS_FILE``), a person names themselves to the CLI with their API
key in ``KEIRI_USER_KEY`` (checked by its hash against the file, as the server checks a Bearer
key): plan approvals need it (the role decides), and saves and runs record that user's name.
Without the key (or without a users file), saves and runs record the OS user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent.errors import BlockError, ErrorCode

if TYPE_CHECKING:
    from keiri_agent.config import Settings
    from keiri_agent.users import User, Users

__all__ = ["acting_name", "acting_user"]


def acting_user(settings: Settings) -> tuple[Users, User | None]:
    """The users the settings name, and the one whose key is ``KEIRI_USER_KEY`` (None when it
    is not set); a key that is set but fits no user is an error, never ignored."""
    from keiri_agent.users import load_users

    users = load_users(settings)
    secret = settings.keiri_user_key
    key = secret.get_secret_value().strip() if secret is not None else ""
    if not key:
        return users, None
    user = users.by_key(key) if users else None
    if user is None:
        raise BlockError(
            "KEIRI_USER_KEY のキーに当たる利用者がいません。",
            code=ErrorCode.PERMISSION_DENIED,
            hint="KEIRI_USER_KEY には利用者ファイル（KEIRI_API_KEYS_FILE）に登録された自分の API"
            " キーを設定してください（利用者ファイルがなければ KEIRI_USER_KEY は使いません）。",
        )
    return users, user


def acting_name(settings: Settings) -> str:
    """The name saves and runs are recorded under: the key's user, else the OS user."""
    from keiri_agent.users import os_user

    _users, user = acting_user(settings)
    return user.name if user is not None else os_user()
