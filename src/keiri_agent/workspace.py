"""Per-session directories and path confinement.

Seed 000 gives every analysis session its own ``./workspace/<yyyymmddhhmmss>/`` directory; the
root is configurable with ``KEIRI_WORKSPACE_ROOT``. The stamp is the session's start in UTC,
like every stored time (run logs, task records): the name reads the same on any machine, and
what a person is shown is that time in ``KEIRI_TIMEZONE`` (:func:`session_started`,
``keiri_agent.localtime``). Every path that a user or an LLM supplies is
passed through :func:`confine` before it is read or written, so that ``..``, absolute paths and
symbolic links cannot lead outside the directory the work belongs to.

``confine`` checks the path at the moment it is called. A symlink created later by code that can
write inside the directory is not caught here; for generated code, the sandbox (a child process
with OS limits) is the boundary and this check is defence in depth.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePath

from keiri_agent.config import load_settings
from keiri_agent.errors import BlockError, ErrorCode, PathEscapeError
from keiri_agent.localtime import parse_stamp

__all__ = [
    "MAX_SAME_SECOND_SESSIONS",
    "SESSION_DIR_FORMAT",
    "Workspace",
    "atomic_path",
    "confine",
    "fsync_path",
    "new_session_dir",
    "session_started",
]

SESSION_DIR_FORMAT = "%Y%m%d%H%M%S"
# Upper bound on "<ts>-N" suffixes tried before giving up; far beyond any real collision rate.
MAX_SAME_SECOND_SESSIONS = 10_000

_CONFINE_HINT = (
    "ワークスペース内の相対パスを指定してください"
    "（絶対パス、'..'、ワークスペースの外を指すシンボリックリンクは使えません）。"
)


def _escape(base: Path | str, path: str | Path, reason: str, message: str) -> PathEscapeError:
    return PathEscapeError(
        message,
        hint=_CONFINE_HINT,
        details={"base": str(base), "path": str(path), "reason": reason},
    )


def confine(base: Path | str, path: str | Path, *, allow_absolute_inside: bool = False) -> Path:
    """Return the resolved absolute path of ``path`` inside ``base``, or raise.

    Rejected with :class:`PathEscapeError` (code ``PERMISSION_DENIED``): an empty path, a path
    with NUL bytes, any ``..`` component, an absolute path (unless ``allow_absolute_inside`` and
    it lies inside ``base``), and any path whose real location -- following symlinks in every
    component, including a dangling symlink whose target does not exist yet -- is outside the
    real location of ``base``. ``base`` need not exist.
    """
    text = os.fspath(path)
    if not text.strip():
        raise _escape(base, path, "empty", "パスが空です。")
    if "\x00" in text:
        reason = f"パス {text!r} に使用できない文字（NUL）が含まれています。"
        raise _escape(base, path, "nul", reason)
    pure = PurePath(text)
    if ".." in pure.parts:
        raise _escape(base, path, "parent_reference", f"パス '{text}' に '..' が含まれています。")
    if pure.is_absolute() and not allow_absolute_inside:
        raise _escape(
            base,
            path,
            "absolute",
            f"パス '{text}' は絶対パスです。ワークスペース外のファイルは扱えません。",
        )
    base_real = Path(os.path.realpath(base))
    # os.path.realpath follows symlinks component by component and also resolves a dangling
    # link to its (non-existent) target, which is what must be checked before a write.
    real = Path(os.path.realpath(base_real / pure))
    if not real.is_relative_to(base_real):
        raise _escape(
            base,
            path,
            "outside" if pure.is_absolute() else "symlink_escape",
            f"パス '{text}' はワークスペースの外（{real}）を指しています。",
        )
    return real


def _default_root() -> Path:
    return load_settings().keiri_workspace_root


def new_session_dir(root: Path | str | None = None, *, now: datetime | None = None) -> Path:
    """Create and return a fresh ``root/<yyyymmddhhmmss>`` directory for one session.

    The directory is created with ``mkdir(exist_ok=False)``, so two sessions started in the same
    second -- even concurrently from threads or processes -- never share one: the later ones get
    ``<ts>-2``, ``<ts>-3``, ... ``root`` defaults to ``KEIRI_WORKSPACE_ROOT``; ``now`` to the
    current time, written in UTC.
    """
    base = Path(root) if root is not None else _default_root()
    base = base.absolute()
    base.mkdir(parents=True, exist_ok=True)
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime(SESSION_DIR_FORMAT)
    for n in range(1, MAX_SAME_SECOND_SESSIONS + 1):
        candidate = base / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            candidate.mkdir(exist_ok=False)
        except FileExistsError:
            continue
        return candidate
    raise BlockError(
        f"セッション用ディレクトリを作成できません: {base / stamp} とその連番"
        "がすべて使用済みです。",
        code=ErrorCode.PERMISSION_DENIED,
        hint="ワークスペースのルート（KEIRI_WORKSPACE_ROOT）にある古いセッションを整理してください。",
        details={"root": str(base), "timestamp": stamp},
    )


def session_started(path: Path | str) -> datetime | None:
    """When the session of a ``<yyyymmddhhmmss>[-N]`` directory started (UTC); None for a
    directory not named so. Directories made before the stamp was UTC were named in the
    server's local time: read as UTC, they are off by the server's offset."""
    return parse_stamp(Path(path).name, SESSION_DIR_FORMAT)


@dataclass(frozen=True)
class Workspace:
    """One session's working directory; every path in it goes through :func:`confine`."""

    path: Path

    @classmethod
    def new(cls, root: Path | str | None = None, *, now: datetime | None = None) -> Workspace:
        """Create a new session directory under ``root`` (see :func:`new_session_dir`)."""
        return cls(new_session_dir(root, now=now))

    def resolve(self, rel: str | Path, *, allow_absolute_inside: bool = False) -> Path:
        """The absolute path of ``rel`` inside this workspace (raises PathEscapeError)."""
        return confine(self.path, rel, allow_absolute_inside=allow_absolute_inside)

    def relative(self, path: str | Path) -> str:
        """``path`` (absolute inside the workspace, or relative) as a POSIX path relative to it."""
        real = confine(self.path, path, allow_absolute_inside=True)
        return real.relative_to(os.path.realpath(self.path)).as_posix()

    def run_dir(self, name: str | Path) -> Path:
        """Create (if needed) and return the confined subdirectory ``name``."""
        target = self.resolve(name)
        target.mkdir(parents=True, exist_ok=True)
        return target


def fsync_path(path: Path, *, directory: bool = False) -> None:
    """Return once ``path``'s data (a file) or entries (``directory``) are on disk."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(
    target: Path, *, suffix: str = ".tmp", prefix: str | None = None, durable: bool = False
) -> Iterator[Path]:
    """A temporary path beside ``target`` that replaces it when the block exits cleanly.

    Readers see the old file or the new one, never half of it; on an exception the temporary
    file is removed and ``target`` is left as it was. The temporary file is created with mode
    0600 (callers that need another mode set it on the yielded path). ``durable``: the new
    content and the replacement are on disk (fsync of the file, then of its folder) when the
    block exits, so a power cut leaves the old file or the new one, never an empty one.
    """
    fd, name = tempfile.mkstemp(
        dir=target.parent, prefix=prefix or f".{target.stem}.", suffix=suffix
    )
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        if durable:
            fsync_path(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        fsync_path(target.parent, directory=True)
