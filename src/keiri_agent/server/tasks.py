"""The task registry behind the API server: tasks created, run, paused, continued and found.

A task is one request to an agent (a conversion, a plan run or an analysis; see ``runners``).
Its id is ``secrets.token_urlsafe(16)`` (128 random bits, unguessable); its record and files
live in its directory (``store``), and only queued and running tasks are held in memory.

At most ``KEIRI_MAX_RUNNING_TASKS`` tasks run at once, on a pool of as many threads; later ones
wait in a queue (status ``queued``, and a ``stage`` event with step ``queued`` on their stream)
of at most ``KEIRI_MAX_QUEUED_TASKS``, beyond which a submission is refused with 429; one user
holds at most ``KEIRI_MAX_TASKS_PER_USER`` of these places, continuations included (``queue``).

Each task runs with its own sandbox executor, so cancelling a task stops exactly its sandbox
processes: :meth:`TaskRegistry.cancel` sets the task's cancel event (the runners stop at their
next check, an LLM call in flight is aborted: the task runs inside
``keiri_agent.llm.cancellable``) and closes the executor, which kills a running action at
once. The task keeps running when no one is listening; a client that comes back reads the
event log.

A paused task (``waiting_input``, ``interrupted``) continues in place: same id, same event log
(ids go on where they stopped), same directory -- by answers (:meth:`TaskRegistry.answer`), by
a retry (:meth:`TaskRegistry.retry`), or by a restarted server (``lifecycle``). Server stops and
restarts are in ``lifecycle``.
"""

from __future__ import annotations

import logging
import secrets
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any

from pydantic import TypeAdapter, ValidationError

from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import ErrorCode, PathEscapeError, input_error
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.server.errors import ApiError
from keiri_agent.server.execution import TaskObserver, TaskRuntime
from keiri_agent.server.inputs import (
    MAX_PATH_CHARS,
    UPLOADS_DIR,
    TaskFiles,
    shared_folders,
    task_files,
    too_long,
    upload_name,
)
from keiri_agent.server.plan_task import prepare_resume, prepare_retry
from keiri_agent.server.runners import (
    AnalysisRequest,
    ConvertRequest,
    Job,
    JobResult,
    PlanRequest,
    Runner,
    TaskRequest,
    cancelled_error,
    prepare,
    prepare_convert_answer,
)
from keiri_agent.server.store import (
    TASK_FILE,
    TASKS_DIR,
    Lease,
    TaskStore,
    not_found,
)
from keiri_agent.server.task_model import EVENTS_FILE, Task, TaskStatus, conflict, now
from keiri_agent.server.tasklog import open_task_log, sync_new
from keiri_agent.workspace import confine

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "EVENTS_FILE",
    "TASKS_DIR",
    "TASK_FILE",
    "Task",
    "TaskObserver",
    "TaskRegistry",
    "TaskStatus",
    "Upload",
    "not_found",
    "result_file",
    "shutting_down",
]

DEFAULT_LIST_LIMIT = 100
Upload = tuple[str, IO[bytes]]  # (the client's file name, its content)
_REQUEST: TypeAdapter[Any] = TypeAdapter(TaskRequest)
log = logging.getLogger(__name__)


def shutting_down() -> ApiError:
    return ApiError(
        503,
        ErrorCode.SERVER_STOPPING,
        "サーバーは停止処理中のため、新しい処理を受け付けていません。",
        hint="再起動の後で送り直してください（中断したタスクは再起動後に続きから再開します）。",
        headers={"Retry-After": "10"},
    )


