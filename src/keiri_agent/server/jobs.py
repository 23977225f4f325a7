"""What a task's runner works with (:class:`Job`) and what it returns (:class:`JobResult`).

Every runner -- a conversion, a plan run, its continuation, an analysis -- receives a ``Job``:
the task's event stream, directory, cancel flag, sandbox executor and settings, and returns
a ``JobResult``. :meth:`Job.note` saves facts the task needs to continue after a restart (the
plan run's id) in the task's record at once, not only when the task ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from keiri_agent.agents.convert.progress import step_progress
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventStream
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.server.inputs import FILES_DIR

__all__ = ["Job", "JobResult", "JobResultStatus", "Runner", "cancelled_error"]

JobResultStatus = Literal[
    "success", "unverified", "failed", "cancelled", "waiting_input", "interrupted"
]


@dataclass
class Job:
    """What a runner works with; everything it writes stays under ``directory``."""

    task_id: str
    directory: Path
    events: EventStream
    cancel: threading.Event
    executor: SandboxExecutor
    settings: Settings
    on_note: Callable[[Mapping[str, Any]], None] = field(default=lambda _details: None)
    owner: str | None = None  # the user who sent the task (None: a server without keys)

    @property
    def files_dir(self) -> Path:
        path = self.directory / FILES_DIR
        path.mkdir(exist_ok=True)
        return path

    def stage(self, step: str, status: str, progress: float | None = None) -> None:
        """A progress event; ``progress`` defaults to the conversion pipeline's span."""
        value = progress if progress is not None else step_progress(step, status)
        self.events.emit("stage", step=step, status=status, progress=value)

    def log(self, msg: str, level: str = "info") -> None:
        self.events.emit("log", msg=msg, level=level)

    def check_cancelled(self) -> None:
        """Raise the task's CANCELLED error once cancel was asked (an agent's steps call it)."""
        if self.cancel.is_set():
            raise cancelled_error()

    def note(self, **details: Any) -> None:
        """Merge ``details`` into the task's record and save it now."""
        self.on_note(details)


@dataclass
class JobResult:
    """How a task's run ended: its status, answer, files, error and details for the record."""

    status: JobResultStatus
    answer: str = ""
    files: list[Path] = field(default_factory=list)
    error: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)


Runner = Callable[[Job], JobResult]


def cancelled_error() -> BlockError:
    return BlockError(
        "タスクは中止されました。",
        code=ErrorCode.CANCELLED,
        hint="必要なら同じ依頼をもう一度送ってください。",
    )
