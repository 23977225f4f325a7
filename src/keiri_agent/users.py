"""Who the people are: the users file (``KEIRI_API_KEYS_FILE``) and the single key.

The API server, the app's sign-in, the CLI's approvals (``KEIRI_USER_KEY``) and the plan
runner's approval check (``keiri_agent.versions``) all read the same users, so this module sits
low in the layers. The users file is YAML::

    users:
      - name: sato              # letters, digits, '.', '_', '-' (1-64)
        key_sha256: 9f86d0...   # SHA-256 of the user's key, 64 hex digits (the key itself is
        role: user              # never stored); role: user (own tasks), approver (own tasks,
      - name: suzuki            # and approves plan versions others saved) or admin (every
        key_sha256: 2c26b4...   # task; approving is the approver's, not the admin's)
        role: approver
      - name: ops
        key_sha256: 60303a...
        role: admin

Make a key and its hash with ``python -c "import secrets; print(secrets.token_urlsafe(32))"``
and ``printf %s KEY | sha256sum``. ``KEIRI_API_KEY`` keeps working: it is one more user, named
``admin``, with the admin role. A malformed file stops the server at start with a Japanese
error naming the entry.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, cause_of, reason_of

__all__ = ["ROLES", "SINGLE_KEY_USER", "Role", "User", "Users", "key_hash", "load_users", "os_user"]

SINGLE_KEY_USER = "admin"  # the name KEIRI_API_KEY's holder goes by
Role = Literal["user", "approver", "admin"]
ROLES: tuple[Role, ...] = ("user", "approver", "admin")
_HINT = (
    "KEIRI_API_KEYS_FILE の YAML を users: [{name, key_sha256, role: user|approver|admin}] の形にして"
    "ください（key_sha256 はキーの SHA-256 を 16 進 64 桁で。例: printf %s KEY | sha256sum）。"
)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class User:
    """One holder of a key (the tokens of their tasks are signed with the server's secret,
    never with anything in this file: ``secret``)."""

    name: str
    role: Role

    @property
    def admin(self) -> bool:
        return self.role == "admin"

    @property
    def approver(self) -> bool:
        """Whether this user may approve or reject plan versions (``keiri_agent.versions``)."""
        return self.role == "approver"


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")
    key_sha256: str = Field(pattern=r"^[0-9a-fA-F]{64}$")
    role: Role = "user"


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    users: list[_Entry] = Field(min_length=1)


class Users:
    """The users the server knows, found by key (hashed) or by name."""

    def __init__(self, users: list[tuple[User, str]]) -> None:
        self._by_hash = {digest: user for user, digest in users}
        self._by_name = {user.name: user for user, _digest in users}

    def __bool__(self) -> bool:
        return bool(self._by_name)

    def by_key(self, key: str) -> User | None:
        """The holder of ``key``: its hash is compared with every user's in constant time."""
        digest = key_hash(key)
        found = None
        for known, user in self._by_hash.items():
            if hmac.compare_digest(known, digest):
                found = user
        return found

    def by_name(self, name: str | None) -> User | None:
        return self._by_name.get(name) if name is not None else None

    def approvers(self) -> list[str]:
        """The names of the users who may approve plan versions, sorted."""
        return sorted(name for name, user in self._by_name.items() if user.approver)


def os_user() -> str:
    """Who runs this process, by the operating system's account name (the author of a CLI
    save, the one who starts a CLI run, when no key names a user)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's bare uid)
        return f"uid-{os.getuid()}"


def _bad(path: Path, problem: str, exc: Exception | None = None) -> ConfigurationError:
    cause = {} if exc is None else {"cause": cause_of(exc)}
    return ConfigurationError(
        f"ユーザーファイル {path} を読めません: {problem}",
        hint=_HINT,
        details={"file": str(path), **cause},
    )


def _read_file(path: Path) -> list[tuple[User, str]]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _bad(path, reason_of(exc), exc) from None
    try:
        parsed = _File.model_validate(data)
    except ValidationError as exc:
        raise _bad(path, reason_of(exc), exc) from None
    users: list[tuple[User, str]] = []
    for entry in parsed.users:
        digest = entry.key_sha256.lower()
        if any(u.name == entry.name for u, _d in users) or any(d == digest for _u, d in users):
            raise _bad(path, f"ユーザー {entry.name} の名前かキーが他のユーザーと重複しています")
        users.append((User(entry.name, entry.role), digest))
    return users


def load_users(settings: Settings) -> Users:
    """Every user: those of the users file, and ``admin`` for ``KEIRI_API_KEY`` (empty: no
    authentication)."""
    users = _read_file(settings.keiri_api_keys_file) if settings.keiri_api_keys_file else []
    single = settings.keiri_api_key
    key = single.get_secret_value().strip() if single is not None else ""
    if key:
        if any(u.name == SINGLE_KEY_USER for u, _d in users):
            raise _bad(
                Path(str(settings.keiri_api_keys_file)),
                f"名前 {SINGLE_KEY_USER} は KEIRI_API_KEY の利用者の名前なので使えません",
            )
        users.append((User(SINGLE_KEY_USER, "admin"), key_hash(key)))
    return Users(users)