class TaskRegistry:
    """Creates, runs, finds, lists, continues and cancels tasks; thread-safe."""

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
        self.store = TaskStore(self.root, fsync=self.settings.keiri_run_log_fsync)
        # What every task may read besides its own files (checked now: a wrong one stops the start).
        self.shared = shared_folders(self.settings, self.root)
        self.stopping = threading.Event()  # set when the server starts to stop
        self.runtime = TaskRuntime(self.settings, self.store, executor_factory)
        self.observers = self.runtime.observers
        self._lock = threading.Lock()  # one continuation of a paused task at a time

    # --- creating -----------------------------------------------------------------------------

    def submit(
        self,
        request: ConvertRequest | PlanRequest | AnalysisRequest,
        uploads: Sequence[Upload] = (),
        owner: str | None = None,
    ) -> Task:
        """Check ``request`` (with the files uploaded with it), create its task and start or
        queue it; returns at once."""
        return self._create(
            request.kind,
            request.model_dump(mode="json"),
            lambda files: prepare(request, self.settings, files),
            uploads,
            owner,
        )

    def start(
        self, kind: str, request: dict[str, Any], runner: Runner, owner: str | None = None
    ) -> Task:
        """Run ``runner`` as a new task of ``kind`` (``request`` is what it records as asked)."""
        return self._create(kind, request, lambda _files: runner, (), owner)

    def _files(self, directory: Path) -> TaskFiles:
        return task_files(directory, self.settings, self.shared)

    def _create(
        self,
        kind: str,
        request: dict[str, Any],
        prepare_runner: Callable[[TaskFiles], Runner],
        uploads: Sequence[Upload],
        owner: str | None,
    ) -> Task:
        if self.stopping.is_set():
            raise shutting_down()
        runs_now = self.runtime.queue.reserve(owner)  # 429 before anything is created
        self.root.mkdir(parents=True, exist_ok=True)
        task_id = secrets.token_urlsafe(16)
        directory = self.root / task_id
        directory.mkdir()
        try:
            files = self._files(directory)
            names = _save_uploads(files.uploads, uploads)
            made = files.uploads if names else directory  # on disk up to its entry in tasks/
            sync_new(made, names, up_to=self.root.parent, settings=self.settings)
            runner = prepare_runner(files)
            lease = Lease.take(directory)
            assert lease is not None  # a directory made just now
        except BaseException:
            self.runtime.queue.release(owner, runs_now)
            shutil.rmtree(directory, ignore_errors=True)  # a refused request leaves nothing
            raise
        if names:
            request = {**request, "uploads": names}
        task = Task(id=task_id, kind=kind, directory=directory, request=request, created_at=now())
        task.owner, task.lease = owner, lease
        log.info("タスクを受け付けました（%s）", kind, extra={"task_id": task_id})
        self.runtime.enter(task, runner, runs_now)
        return task

    # --- continuing a paused task -------------------------------------------------------------

    def answer(
        self,
        task_id: str,
        answers: Mapping[str, Any],
        uploads: Sequence[Upload] = (),
        *,
        text: str | None = None,
    ) -> Task:
        """Continue a task that waits for input: a plan task with ``answers`` resumes its plan
        run (finished nodes are reused); a conversion paused on CodeAct's question goes on with
        the answer ``text``."""
        if self.stopping.is_set():  # refused before an upload is stored
            raise shutting_down()
        task = self.get(task_id).expect(TaskStatus.WAITING_INPUT)
        files = self._files(task.directory)
        before = list(task.request.get("uploads", []))
        added = _save_uploads(files.uploads, uploads, keep=before)
        try:
            if added:
                sync_new(files.uploads, added, up_to=task.directory, settings=self.settings)
            if task.kind == "convert":  # CodeAct's question: one text answer
                runner = prepare_convert_answer(task.details, text)
                received = "CodeAct の質問"
            else:
                runner = prepare_resume(task.details, answers, self.settings, files)
                received = ", ".join(answers)
            if added:
                task.request = {**task.request, "uploads": [*before, *added]}
            return self.resume(task, runner, f"回答を受け取りました（{received}）。")
        except BaseException:
            for name in added:  # a refused answer leaves nothing behind
                (files.uploads / name).unlink(missing_ok=True)
            raise

    def retry(self, task_id: str) -> Task:
        """Run an interrupted task again: a plan task continues its run, others start over."""
        if self.stopping.is_set():  # refused before the interrupted attempt's files are removed
            raise shutting_down()
        task = self.get(task_id).expect(TaskStatus.INTERRUPTED)
        return self.resume(task, self.runner_for(task), "中断したタスクを再開します。")

    def runner_for(self, task: Task) -> Runner:
        """What continues ``task``: its plan run from the log (with the :class:`PlanEnv` built
        now, so a plan config that cannot be read, or a version the run started with whose
        approval was withdrawn, refuses the retry before the task moves), or its request from
        the start."""
        if task.kind == "plan" and task.details.get("run_id"):
            return prepare_retry(task.details, self.settings, self._files(task.directory))
        request = {k: v for k, v in task.request.items() if k != "uploads"}
        try:
            parsed = _REQUEST.validate_python(request)
        except ValidationError:
            raise conflict(
                task,
                ErrorCode.TASK_NOT_RETRYABLE,
                f"この種類のタスク（{task.kind}）はやり直せません。",
                "同じ依頼を POST /agent/run で送り直してください。",
            ) from None
        runner = prepare(parsed, self.settings, self._files(task.directory))
        # A fresh start: the interrupted attempt's files go once it starts, not before (a retry
        # refused by a full queue or a stopping server leaves the task as it was).
        return runner if task.kind == "plan" else partial(_start_over, runner)

    def resume(self, task: Task, runner: Runner, message: str) -> Task:
        """Put a paused task back in the queue with ``runner``; its event log goes on."""
        if self.stopping.is_set():
            raise shutting_down()
        with self._lock:
            if self.runtime.get(task.id) is not None:
                raise conflict(
                    task,
                    ErrorCode.TASK_ACTIVE,
                    "このタスクは既に実行中です。",
                    "終わるまで待ってください。",
                )
            lease = Lease.take(task.directory)
            if lease is None:
                raise conflict(
                    task,
                    ErrorCode.TASK_ACTIVE,
                    "このタスクは別のサーバープロセスが実行中です。",
                    "そのプロセスが終わるまで待ってください。",
                )
            try:
                runs_now = self.runtime.queue.reserve(task.owner)
            except ApiError:
                lease.release()
                raise
            task.lease = lease
            task.status, task.error, task.finished_at = TaskStatus.QUEUED, None, None
            task.cancel, task.settled = threading.Event(), threading.Event()
            task.left = threading.Event()
            task.interrupting = task.started = task.error_emitted = False
            log.info("タスクを再開します", extra={"task_id": task.id})
            self.runtime.enter(task, runner, runs_now, message)
        return task

    # --- finding ------------------------------------------------------------------------------

    def get(self, task_id: str) -> Task:
        """The task with this id: live from memory, else read from disk; 404 ApiError if none."""
        task = self.runtime.get(task_id)
        return task if task is not None else self.store.load(task_id)

    @property
    def queue_length(self) -> int:
        return self.runtime.queue.waiting

    def list(
        self, limit: int = DEFAULT_LIST_LIMIT, visible: Callable[[Task], bool] = lambda _t: True
    ) -> list[Task]:
        """The newest ``limit`` tasks ``visible`` accepts, newest first."""
        live = {task.id: task for task in self.runtime.live()}
        tasks = list(live.values())
        tasks += [t for t in self.store.records() if t.id not in live]
        tasks = [t for t in tasks if visible(t)]
        tasks.sort(key=lambda t: t.created_at, reverse=True)
        return tasks[:limit]

    def file(self, task_id: str, path: str) -> Path:
        """A result file of a task: ``path`` must stay inside the task's directory."""
        return result_file(self.get(task_id), path)

    # --- stopping -----------------------------------------------------------------------------

    def cancel(self, task_id: str) -> Task:
        """Stop a task: a running one at once (its sandbox processes are killed), a queued or
        paused one before it goes on; 409 if it has finished."""
        task = self.get(task_id)
        if task.finished:
            raise conflict(
                task,
                ErrorCode.TASK_FINISHED,
                f"タスクは既に終了しています（{task.status}）。",
                "終了したタスクは中止できません。",
            )
        if not task.active:  # paused: nothing runs; it ends here
            self._cancel_paused(task)
            return task
        task.cancel.set()
        task.cancel_requested = True
        self.runtime.persist(task)
        if self.runtime.queue.remove(lambda item: item[0] is task):  # never started: ends here
            self.runtime.finish(task, JobResult("cancelled", error=cancelled_error().to_dict()), [])
        elif task.executor is not None:
            task.executor.close()  # kills the running action; the runner then sees the cancel
        return task

    def append_event(self, task: Task, kind: str, **fields: Any) -> None:
        """Add one event to the log of a task that is not active (no live stream); on disk
        when this returns (closing the log syncs it)."""
        with open_task_log(task, self.settings) as stream:
            task.last_event_id = stream.emit(kind, **fields).id

    def _cancel_paused(self, task: Task) -> None:
        self.append_event(task, "log", msg="タスクを中止しました。", level="warning")
        task.cancel_requested = True
        task.status, task.finished_at = TaskStatus.CANCELLED, now()
        task.error = cancelled_error().to_dict()
        self.runtime.persist(task)
        shutil.rmtree(task.directory / UPLOADS_DIR, ignore_errors=True)
        self.runtime.notify_status(task)


