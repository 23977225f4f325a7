"""The server's own secret: the key that signs task tokens (``auth``), kept apart from the users.

Task tokens used to be signed with each user's ``key_sha256``, which the users file holds: whoever
could read that file could forge every token. The secret is now
``<KEIRI_WORKSPACE_ROOT>/.server/secret``: :data:`SECRET_BYTES` random bytes
(``secrets.token_bytes``), mode 0600 in a 0700 folder, made by the first server that needs it.
It is written and fsynced in a temporary file and then hard-linked to its name, which fails when
another worker made it first (that one is kept): two workers starting together end with one
secret, and no reader ever sees a half-written file. It stays across restarts, so tokens do too.

``keiri-agent serve --rotate-secret`` (:meth:`ServerSecret.rotate`) puts new bytes in place with
``os.replace``. Every server notices the new file at its next use (the file's identity is
compared at each use: a ``stat``) and earlier tokens stop working at once. Deleting the file is a
rotation too: the next use makes a new one. A file that is not :data:`SECRET_BYTES` long is a
``ConfigurationError`` naming the command that replaces it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
import threading
from pathlib import Path

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, cause_of, reason_of
from keiri_agent.workspace import fsync_path

__all__ = ["SECRET_BYTES", "SECRET_DIR", "SECRET_FILE", "ServerSecret"]

SECRET_BYTES = 32  # 256 bits: the key size of HMAC-SHA256
SECRET_DIR = ".server"  # under KEIRI_WORKSPACE_ROOT
SECRET_FILE = "secret"
_SHOWN = f"作業フォルダ（KEIRI_WORKSPACE_ROOT）の {SECRET_DIR}/{SECRET_FILE}"
_ROTATE_HINT = (
    "keiri-agent serve --rotate-secret で作り直してください（それまでのタスクのトークンは"
    "使えなくなります）。"
)
_Stamp = tuple[int, int, int, int]  # device, inode, mtime (ns), size: which file it is


def _stamp(status: os.stat_result) -> _Stamp:
    return status.st_dev, status.st_ino, status.st_mtime_ns, status.st_size


class ServerSecret:
    """The secret file of one workspace; :meth:`current` is thread-safe and cheap (a ``stat``
    while the file stays the same)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._cached: tuple[_Stamp, bytes] | None = None

    @classmethod
    def of(cls, settings: Settings) -> ServerSecret:
        """The secret of the workspace ``settings`` name."""
        root = Path(settings.keiri_workspace_root).absolute()
        return cls(root / SECRET_DIR / SECRET_FILE)

    def current(self) -> bytes:
        """The secret now (made when there is none yet)."""
        with self._lock:
            try:
                stamp: _Stamp | None = _stamp(os.stat(self.path))
            except FileNotFoundError:
                self._make(replace=False)
                stamp = None
            except OSError as exc:
                raise self._unusable(exc) from None
            if self._cached is not None and self._cached[0] == stamp:
                return self._cached[1]
            self._cached = self._read()
            return self._cached[1]

    def rotate(self) -> None:
        """Replace the secret with new random bytes: every earlier token stops working."""
        with self._lock:
            self._make(replace=True)
            self._cached = None

    def _make(self, *, replace: bool) -> None:
        folder = self.path.parent
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{SECRET_FILE}-", dir=folder)  # mode 0600
            temporary = Path(name)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(secrets.token_bytes(SECRET_BYTES))
                    out.flush()
                    os.fsync(out.fileno())
                if replace:
                    os.replace(temporary, self.path)
                else:
                    with contextlib.suppress(FileExistsError):  # another worker made it first
                        os.link(temporary, self.path)
            finally:
                temporary.unlink(missing_ok=True)
            fsync_path(folder, directory=True)
        except OSError as exc:
            raise self._unusable(exc) from None

    def _read(self) -> tuple[_Stamp, bytes]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as file:
                stamp = _stamp(os.fstat(file.fileno()))
                value = file.read(SECRET_BYTES + 1)
        except OSError as exc:
            raise self._unusable(exc) from None
        if len(value) != SECRET_BYTES:
            raise ConfigurationError(
                f"サーバーの秘密鍵（{_SHOWN}）が壊れています"
                f"（{len(value)} バイト、{SECRET_BYTES} バイトのはずです）。",
                hint=_ROTATE_HINT,
            )
        return stamp, value

    @staticmethod
    def _unusable(exc: OSError) -> ConfigurationError:
        return ConfigurationError(
            f"サーバーの秘密鍵（{_SHOWN}）を読み書きできません: {reason_of(exc)}",
            hint="サーバーを動かすユーザーが KEIRI_WORKSPACE_ROOT に書き込めるか確認してください。",
            details={"cause": cause_of(exc)},
        )
