"""Tasks on disk: one directory per task, its record, and the lease of the process running it.

::

    <KEIRI_WORKSPACE_ROOT>/tasks/<task_id>/
        task.json      status, owner, request and result, rewritten atomically at every change
        events.jsonl   the task's event log (ids 1, 2, 3, ...): what SSE replays on reconnect
        lease          locked (``flock``) by the server process while the task is queued or runs
        answers.json   answers a plan task was given (``plan_task``)
        uploads/       files uploaded with the request; removed once the task has ended
        files/         result files; downloads are confined to the task directory

The disk is the truth: only tasks that are queued or running live in memory (the registry's
table, bounded by the queue limits); every other task is read back from ``task.json`` when asked
for, so a server that has seen thousands of tasks holds none of them.

The lease is how a restarted server tells a task cut short from one another process is running:
the operating system drops an ``flock`` when its process ends, however it ends (SIGKILL
included), so a task whose record says ``queued`` or ``running`` but whose lease can be taken
belongs to no live process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of
from keiri_agent.server.errors import ApiError
from keiri_agent.server.task_model import Task
from keiri_agent.workspace import atomic_path

__all__ = ["LEASE_FILE", "TASKS_DIR", "TASK_FILE", "TASK_ID_RE", "Lease", "TaskStore", "not_found"]

TASKS_DIR = "tasks"
TASK_FILE = "task.json"
LEASE_FILE = "lease"
TASK_ID_RE = re.compile(r"[A-Za-z0-9_-]{16,64}")


def not_found(task_id: str) -> ApiError:
    return ApiError(
        404,
        ErrorCode.TASK_NOT_FOUND,
        "指定されたタスクはありません。",
        hint="task_id を確認してください。タスクの一覧は GET /agent/tasks で見られます。",
        details={"task_id": task_id[:80]},
    )


class Lease:
    """An exclusive ``flock`` on a task's lease file, held while this process runs the task."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def take(cls, directory: Path) -> Lease | None:
        """The lease of the task in ``directory``, or None if a live process holds it."""
        fd = os.open(directory / LEASE_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return cls(fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the lock
            self._fd = None


class TaskStore:
    """Reads and writes task records under ``root``; thread-safe (atomic replaces).
    ``fsync``: a saved record is on disk when :meth:`save` returns (``KEIRI_RUN_LOG_FSYNC``)."""

    def __init__(self, root: Path, *, fsync: bool = False) -> None:
        self.root = root
        self.fsync = fsync

    def directory(self, task_id: str) -> Path:
        return self.root / task_id

    def save(self, task: Task) -> None:
        text = json.dumps(task.to_dict(), ensure_ascii=False, indent=2)
        with atomic_path(task.directory / TASK_FILE, durable=self.fsync) as tmp:
            tmp.write_text(text, encoding="utf-8")

    def load(self, task_id: str) -> Task:
        """The task's record from disk; 404 ApiError if there is none."""
        if not TASK_ID_RE.fullmatch(task_id):
            raise not_found(task_id)
        directory = self.directory(task_id)
        try:
            data = json.loads((directory / TASK_FILE).read_text(encoding="utf-8"))
            return Task.from_dict(data, directory)
        except FileNotFoundError:
            raise not_found(task_id) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise BlockError(
                f"タスク {task_id} の記録（{TASK_FILE}）を読み取れません: {reason_of(exc)}",
                code=ErrorCode.INTERNAL_ERROR,
                hint="ファイルが壊れている可能性があります。タスクのディレクトリを確認してください。",
                details={"task_id": task_id, "cause": cause_of(exc)},
            ) from exc

    def ids(self) -> list[str]:
        """The ids of every task with a record."""
        if not self.root.is_dir():
            return []
        return [p.parent.name for p in self.root.glob(f"*/{TASK_FILE}")]

    def records(self) -> Iterator[Task]:
        """Every readable task record (unreadable ones are skipped)."""
        for task_id in self.ids():
            with contextlib.suppress(BlockError):
                yield self.load(task_id)


COUNT_BLOCK = 1 << 20


def complete_lines(path: Path) -> int:
    """The number of whole lines in a log; a line a killed process left half-written is cut
    off, so that the next event starts on a line of its own."""
    try:
        file = path.open("r+b")
    except FileNotFoundError:
        return 0
    with file:  # read in blocks: a long run's log is never held whole
        lines = end = offset = 0
        while block := file.read(COUNT_BLOCK):
            found = block.count(b"\n")
            if found:
                lines += found
                end = offset + block.rfind(b"\n") + 1
            offset += len(block)
        if end < offset:
            file.truncate(end)
    return lines