def result_file(task: Task, path: str) -> Path:
    """A file of ``task``: ``path`` must stay inside the task's directory; 404 if none."""
    missing = ApiError(
        404,
        ErrorCode.FILE_NOT_FOUND,
        f"タスクにファイル「{path[:200]}」はありません。",
        hint="GET /agent/tasks/{task_id} の files に載っているパスを指定してください。",
        details={"task_id": task.id, "path": path[:200]},
    )
    if too_long(path):  # no such file can exist; the OS would answer ENAMETOOLONG
        missing.details["max_path_chars"] = MAX_PATH_CHARS
        raise missing
    try:
        real = confine(task.directory, path)  # '..', absolute, symlinks out
    except PathEscapeError as exc:  # said without the task's folder on the server
        raise PathEscapeError(
            f"パス「{path[:200]}」はタスクのファイルを指していません。",
            hint="GET /agent/tasks/{task_id} の files に載っているパスを指定してください。",
            details={"task_id": task.id, "path": path[:200], "reason": exc.details.get("reason")},
        ) from None
    try:
        if not real.is_file():
            raise missing
    except OSError:
        raise missing from None
    return real


def _start_over(runner: Runner, job: Job) -> JobResult:
    """Run ``runner`` from the start, without the result files of an earlier attempt."""
    shutil.rmtree(job.directory / "files", ignore_errors=True)
    return runner(job)


def _save_uploads(target: Path, uploads: Sequence[Upload], keep: Iterable[str] = ()) -> list[str]:
    """Store the uploaded files under ``target`` by their base names; returns the names.
    A name already taken (by ``keep`` or another upload) is refused."""
    names: list[str] = []
    taken = set(keep)
    for raw_name, content in uploads:
        name = upload_name(raw_name)
        if name in names or name in taken:
            for done in names:
                (target / done).unlink(missing_ok=True)
            raise input_error(
                f"同じ名前のファイル「{name}」が 2 つアップロードされました。",
                "ファイル名を変えて送り直してください。",
                filename=name,
            )
        target.mkdir(exist_ok=True)
        with (target / name).open("xb") as out:
            shutil.copyfileobj(content, out)
        names.append(name)
    return names
