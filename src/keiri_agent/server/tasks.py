"""The task registry behind the API server: one thread and one directory per task.

A task is one request to an agent (a conversion, a plan run or an analysis; see ``runners``).
Its id is ``secrets.token_urlsafe(16)`` (128 random bits, unguessable), and everything it
produces stays in its directory::

    <KEIRI_WORKSPACE_ROOT>/tasks/<task_id>/
        task.json      status, request and result, rewritten atomically at every change
        events.jsonl   the task's event log (ids 1, 2, 3, ...): what SSE replays on reconnect
        files/         result files; downloads are confined to the task directory

Each task runs in its own thread with its own sandbox executor, so cancelling a task stops
exactly its sandbox processes: :meth:`TaskRegistry.cancel` sets the task's cancel event (the
runners stop at their next check) and closes the executor, which kills a running action at
once. The task keeps running when no one is listening; a client that comes back reads the
event log. After a restart, finished tasks are read back from ``task.json``; a task that was
still running when the server stopped is marked failed, since no thread runs it any more.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import ErrorEvent, EventStream, JsonlSink, RunEvent, Stage
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.server.errors import ApiError
from keiri_agent.server.runners import (
    AnalysisRequest,
    ConvertRequest,
    Job,
    Outcome,
    PlanRequest,
    Runner,
    cancelled_error,
    prepare,
)
from keiri_agent.workspace import atomic_path, confine

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "EVENTS_FILE",
    "TASKS_DIR",
    "TASK_FILE",
    "Task",
    "TaskRegistry",
    "TaskStatus",
]

TASKS_DIR = "tasks"
TASK_FILE = "task.json"
EVENTS_FILE = "events.jsonl"
TASK_ID_RE = re.compile(r"[A-Za-z0-9_-]{16,64}")
DEFAULT_LIST_LIMIT = 100
CLOSE_JOIN_TIMEOUT_S = 10.0


class TaskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    CANCELLED = "cancelled"


FINISHED = frozenset({TaskStatus.SUCCESS, TaskStatus.FAILED, TaskStatus.CANCELLED})
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


def _now() -> str:
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


def _complete_lines(path: Path) -> int:
    """The number of whole lines (events) in a log a stopped process may have cut short."""
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _not_found(task_id: str) -> ApiError:
    return ApiError(
        404,
        "TASK_NOT_FOUND",
        "指定されたタスクはありません。",
        hint="task_id を確認してください。タスクの一覧は GET /agent/tasks で見られます。",
        details={"task_id": task_id[:80]},
    )


class TaskRegistry:
    """Creates, runs, finds, lists and cancels tasks; thread-safe."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        root: Path | None = None,
        executor_factory: Callable[[], SandboxExecutor] = SandboxExecutor,
    ) -> None:
        self.settings = settings or load_settings()
        base = root or Path(self.settings.keiri_workspace_root) / TASKS_DIR
        self.root = base.absolute()
        self._executor_factory = executor_factory
        self._tasks: dict[str, Task] = {}
        self._lock = threading.Lock()

    # --- creating and running -----------------------------------------------------------------

    def submit(self, request: ConvertRequest | PlanRequest | AnalysisRequest) -> Task:
        """Check ``request``, create its task and start it; returns at once."""
        runner = prepare(request, self.settings)
        return self.start(request.kind, request.model_dump(mode="json"), runner)

    def start(self, kind: str, request: dict[str, Any], runner: Runner) -> Task:
        """Run ``runner`` as a new task of ``kind`` (``request`` is what it records as asked)."""
        self.root.mkdir(parents=True, exist_ok=True)
        task_id = secrets.token_urlsafe(16)
        directory = self.root / task_id
        directory.mkdir()
        stream = EventStream(
            task_id,
            f"{TASKS_DIR}/{task_id}",
            sink=JsonlSink(directory / EVENTS_FILE, exclusive=True),
        )
        task = Task(
            id=task_id,
            kind=kind,
            directory=directory,
            request=request,
            created_at=_now(),
            events=stream,
        )
        stream.add_listener(partial(self._observe, task))
        self._persist(task)
        task.thread = threading.Thread(
            target=self._work, args=(task, runner), name=f"keiri-task-{task_id[:8]}", daemon=True
        )
        with self._lock:
            self._tasks[task_id] = task
        task.thread.start()
        return task

    @staticmethod
    def _observe(task: Task, event: RunEvent) -> None:
        task.last_event_id = event.id
        if isinstance(event, Stage):
            task.step = event.step
            if event.progress is not None:
                task.progress = event.progress
        elif isinstance(event, ErrorEvent):
            task.error_emitted = True

    def _work(self, task: Task, runner: Runner) -> None:
        assert task.events is not None
        executor = task.executor = self._executor_factory()
        task.status, task.started_at = TaskStatus.RUNNING, _now()
        self._persist(task)
        job = Job(task.id, task.directory, task.events, task.cancel, executor, self.settings)
        files: list[str] = []
        try:
            if task.cancel.is_set():
                raise cancelled_error()
            outcome = runner(job)
            files = [self._relative(task, path) for path in outcome.files]
        except BlockError as exc:
            outcome = Outcome("failed", error=exc.to_dict())
        except Exception as exc:  # a bug in a runner: reported to the client, never swallowed
            error = BlockError(
                f"タスクの実行中に予期しないエラーが起きました: {type(exc).__name__}: {exc}",
                code=ErrorCode.INTERNAL_ERROR,
                hint="サーバーのログを確認し、不具合として報告してください。",
            )
            outcome = Outcome("failed", error=error.to_dict())
        finally:
            executor.close()
        if task.cancel.is_set() and outcome.status != "success":
            outcome = Outcome(
                "cancelled", error=cancelled_error().to_dict(), details=outcome.details
            )
        self._finish(task, outcome, files)

    def _finish(self, task: Task, outcome: Outcome, files: list[str]) -> None:
        stream = task.events
        assert stream is not None
        try:
            if outcome.status == "failed" and outcome.error and not task.error_emitted:
                message = str(outcome.error.get("message", ""))
                stream.emit("error", step=task.step, message=message, error=outcome.error)
            elif outcome.status == "cancelled":
                stream.emit("log", msg="タスクを中止しました。", level="warning")
            task.answer = outcome.answer
            task.files = files
            task.error = outcome.error
            task.details = outcome.details
            task.status, task.finished_at = TaskStatus(outcome.status), _now()
            if task.status == TaskStatus.SUCCESS:
                task.progress = 1.0
            self._persist(task)  # the final status is on disk before subscribers see the end
        finally:
            stream.close()  # whatever happened, subscribers are released
            task.events = None  # from now on SSE replays from the log on disk

    @staticmethod
    def _relative(task: Task, path: Path) -> str:
        real = confine(task.directory, path, allow_absolute_inside=True)
        return real.relative_to(task.directory.resolve()).as_posix()

    def _persist(self, task: Task) -> None:
        text = json.dumps(task.to_dict(), ensure_ascii=False, indent=2)
        with self._lock, atomic_path(task.directory / TASK_FILE) as tmp:
            tmp.write_text(text, encoding="utf-8")

    # --- finding ------------------------------------------------------------------------------

    def get(self, task_id: str) -> Task:
        """The task with this id, from memory or from its directory; 404 ApiError if none."""
        if not TASK_ID_RE.fullmatch(task_id):
            raise _not_found(task_id)
        with self._lock:
            task = self._tasks.get(task_id)
        if task is not None:
            return task
        task = self._load(task_id)
        with self._lock:
            return self._tasks.setdefault(task_id, task)

    def _load(self, task_id: str) -> Task:
        directory = self.root / task_id
        try:
            data = json.loads((directory / TASK_FILE).read_text(encoding="utf-8"))
            task = Task.from_dict(data, directory)
        except FileNotFoundError:
            raise _not_found(task_id) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise BlockError(
                f"タスク {task_id} の記録（{TASK_FILE}）を読み取れません: {exc}",
                code=ErrorCode.INTERNAL_ERROR,
                hint="ファイルが壊れている可能性があります。タスクのディレクトリを確認してください。",
                details={"task_id": task_id},
            ) from exc
        if not task.finished:  # it was running in a server process that has stopped
            task.last_event_id = _complete_lines(task.events_path)
            task.status, task.finished_at = TaskStatus.FAILED, _now()
            task.error = BlockError(
                "サーバーが停止したため、タスクは途中で終わりました。",
                code=ErrorCode.INTERNAL_ERROR,
                hint="同じ依頼をもう一度送ってください。",
            ).to_dict()
            self._persist(task)
        return task

    def list(self, limit: int = DEFAULT_LIST_LIMIT) -> list[Task]:
        """The newest ``limit`` tasks, in memory or on disk, newest first."""
        ids = set()
        if self.root.is_dir():
            ids = {p.parent.name for p in self.root.glob(f"*/{TASK_FILE}")}
        with self._lock:
            ids |= set(self._tasks)
        tasks = []
        for task_id in ids:
            try:
                tasks.append(self.get(task_id))
            except BlockError:
                continue  # a directory that is not a readable task is not listed
        tasks.sort(key=lambda t: t.created_at, reverse=True)
        return tasks[:limit]

    def file(self, task_id: str, path: str) -> Path:
        """A result file of a task: ``path`` must stay inside the task's directory."""
        task = self.get(task_id)
        real = confine(task.directory, path)  # PathEscapeError for '..', absolute, symlinks out
        if not real.is_file():
            raise ApiError(
                404,
                "FILE_NOT_FOUND",
                f"タスクにファイル「{path}」はありません。",
                hint="GET /agent/tasks/{task_id} の files に載っているパスを指定してください。",
                details={"task_id": task_id, "path": path[:200]},
            )
        return real

    # --- stopping -----------------------------------------------------------------------------

    def cancel(self, task_id: str) -> Task:
        """Ask a running task to stop and kill its sandbox processes now; 409 if finished."""
        task = self.get(task_id)
        if task.finished:
            raise ApiError(
                409,
                "TASK_FINISHED",
                f"タスクは既に終了しています（{task.status}）。",
                hint="終了したタスクは中止できません。",
                details={"task_id": task_id, "status": str(task.status)},
            )
        task.cancel.set()
        task.cancel_requested = True
        self._persist(task)
        if task.executor is not None:
            task.executor.close()  # kills the running action; the runner then sees the cancel
        return task

    def close(self, timeout: float = CLOSE_JOIN_TIMEOUT_S) -> None:
        """Cancel the tasks still running and wait for them (at server shutdown)."""
        with self._lock:
            running = [t for t in self._tasks.values() if not t.finished and t.thread is not None]
        for task in running:
            task.cancel.set()
            if task.executor is not None:
                task.executor.close()
        for task in running:
            assert task.thread is not None
            task.thread.join(timeout)
