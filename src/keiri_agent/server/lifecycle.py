"""What happens to tasks when the server starts and when it stops.

Stopping (SIGTERM, Ctrl+C; :meth:`Lifecycle.begin_shutdown`): the server takes no new work
(503), queued tasks are marked ``interrupted`` at once, and running tasks get
``KEIRI_SHUTDOWN_TIMEOUT_S`` seconds to finish. Those still running then stop at their next
checkpoint: a plan run stops starting nodes and the running ones stop at their next check (the
engine's cancel), an LLM call in flight is aborted and a sandbox action killed. They are marked
``interrupted``, not failed: the nodes they finished are in their run log. A task that has not
stopped :data:`STOP_GRACE_S` seconds later is marked interrupted anyway and left behind.

Starting (:meth:`Lifecycle.recover`): a task whose record says ``queued`` or ``running`` but
whose lease no live process holds was cut by a crash (SIGKILL, power loss): it is marked
``interrupted`` too. Every interrupted plan task then continues by itself from its run log
(``PlanRunner.resume``: finished nodes are reused, never run again); interrupted conversions
and analyses wait for ``POST /agent/tasks/{id}/retry``.
"""

from __future__ import annotations

import logging
import threading
import time

from keiri_agent.errors import BlockError
from keiri_agent.server.store import Lease
from keiri_agent.server.task_model import Task, TaskStatus
from keiri_agent.server.tasks import TaskRegistry

__all__ = ["STOP_GRACE_S", "Lifecycle"]

STOP_GRACE_S = 10.0  # after the shutdown timeout: how long a stopped task may take to settle
log = logging.getLogger(__name__)


class Lifecycle:
    """Recovers tasks at start-up and drains them at shutdown."""

    def __init__(self, registry: TaskRegistry, timeout_s: float | None = None) -> None:
        self.registry = registry
        self.timeout_s = (
            registry.settings.keiri_shutdown_timeout_s if timeout_s is None else timeout_s
        )
        self._drain: threading.Thread | None = None
        self._lock = threading.Lock()

    # --- start-up -----------------------------------------------------------------------------

    def recover(self) -> list[Task]:
        """Mark tasks cut by a crash interrupted and continue every interrupted plan task;
        returns the tasks continued."""
        continued = []
        for task in self.registry.store.records():
            if task.active and not self._orphaned(task):
                continue  # another live server process runs it
            if task.active:
                self.registry.append_event(
                    task,
                    "log",
                    msg="サーバーが途中で止まったため、タスクは中断されました。",
                    level="warning",
                )
                task.status, task.interruptions = TaskStatus.INTERRUPTED, task.interruptions + 1
                self.registry.store.save(task)
                log.warning("止まったサーバーのタスクを見つけました", extra={"task_id": task.id})
            if task.status == TaskStatus.INTERRUPTED and task.kind == "plan":
                try:
                    runner = self.registry.runner_for(task)
                    message = "サーバーの再起動後、中断したところから再開します。"
                    continued.append(self.registry.resume(task, runner, message))
                except BlockError as exc:  # e.g. the queue is full: it waits for a retry
                    log.warning(
                        "中断したタスクを再開できません: %s",
                        exc.message,
                        extra={"task_id": task.id},
                    )
        return continued

    @staticmethod
    def _orphaned(task: Task) -> bool:
        lease = Lease.take(task.directory)
        if lease is None:
            return False
        lease.release()
        return True

    # --- shutdown -----------------------------------------------------------------------------

    def begin_shutdown(self) -> None:
        """Start stopping (returns at once; idempotent): no new work, tasks drained."""
        with self._lock:
            if self._drain is not None:
                return
            self.registry.stopping.set()
            self._drain = threading.Thread(target=self._run_drain, name="keiri-drain", daemon=True)
            self._drain.start()

    def shutdown(self) -> None:
        """Stop and wait until every task has settled."""
        self.begin_shutdown()
        assert self._drain is not None
        self._drain.join()

    @property
    def stopped(self) -> bool:
        return self._drain is not None and not self._drain.is_alive()

    def _run_drain(self) -> None:
        runtime = self.registry.runtime
        log.info(
            "停止します: 実行中・順番待ちのタスク %d 件（待つ時間 %.0f 秒）",
            len(runtime.live()),
            self.timeout_s,
        )
        for task in runtime.take_queued():
            runtime.interrupt_now(task)
        deadline = time.monotonic() + self.timeout_s
        # A settled task still saves its record and status: the drain waits until it has left.
        for task in runtime.live():
            task.left.wait(max(deadline - time.monotonic(), 0))
        remaining = runtime.live()
        for task in remaining:  # stop at the next checkpoint
            task.interrupting = True
            task.cancel.set()
            if task.executor is not None:
                task.executor.close()
        deadline = time.monotonic() + STOP_GRACE_S
        for task in remaining:
            task.left.wait(max(deadline - time.monotonic(), 0))
        for task in runtime.live():  # did not stop in time: left behind, continued later
            runtime.interrupt_now(task)
        runtime.close()
        log.info("タスクの停止処理が終わりました")
