"""A task's record: what was asked, where it lives, its status and what came of it.

``Task`` is what ``task.json`` holds (the persisted fields) plus the in-process state of a
live task (its event stream, cancel flag, sandbox executor, thread). ``waiting_input`` is a
final status of its own: a plan run that waits for a person; answers start a new task that
continues it (``plan_task``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from keiri_agent.events import EventStream
from keiri_agent.sandbox import SandboxExecutor

__all__ = ["EVENTS_FILE", "FINISHED", "Task", "TaskStatus", "now"]

EVENTS_FILE = "events.jsonl"


class TaskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    CANCELLED = "cancelled"
    WAITING_INPUT = "waiting_input"  # a plan run paused for a person's answers


FINISHED = frozenset(
    {TaskStatus.SUCCESS, TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.WAITING_INPUT}
)
_PERSISTED = (
    "kind",
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
)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Task:
    """One task: what was asked, where it is, and what came of it."""

    id: str
    kind: str
    directory: Path
    request: dict[str, Any]
    created_at: str
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
    # In-process state, never persisted: the live stream (None once finished), the cancel flag.
    events: EventStream | None = field(default=None, repr=False)
    cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    executor: SandboxExecutor | None = field(default=None, repr=False)
    thread: threading.Thread | None = field(default=None, repr=False)
    error_emitted: bool = field(default=False, repr=False)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def events_path(self) -> Path:
        return self.directory / EVENTS_FILE

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
