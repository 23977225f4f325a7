"""Copy-out: the files an action wrote reach the workdir, and nothing else does.

Runs in the supervisor after the action's init process (and so every process of the action) is
dead. It walks the overlay's upper layer (``actionfs``) and the real workdir side by side with
directory descriptors only: every entry is opened relative to its parent's descriptor with
``O_NOFOLLOW``, so no path the code could have prepared is ever resolved.

* Regular files the action created or rewrote are copied to a new file in the same directory
  (``O_CREAT | O_EXCL | O_NOFOLLOW``) and renamed over the name: a rewritten file is replaced
  atomically, a pre-existing file the action did not write is untouched. Copies get mode 0644.
* Directories are created (0755) or entered with ``O_DIRECTORY | O_NOFOLLOW``.
* Symbolic links, device files, FIFOs and sockets, and names that are not valid UTF-8 are not
  copied; each is reported as a Japanese warning.
* Deletions are not applied: a file the action removed stays in the workdir (reported).
* ``max_files`` and ``max_bytes`` bound what is copied (the tmpfs below the upper layer already
  bounds what can be there).

``workdir/.sandbox`` (the action's home, tmp and matplotlib config) is never copied.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass, field

from keiri_agent.errors import reason_of

__all__ = ["SANDBOX_DIR", "CopyResult", "copy_out"]

SANDBOX_DIR = ".sandbox"
COPY_CHUNK = 1 << 20
DIR_MODE = 0o755
FILE_MODE = 0o644
OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class CopyResult:
    files: list[str] = field(default_factory=list)  # copied, relative to the workdir, sorted
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    deleted: int = 0  # whiteouts: deletions that were not applied


def _shown(name: str) -> str:
    """A name as a user may see it: undecodable bytes as \\x escapes."""
    return os.fsencode(name).decode("utf-8", errors="backslashreplace")


def _valid_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "シンボリックリンク"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "ソケット"
    return "デバイスファイル"


class _Copier:
    def __init__(self, max_files: int, max_bytes: int) -> None:
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.result = CopyResult()
        self.stopped = False

    def warn(self, text: str) -> None:
        self.result.warnings.append(text)

    def copy_tree(self, upper_fd: int, workdir_fd: int) -> None:
        # Iterative, parents first: a tree deeper than PATH_MAX or Python's recursion limit
        # is walked like any other (each step is one name relative to one descriptor).
        stack: list[tuple[int, int, str]] = [(upper_fd, workdir_fd, "")]
        owned: list[int] = []
        try:
            while stack and not self.stopped:
                src, dst, prefix = stack.pop()
                for name in sorted(os.listdir(src)):
                    child = self._entry(src, dst, prefix, name)
                    if child is not None:
                        owned.extend(child[:2])
                        stack.append(child)
        finally:
            for fd in owned:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _entry(self, src: int, dst: int, prefix: str, name: str) -> tuple[int, int, str] | None:
        rel = f"{prefix}{name}"
        if not prefix and name == SANDBOX_DIR:
            return None
        info = os.stat(name, dir_fd=src, follow_symlinks=False)
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
            self.result.deleted += 1  # an overlay whiteout: the action deleted a lower file
            return None
        if not _valid_utf8(name):
            self.warn(f"名前が UTF-8 でないため {_shown(rel)} をコピーしませんでした。")
            return None
        if stat.S_ISDIR(info.st_mode):
            return self._directory(src, dst, name, rel)
        if not stat.S_ISREG(info.st_mode):
            self.warn(f"{_kind(info.st_mode)} {rel} はコピーしませんでした。")
            return None
        self._file(src, dst, name, rel, info.st_size)
        return None

    def _directory(self, src: int, dst: int, name: str, rel: str) -> tuple[int, int, str] | None:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, DIR_MODE, dir_fd=dst)
        try:
            target = os.open(name, OPEN_DIR, dir_fd=dst)
        except OSError as exc:  # a file or a symlink of the same name in the workdir
            self.warn(
                f"{rel} はディレクトリにできないためコピーしませんでした（{reason_of(exc)}）。"
            )
            return None
        try:
            source = os.open(name, OPEN_DIR, dir_fd=src)
        except OSError:
            os.close(target)
            raise
        return source, target, f"{rel}/"

    def _file(self, src: int, dst: int, name: str, rel: str, size: int) -> None:
        if len(self.result.files) >= self.max_files or self.result.bytes + size > self.max_bytes:
            self.warn(
                f"コピーできる数・大きさの上限に達したため {rel} 以降をコピーしませんでした。"
            )
            self.stopped = True
            return
        temp = f".keiri-copy-{os.urandom(6).hex()}"
        source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=src)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            target = os.open(temp, flags, FILE_MODE, dir_fd=dst)
            try:
                copied = _copy(source, target)
            finally:
                os.close(target)
        finally:
            os.close(source)
        try:
            os.rename(temp, name, src_dir_fd=dst, dst_dir_fd=dst)
        except OSError as exc:  # e.g. a directory of that name exists in the workdir
            os.unlink(temp, dir_fd=dst)
            self.warn(f"{rel} をワークディレクトリに置けませんでした（{reason_of(exc)}）。")
            return
        self.result.files.append(rel)
        self.result.bytes += copied


def _copy(source: int, target: int) -> int:
    total = 0
    while True:
        try:
            moved = os.copy_file_range(source, target, COPY_CHUNK)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                raise
            chunk = os.read(source, COPY_CHUNK)
            moved = len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(target, view) :]
        if moved == 0:
            return total
        total += moved


def copy_out(upper_fd: int, workdir_fd: int, *, max_files: int, max_bytes: int) -> CopyResult:
    """Copy what the action wrote (the upper layer at ``upper_fd``) into the workdir."""
    copier = _Copier(max_files, max_bytes)
    copier.copy_tree(upper_fd, workdir_fd)
    if copier.result.deleted:
        copier.warn(
            f"コードが削除した既存のファイル・ディレクトリ {copier.result.deleted} 件は"
            "ワークディレクトリに残しています（削除は反映しません）。"
        )
    copier.result.files.sort()
    return copier.result
