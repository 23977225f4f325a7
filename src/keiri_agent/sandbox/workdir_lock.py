"""One action at a time per workdir: an exclusive ``flock`` the host holds while an action runs.

The lock file lives outside every workdir, in a directory private to the caller's uid
(``/tmp/keiri-sandbox-locks-<uid>`` by default, refused if another user owns it or it is a
symlink), and is named by a hash of the workdir's real path: two executors, two threads or two
processes of the same user asking for the same workdir meet on the same lock. The second caller
does not wait: it gets a BlockError (``SANDBOX_BUSY``) saying another action is running there.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["LOCK_DIR_PREFIX", "lock_dir", "workdir_lock"]

LOCK_DIR_PREFIX = "keiri-sandbox-locks-"


def lock_dir(base: Path | None = None) -> Path:
    """The caller's private lock directory (created 0700); BlockError if it is not private."""
    root = base or Path(tempfile.gettempdir())
    path = root / f"{LOCK_DIR_PREFIX}{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise BlockError(
            f"サンドボックスのロック用ディレクトリ {path} が安全ではありません"
            "（別のユーザーの所有、シンボリックリンク、または他人が書き込める）。",
            code=ErrorCode.PERMISSION_DENIED,
            hint=f"{path} を削除してから再実行してください。",
            details={"lock_dir": str(path)},
        )
    return path


@contextlib.contextmanager
def workdir_lock(workdir: Path, base: Path | None = None) -> Iterator[None]:
    """Hold the workdir's lock for the block; BlockError at once if another action holds it."""
    real = os.path.realpath(workdir)
    name = hashlib.sha256(os.fsencode(real)).hexdigest()[:32] + ".lock"
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(lock_dir(base) / name, flags, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BlockError(
                f"作業ディレクトリ {real} では別のコードを実行中です。同じ作業ディレクトリでは"
                "一度に 1 つのコードしか実行できません。",
                code=ErrorCode.SANDBOX_BUSY,
                hint="実行中の処理が終わってから再実行するか、別の作業ディレクトリを指定してください。",
                details={"workdir": real},
                recoverable=True,
            ) from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
