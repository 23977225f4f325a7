"""A job's files reach its folder only when the job ends well: a stop at any moment leaves the
folder as it was.

A job that writes files into a folder the user keeps -- a conversion into its output folder, the
loading of an analysis session's data into its workspace -- writes them into a hidden staging
folder inside it (``.keiri-staging-<pid>-<random>``: the same file system, so moving a file out
is one atomic rename) and calls :meth:`Staging.publish` once the job has succeeded. Leaving the
:func:`staged` block any other way -- an error, a cancel, a deadline, Ctrl+C -- removes the
staging folder, so the folder keeps exactly what it had; a publish that was interrupted half-way
(Ctrl+C between two renames) is completed before the interruption goes on, so the job's files
are all there or none is. A staging folder whose process died without cleaning up (SIGKILL, a
power cut) is removed by the next job that stages in the same folder.

The folder is created when missing; a folder the block created and left empty (the job
published nothing) is removed again, so a stopped job leaves no trace at all. A caller that
made the folder itself for this job (``made=True``: a new session folder, named by
``workspace.new_session_dir``) has it removed by the same rule.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["STAGING_PREFIX", "Staging", "is_staging", "staged"]

STAGING_PREFIX = ".keiri-staging-"


def is_staging(name: str) -> bool:
    """Whether ``name`` is a staging folder's (never a result of its own)."""
    return name.startswith(STAGING_PREFIX)


def _owner_alive(name: str) -> bool:
    """Whether the process that made the staging folder ``name`` still runs."""
    pid_text = name[len(STAGING_PREFIX) :].split("-", 1)[0]
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return True  # another job of this process (a server runs several)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep(folder: Path) -> None:
    """Remove the staging folders of processes that died without cleaning up."""
    for entry in folder.iterdir():
        if is_staging(entry.name) and entry.is_dir() and not _owner_alive(entry.name):
            shutil.rmtree(entry, ignore_errors=True)


class Staging:
    """The hidden folder a job writes into (:attr:`path`) and the folder it publishes to."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / f"{STAGING_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._moves: list[tuple[Path, Path]] = []

    def publish(self, files: Sequence[Path]) -> list[Path]:
        """Move ``files`` (paths under :attr:`path`) to the same names under the folder,
        replacing older files of those names; returns their new paths, in order. The rest of
        the staging folder is dropped when the block ends."""
        moves = []
        for path in files:
            rel = Path(path).absolute().relative_to(self.path.absolute())
            moves.append((self.path / rel, self.folder / rel))
        self._moves = moves  # from here on the job counts as done: the moves are completed
        self._complete()
        return [target for _, target in moves]

    def _complete(self) -> None:
        for source, target in self._moves:
            if source.exists():  # done already when an interrupted publish is completed
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)

    def _end(self) -> None:
        if self._moves:
            self._complete()
        shutil.rmtree(self.path, ignore_errors=True)


@contextmanager
def staged(folder: Path, *, made: bool = False) -> Iterator[Staging]:
    """A :class:`Staging` in ``folder`` (created when missing; ``made``: created by the caller
    for this job); see the module docstring."""
    created = made or not folder.exists()
    staging = Staging(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _sweep(folder)
        staging.path.mkdir(mode=0o700)
        yield staging
    finally:
        staging._end()
        if created and not staging._moves and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
