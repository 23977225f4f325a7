"""Running tasks in this process: the pool of task threads, the queue, live streams, settling.

:class:`TaskRuntime` holds the tasks that are queued or running here (and only those: a task
leaves memory when it settles), runs each on a pool of ``KEIRI_MAX_RUNNING_TASKS`` threads with
its own sandbox executor, turns what its runner returns into the task's new status, and tells
observers (metrics) of every event and status change. A settled task's lease is released and,
once it has finished for good, its uploads are removed. A status change reaches the disk (the
log, then the record: ``tasklog``) before anyone can read it.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of
from keiri_agent.events import RunEvent, Stage
from keiri_agent.llm import cancellable
from keiri_agent.privacy import job_scope
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.server.event_words import ends_task
from keiri_agent.server.inputs import UPLOADS_DIR
from keiri_agent.server.jobs import Job, JobResult, Runner, cancelled_error
from keiri_agent.server.logconfig import task_context
from keiri_agent.server.queue import TaskQueue
from keiri_agent.server.store import TaskStore
from keiri_agent.server.task_model import FINISHED, Task, TaskStatus, now
from keiri_agent.server.tasklog import open_task_log, sync_results
from keiri_agent.workspace import confine

__all__ = ["TaskObserver", "TaskRuntime"]

log = logging.getLogger(__name__)


class TaskObserver(Protocol):
    """Told of every event of every task and of every status change (metrics)."""

    def on_event(self, task: Task, event: RunEvent) -> None: ...

    def on_status(self, task: Task) -> None: ...


class TaskRuntime:
    """Queued and running tasks of this process; thread-safe."""

    def __init__(
        self,
        settings: Settings,
        store: TaskStore,
        executor_factory: Callable[[], SandboxExecutor],
    ) -> None:
        self.settings = settings
        self.store = store
        self.observers: list[TaskObserver] = []
        self._executor_factory = executor_factory
        self._live: dict[str, Task] = {}
        self._lock = threading.RLock()
        self.queue: TaskQueue[tuple[Task, Runner]] = TaskQueue(
            settings.keiri_max_running_tasks,
            settings.keiri_max_queued_tasks,
            settings.keiri_max_tasks_per_user,
            owner_of=lambda item: item[0].owner,
        )
        self._pool = ThreadPoolExecutor(
            settings.keiri_max_running_tasks, thread_name_prefix="keiri-task"
        )

    def get(self, task_id: str) -> Task | None:
        with self._lock:
            return self._live.get(task_id)

    def live(self) -> list[Task]:
        """The tasks queued or running in this process."""
        with self._lock:
            return list(self._live.values())

    def take_queued(self) -> list[Task]:
        """Take every task still waiting for a slot out of the queue (the server stops)."""
        return [task for task, _runner in self.queue.drain()]

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def enter(self, task: Task, runner: Runner, runs_now: bool, message: str = "") -> None:
        """Open the task's stream, save it, hold it in memory and start or queue it."""
        stream = open_task_log(task, self.settings)  # a resumed task's log goes on
        task.last_event_id = stream.first_id
        task.events = stream
        stream.add_listener(partial(self._observe, task))
        self.persist(task)
        with self._lock:
            self._live[task.id] = task
        self.notify_status(task)
        if message:
            stream.emit("log", msg=message)
        position = 0 if runs_now else self.queue.enqueue((task, runner))
        if position:
            stream.emit("stage", step="queued", status="waiting", progress=0.0)
            stream.emit(
                "log", msg=f"順番待ちです（{position} 番目）。実行中のタスクが終わると始まります。"
            )
        else:
            self._launch(task, runner)

    def _launch(self, task: Task, runner: Runner) -> None:
        task.started = True
        self._pool.submit(self._work, task, runner)

    def _observe(self, task: Task, event: RunEvent) -> None:
        task.last_event_id = event.id
        if isinstance(event, Stage):
            task.step = event.step
            if event.progress is not None:
                task.progress = event.progress
        elif ends_task(event):  # not an error the agent goes on after: its own error still comes
            task.error_emitted = True
        for observer in self.observers:
            observer.on_event(task, event)

    def notify_status(self, task: Task) -> None:
        for observer in self.observers:
            observer.on_status(task)

    def _work(self, task: Task, runner: Runner) -> None:
        with task_context(task.id):
            try:
                self._run(task, runner)
            finally:
                following = self.queue.done((task, runner))
                if following is not None:
                    self._launch(*following)

    def _run(self, task: Task, runner: Runner) -> None:
        assert task.events is not None
        executor = task.executor = self._executor_factory()
        task.status, task.started_at = TaskStatus.RUNNING, task.started_at or now()
        self.persist(task)
        self.notify_status(task)
        log.info("タスクを開始しました", extra={"task_id": task.id})
        job = Job(
            task.id,
            task.directory,
            task.events,
            task.cancel,
            executor,
            self.settings,
            owner=task.owner,
        )
        job.on_note = partial(self._note, task)
        files: list[str] = []
        try:
            if task.cancel.is_set():
                raise cancelled_error()
            with (
                cancellable(task.cancel),  # an LLM call in flight is aborted on cancel
                # One task, one set of placeholders; its log masks what they hide.
                job_scope(learnt=task.events.redactor.learn_personal) as vault,
            ):
                outcome = runner(job)
            if vault.counts():
                outcome.details = {**outcome.details, "masked": vault.counts()}
            files = [self._relative(task, path) for path in outcome.files]
        except BlockError as exc:
            outcome = JobResult("failed", error=exc.to_dict())
        except Exception as exc:  # a bug in a runner: logged with its traceback, reported
            log.exception("タスクの実行中に予期しないエラー", extra={"task_id": task.id})
            error = BlockError(
                f"タスクを実行できませんでした: {reason_of(exc)}",
                code=ErrorCode.INTERNAL_ERROR,
                hint="サーバーのログを確認し、不具合として報告してください。",
                details={"cause": cause_of(exc)},
            )
            outcome = JobResult("failed", error=error.to_dict())
        finally:
            executor.close()
        self.finish(task, self._settle_outcome(task, outcome), files)

    @staticmethod
    def _settle_outcome(task: Task, outcome: JobResult) -> JobResult:
        """A run stopped by the server's stop is interrupted, by a user cancelled."""
        stopped = outcome.status not in ("success", "unverified", "waiting_input")
        if task.interrupting and stopped:
            return JobResult("interrupted", details=outcome.details)
        if task.cancel.is_set() and stopped:
            return JobResult(
                "cancelled", error=cancelled_error().to_dict(), details=outcome.details
            )
        return outcome

    def _note(self, task: Task, details: Mapping[str, Any]) -> None:
        task.details = {**task.details, **details}
        self.persist(task)

    def finish(self, task: Task, outcome: JobResult, files: list[str]) -> None:
        with self._lock:
            if task.settled.is_set():  # the server already stopped it (lifecycle)
                return
            task.settled.set()
        stream = task.events
        assert stream is not None
        try:
            status = TaskStatus(outcome.status)
            # The last events and the result files, then the record, then the status: on disk
            # before anyone reads it, and shown only right before the task leaves memory (an
            # answer or a retry sent at once finds it paused, not still active).
            if status == TaskStatus.FAILED and outcome.error and not task.error_emitted:
                message = str(outcome.error.get("message", ""))
                stream.emit("error", step=task.step, message=message, error=outcome.error)
            elif status == TaskStatus.CANCELLED:
                stream.emit("log", msg="タスクを中止しました。", level="warning")
            elif status == TaskStatus.INTERRUPTED:
                stream.emit("log", msg=self.interrupted_message(task), level="warning")
            task.answer, task.files, task.error = outcome.answer, files, outcome.error
            task.details = {**task.details, **outcome.details}
            task.interruptions += status == TaskStatus.INTERRUPTED
            task.finished_at = now() if status in FINISHED else None
            if status in (TaskStatus.SUCCESS, TaskStatus.UNVERIFIED):  # the run went to its end
                task.progress = 1.0
            if status == TaskStatus.WAITING_INPUT:  # the progress page shows the form
                stream.emit("stage", step="input", status="waiting", progress=task.progress)
            sync_results(task.directory, files, settings=self.settings)
            self._set_status(task, status)
        finally:
            self._leave(task)
        log.info("タスクが %s になりました", task.status, extra={"task_id": task.id})

    @staticmethod
    def interrupted_message(task: Task) -> str:
        if task.kind == "plan":
            return "サーバーの停止でタスクを中断しました。再起動後に終わったノードの続きから再開します。"
        return (
            "サーバーの停止でタスクを中断しました。"
            f"POST /agent/tasks/{task.id}/retry でやり直せます。"
        )

    def _leave(self, task: Task) -> None:
        """The task is no longer active: release its stream, memory and lease."""
        if task.events is not None:
            task.events.close()  # whatever happened, subscribers are released
        task.events = None  # from now on SSE replays from the log on disk
        task.executor = None
        with self._lock:
            self._live.pop(task.id, None)
        if task.lease is not None:
            task.lease.release()
            task.lease = None
        if task.finished:  # uploads are kept only while the task may still read them
            shutil.rmtree(task.directory / UPLOADS_DIR, ignore_errors=True)
        self.notify_status(task)
        task.left.set()

    def interrupt_now(self, task: Task) -> None:
        """Mark an active task interrupted at once (its thread, if any, is abandoned)."""
        with self._lock:
            if task.settled.is_set():
                return
            task.settled.set()
        with contextlib.suppress(BlockError):  # the stream may close under a late emit
            if task.events is not None:
                task.events.emit("log", msg=self.interrupted_message(task), level="warning")
        task.finished_at = None
        task.interruptions += 1
        self._set_status(task, TaskStatus.INTERRUPTED)
        self._leave(task)
        log.warning("タスクを中断しました", extra={"task_id": task.id})

    @staticmethod
    def _relative(task: Task, path: Path) -> str:
        real = confine(task.directory, path, allow_absolute_inside=True)
        return real.relative_to(task.directory.resolve()).as_posix()

    def _set_status(self, task: Task, status: TaskStatus) -> None:
        """Save ``task`` with its new ``status``, then show it: a client reading the status
        (GET, the SSE ``done``) never reads one the disk could lose."""
        self.persist(replace(task, status=status))
        task.status = status

    def persist(self, task: Task) -> None:
        """Save the task's record once every line of its log is on disk: the record never
        counts an event a crash could take from the log."""
        if task.events is not None:
            task.events.sync()
        with self._lock:
            self.store.save(task)
