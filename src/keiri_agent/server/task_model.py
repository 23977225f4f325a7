"""A task's record: what was asked, where it lives, its status and what came of it.

``Task`` is what ``task.json`` holds (the persisted fields) plus the in-process state of a
live task (its event stream, cancel flag, sandbox executor, lease).

Statuses: ``queued`` and ``running`` are *active* (a server process holds the task);
``waiting_input`` (a plan run waiting for a person's answers) and ``interrupted`` (cut by a
server stop or crash) are *paused*: the task goes on from where it was, by
``POST .../answers``, by a restarted server (plan tasks) or by ``POST .../retry``;
``success``, ``unverified``, ``failed`` and ``cancelled`` are *finished* and never change again.
``unverified`` is an analysis that ended with a report no computed output backs (no code run
with visible output succeeded in its turn): the task has its answer and files, but is not a
success (``details.grounded`` is false).

Its times (``created_at``, ``started_at``, ``finished_at``) are stored in UTC;
:meth:`Task.local_times` is how a person reads them (``keiri_agent.localtime``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from keiri_agent.errors import ErrorCode
from keiri_agent.events import EventStream
from keiri_agent.localtime import shown_time, utc_text
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.server.errors import ApiError

__all__ = [
    "ACTIVE",
    "EVENTS_FILE",
    "FINISHED",
    "PAUSED",
    "TIME_FIELDS",
    "Releasable",
    "Task",
    "TaskStatus",
    "conflict",
    "now",
]

EVENTS_FILE = "events.jsonl"
TIME_FIELDS = ("created_at", "started_at", "finished_at")  # UTC ISO 8601 (``now``)


class TaskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    UNVERIFIED = "unverified"  # an analysis whose report no computed output backs
    FAILED = "failed"
    CANCELLED = "cancelled"
    WAITING_INPUT = "waiting_input"  # a plan run paused for a person's answers
    INTERRUPTED = "interrupted"  # cut by a server stop or crash; continues after a restart


ACTIVE = frozenset({TaskStatus.QUEUED, TaskStatus.RUNNING})
PAUSED = frozenset({TaskStatus.WAITING_INPUT, TaskStatus.INTERRUPTED})
FINISHED = frozenset(
    {TaskStatus.SUCCESS, TaskStatus.UNVERIFIED, TaskStatus.FAILED, TaskStatus.CANCELLED}
)
_PERSISTED = (
    "kind",
    "owner",
    "request",
    "created_at",
    "started_at",
    "finished_at",
    "step",
    "progress",
    "answer",
    "files",
    "error",
    "details",
    "last_event_id",
    "cancel_requested",
    "interruptions",
)


# The status an action needs -> the 409's code, message and hint when the task is not in it.
_NOT_IN = {
    TaskStatus.WAITING_INPUT: (
        ErrorCode.TASK_NOT_WAITING,
        "このタスクは入力待ちではありません（{status}）。",
        "入力待ち（waiting_input）の Plan 実行・変換にだけ回答を送れます。",
    ),
    TaskStatus.INTERRUPTED: (
        ErrorCode.TASK_NOT_INTERRUPTED,
        "このタスクは中断されていません（{status}）。",
        "サーバーの停止で中断した（interrupted）タスクだけをやり直せます。",
    ),
}


def conflict(task: Task, code: ErrorCode, message: str, hint: str) -> ApiError:
    """The 409 of an action ``task``'s status does not allow."""
    details = {"task_id": task.id, "status": str(task.status)}
    return ApiError(409, code, message, hint=hint, details=details)


def now() -> str:
    return utc_text(datetime.now(UTC), timespec="milliseconds")


class Releasable(Protocol):
    """What a running task holds its lease as (``server.store.Lease``): released at its end."""

    def release(self) -> None: ...


@dataclass
class Task:
    """One task: what was asked, where it is, and what came of it."""

    id: str
    kind: str
    directory: Path
    request: dict[str, Any]
    created_at: str
    owner: str | None = None  # the user who sent it (None: sent without a key)
    status: TaskStatus = TaskStatus.QUEUED
    started_at: str | None = None
    finished_at: str | None = None
    step: str | None = None
    progress: float = 0.0
    answer: str = ""
    files: list[str] = field(default_factory=list)  # POSIX paths relative to ``directory``
    error: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    last_event_id: int = 0
    cancel_requested: bool = False
    interruptions: int = 0  # how many times a server stop or crash cut it
    # In-process state, never persisted: the live stream (None once finished), the cancel flag.
    events: EventStream | None = field(default=None, repr=False)
    cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    executor: SandboxExecutor | None = field(default=None, repr=False)
    lease: Releasable | None = field(default=None, repr=False)
    started: bool = field(default=False, repr=False)  # a pool thread has taken it
    settled: threading.Event = field(default_factory=threading.Event, repr=False)
    # Set once a settled task's record, status and leaving are all done (what a drain awaits).
    left: threading.Event = field(default_factory=threading.Event, repr=False)
    interrupting: bool = field(default=False, repr=False)  # the server is stopping it
    error_emitted: bool = field(default=False, repr=False)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def events_path(self) -> Path:
        return self.directory / EVENTS_FILE

    def expect(self, status: TaskStatus) -> Task:
        """This task, which an action needs in ``status`` (a 409 ``TASK_NOT_…`` otherwise)."""
        if self.status != status:
            code, message, hint = _NOT_IN[status]
            raise conflict(self, code, message.format(status=self.status), hint)
        return self

    def local_times(self, zone: ZoneInfo) -> dict[str, str | None]:
        """Its times as a person in ``zone`` reads them (``2026-12-06 12:15:00 JST``), None
        for a time it does not have yet."""
        return {
            name: shown_time(value, zone) if (value := getattr(self, name)) else None
            for name in TIME_FIELDS
        }

    def to_dict(self) -> dict[str, Any]:
        data = {"task_id": self.id, "status": str(self.status)}
        return data | {name: getattr(self, name) for name in _PERSISTED}

    @classmethod
    def from_dict(cls, data: dict[str, Any], directory: Path) -> Task:
        fields = {name: data[name] for name in _PERSISTED if name in data}
        return cls(
            id=str(data["task_id"]),
            directory=directory,
            status=TaskStatus(data["status"]),
            **fields,
        )
