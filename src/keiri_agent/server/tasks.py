"""The task registry behind the API server: one thread and one directory per task.

A task is one request to an agent (a conversion, a plan run or an analysis; see ``runners``).
Its id is ``secrets.token_urlsafe(16)`` (128 random bits, unguessable), and everything it
produces stays in its directory::

    <KEIRI_WORKSPACE_ROOT>/tasks/<task_id>/
        task.json      status, request and result, rewritten atomically at every change
        events.jsonl   the task's event log (ids 1, 2, 3, ...): what SSE replays on reconnect
        uploads/       files uploaded with the request (the task may read these)
        files/         result files; downloads are confined to the task directory

At most ``KEIRI_MAX_RUNNING_TASKS`` tasks run at once; later ones wait in a queue (status
``queued``, and a ``stage`` event with step ``queued`` on their stream) of at most
``KEIRI_MAX_QUEUED_TASKS``, beyond which a submission is refused with 429 (``queue``).

Each task runs in its own thread with its own sandbox executor, so cancelling a task stops
exactly its sandbox processes: :meth:`TaskRegistry.cancel` sets the task's cancel event (the
runners stop at their next check, an LLM call in flight is aborted: the task runs inside
``keiri_agent.llm.cancellable``) and closes the executor, which kills a running action at
once. The task keeps running when no one is listening; a client that comes back reads the
event log. After a restart, finished tasks are read back from ``task.json``; a task that was
still running when the server stopped is marked failed, since no thread runs it any more.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any

from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import ErrorEvent, EventStream, JsonlSink, RunEvent, Stage
from keiri_agent.llm import cancellable
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.server.errors import ApiError
from keiri_agent.server.inputs import (
    MAX_PATH_CHARS,
    UPLOADS_DIR,
    TaskFiles,
    too_long,
    upload_name,
)
from keiri_agent.server.plan_task import prepare_resume
from keiri_agent.server.queue import TaskQueue
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
from keiri_agent.server.task_model import EVENTS_FILE, Task, TaskStatus, now
from keiri_agent.workspace import atomic_path, confine

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "EVENTS_FILE",
    "TASKS_DIR",
    "TASK_FILE",
    "Task",
    "TaskRegistry",
    "TaskStatus",
    "Upload",
]

TASKS_DIR = "tasks"
TASK_FILE = "task.json"
TASK_ID_RE = re.compile(r"[A-Za-z0-9_-]{16,64}")
DEFAULT_LIST_LIMIT = 100
CLOSE_JOIN_TIMEOUT_S = 10.0
Upload = tuple[str, IO[bytes]]  # (the client's file name, its content)


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
        self._queue: TaskQueue[tuple[Task, Runner]] = TaskQueue(
            self.settings.keiri_max_running_tasks, self.settings.keiri_max_queued_tasks
        )

    # --- creating and running -----------------------------------------------------------------

    def submit(
        self,
        request: ConvertRequest | PlanRequest | AnalysisRequest,
        uploads: Sequence[Upload] = (),
    ) -> Task:
        """Check ``request`` (with the files uploaded with it), create its task and start or
        queue it; returns at once."""
        return self._create(
            request.kind,
            request.model_dump(mode="json"),
            lambda files: prepare(request, self.settings, files),
            uploads,
        )

    def answer(
        self, task_id: str, answers: Mapping[str, Any], uploads: Sequence[Upload] = ()
    ) -> Task:
        """Continue a plan run that waits for input: a new task that resumes it."""
        paused = self.get(task_id)
        if paused.status != TaskStatus.WAITING_INPUT:
            raise ApiError(
                409,
                "TASK_NOT_WAITING",
                f"このタスクは入力待ちではありません（{paused.status}）。",
                hint="入力待ち（waiting_input）の Plan 実行にだけ回答を送れます。",
                details={"task_id": task_id, "status": str(paused.status)},
            )
        request = {"kind": "plan", "resume_of": paused.id, "plan": paused.request.get("plan")}
        return self._create(
            "plan",
            request,
            lambda files: prepare_resume(paused.details, answers, self.settings, files),
            uploads,
        )

    def start(self, kind: str, request: dict[str, Any], runner: Runner) -> Task:
        """Run ``runner`` as a new task of ``kind`` (``request`` is what it records as asked)."""
        return self._create(kind, request, lambda _files: runner, ())

    def _create(
        self,
        kind: str,
        request: dict[str, Any],
        prepare_runner: Callable[[TaskFiles], Runner],
        uploads: Sequence[Upload],
    ) -> Task:
        runs_now = self._queue.reserve()  # 429 before anything is created
        self.root.mkdir(parents=True, exist_ok=True)
        task_id = secrets.token_urlsafe(16)
        directory = self.root / task_id
        directory.mkdir()
        try:
            files = TaskFiles(
                Path(self.settings.keiri_workspace_root).absolute(), directory / UPLOADS_DIR
            )
            names = _save_uploads(files.uploads, uploads)
            runner = prepare_runner(files)
        except BaseException:
            self._queue.release(runs_now)
            shutil.rmtree(directory, ignore_errors=True)  # a refused request leaves nothing
            raise
        stream = EventStream(
            task_id,
            f"{TASKS_DIR}/{task_id}",
            sink=JsonlSink(directory / EVENTS_FILE, exclusive=True),
        )
        if names:
            request = {**request, "uploads": names}
        task = Task(
            id=task_id,
            kind=kind,
            directory=directory,
            request=request,
            created_at=now(),
            events=stream,
        )
        stream.add_listener(partial(self._observe, task))
        self._persist(task)
        with self._lock:
            self._tasks[task_id] = task
        position = 0 if runs_now else self._queue.enqueue((task, runner))
        if position:
            stream.emit("stage", step="queued", status="waiting", progress=0.0)
            stream.emit(
                "log", msg=f"順番待ちです（{position} 番目）。実行中のタスクが終わると始まります。"
            )
        else:
            self._launch(task, runner)
        return task

    def _launch(self, task: Task, runner: Runner) -> None:
        task.thread = threading.Thread(
            target=self._work, args=(task, runner), name=f"keiri-task-{task.id[:8]}", daemon=True
        )
        task.thread.start()

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
        try:
            self._run(task, runner)
        finally:
            following = self._queue.done()
            if following is not None:
                self._launch(*following)

    def _run(self, task: Task, runner: Runner) -> None:
        assert task.events is not None
        executor = task.executor = self._executor_factory()
        task.status, task.started_at = TaskStatus.RUNNING, now()
        self._persist(task)
        job = Job(task.id, task.directory, task.events, task.cancel, executor, self.settings)
        files: list[str] = []
        try:
            if task.cancel.is_set():
                raise cancelled_error()
            with cancellable(task.cancel):  # an LLM call in flight is aborted on cancel
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
            task.status, task.finished_at = TaskStatus(outcome.status), now()
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
            task.status, task.finished_at = TaskStatus.FAILED, now()
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
        missing = ApiError(
            404,
            "FILE_NOT_FOUND",
            f"タスクにファイル「{path[:200]}」はありません。",
            hint="GET /agent/tasks/{task_id} の files に載っているパスを指定してください。",
            details={"task_id": task_id, "path": path[:200]},
        )
        if too_long(path):  # no such file can exist; the OS would answer ENAMETOOLONG
            missing.details["max_path_chars"] = MAX_PATH_CHARS
            raise missing
        real = confine(task.directory, path)  # PathEscapeError for '..', absolute, symlinks out
        try:
            if not real.is_file():
                raise missing
        except OSError:
            raise missing from None
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
        if self._queue.remove(lambda item: item[0] is task):  # never started: ends here
            self._finish(task, Outcome("cancelled", error=cancelled_error().to_dict()), [])
        elif task.executor is not None:
            task.executor.close()  # kills the running action; the runner then sees the cancel
        return task

    def close(self, timeout: float = CLOSE_JOIN_TIMEOUT_S) -> None:
        """Cancel the tasks still running and wait for them (at server shutdown)."""
        with self._lock:
            unfinished = [t for t in self._tasks.values() if not t.finished]
        for task in unfinished:  # queued ones too: one that gets a slot now stops at once
            task.cancel.set()
        running = [t for t in unfinished if t.thread is not None]
        for task in running:
            task.cancel.set()
            if task.executor is not None:
                task.executor.close()
        for task in running:
            assert task.thread is not None
            task.thread.join(timeout)


def _save_uploads(target: Path, uploads: Sequence[Upload]) -> list[str]:
    """Store the uploaded files under ``target`` by their base names; returns the names."""
    names: list[str] = []
    for raw_name, content in uploads:
        name = upload_name(raw_name)
        if name in names:
            raise BlockError(
                f"同じ名前のファイル「{name}」が 2 つアップロードされました。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="ファイル名を変えて送り直してください。",
                details={"filename": name},
            )
        target.mkdir(exist_ok=True)
        with (target / name).open("xb") as out:
            shutil.copyfileobj(content, out)
        names.append(name)
    return names
