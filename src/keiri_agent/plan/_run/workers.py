"""One bound on the worker threads of a run, however loops and subflows nest.

Every thread a run starts for its nodes (parallel nodes of a graph, foreach iterations, loops
and subflows waiting on nested frames) takes a slot of the run's :class:`Workers`
(``KEIRI_PLAN_MAX_THREADS``). Slots are never waited for: a caller that gets none does the work
itself, in its own thread. So a nested foreach with ``max_concurrency: 60`` at two levels runs
with at most the bound's threads instead of 60 × 60, and no thread ever waits for a slot that
only a waiting thread could free (no deadlock, however deep the nesting).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Crew", "Workers", "run_inline"]

T = TypeVar("T")


class Workers:
    """At most ``limit`` worker threads at a time for one run."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)

    def try_submit(self, fn: Callable[..., T], /, *args: Any) -> cf.Future[T] | None:
        """Run ``fn(*args)`` in a new thread if a slot is free now; None if none is."""
        if not self._slots.acquire(blocking=False):
            return None
        future: cf.Future[T] = cf.Future()
        # The run's context (its privacy.job_scope vault, an LLM cancel scope) goes along.
        context = contextvars.copy_context()

        def target() -> None:
            try:
                future.set_result(context.run(fn, *args))
            except BaseException as exc:  # the caller re-raises it from the future
                future.set_exception(exc)
            finally:
                self._slots.release()

        try:
            threading.Thread(target=target, name="keiri-worker", daemon=True).start()
        except BaseException:
            self._slots.release()
            raise
        return future

    def submit(self, fn: Callable[..., T], /, *args: Any) -> cf.Future[T]:
        """:meth:`try_submit`, or ``fn(*args)`` run here when no slot is free."""
        future = self.try_submit(fn, *args)
        return future if future is not None else run_inline(fn, *args)


def run_inline(fn: Callable[..., T], /, *args: Any) -> cf.Future[T]:
    """``fn(*args)`` run in the calling thread, as a finished future."""
    future: cf.Future[T] = cf.Future()
    try:
        future.set_result(fn(*args))
    except BaseException as exc:
        future.set_exception(exc)
    return future


# --- an elastic crew for the items of a loop -------------------------------------------------

# A foreach item that has run this long is taken as blocked (an LLM call, a sleep, a
# subprocess, I/O): only then do helper threads join. Shorter items run one after another on
# the loop's own thread, because in CPython threads that run Python code take turns on one
# interpreter lock: extra threads add only their hand-offs (2x the cost per item at 8 threads).
HELP_AFTER_S = 0.01
# ... and it is blocked, not computing, when its thread used less than this share of that time
# on a CPU: a long computation or a garbage collection in an item brings no helper in (where
# the platform has per-thread CPU clocks; elsewhere the time alone decides).
BLOCKED_CPU_SHARE = 0.5
# How often the watcher looks at the running items: soon after it added helpers, less and less
# often (up to WATCH_MAX_S) while it finds nothing to do. Each look takes the interpreter lock
# from the working thread: every 5 ms cost quick items a fifth of their time.
WATCH_EVERY_S = 0.005
WATCH_MAX_S = 0.08


def _thread_clock() -> int | None:
    """The CPU-time clock of the calling thread (None where the platform has none)."""
    try:
        return time.pthread_getcpuclockid(threading.get_ident())
    except (AttributeError, OSError):
        return None


def _cpu(clock: int | None) -> float:
    if clock is None:
        return 0.0
    try:
        return time.clock_gettime(clock)
    except OSError:  # the thread has just ended
        return 0.0


class Crew:
    """Runs ``fn(0) .. fn(count - 1)``, each index taken once, in the order taken, by the
    calling thread and by at most ``limit - 1`` helper threads of the run's bound.

    Helpers are added only while every working thread is stuck in an item that has run for
    :data:`HELP_AFTER_S`, waiting rather than computing (:data:`BLOCKED_CPU_SHARE`); then as
    many as are stuck, so a blocking loop reaches ``limit`` threads within a few multiples of
    it. A watcher thread (also one of the bound's) looks every :data:`WATCH_EVERY_S` to
    :data:`WATCH_MAX_S`; when the bound has no thread for it, the workers look between their
    items instead.
    """

    def __init__(
        self,
        workers: Workers,
        fn: Callable[[int], object],
        count: int,
        limit: int,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.workers = workers
        self.fn = fn
        self.count = count
        self.wanted = max(min(limit, count) - 1, 0)  # helpers at most
        self.clock = clock
        self.helpers: list[cf.Future[None]] = []
        self._next = 0
        self._take = threading.Lock()
        self._grow = threading.Lock()
        # worker number → (when its current item started, its thread's CPU time then, the
        # thread's CPU clock)
        self._started: dict[int, tuple[float, float, int | None]] = {}
        self._finished = threading.Event()
        self._watched = False

    def run(self) -> None:
        """Work until every index is taken and done (helpers' exceptions re-raised)."""
        watcher = None
        if self.wanted:
            watcher = self.workers.try_submit(self._watch)
            self._watched = watcher is not None
        try:
            self._work(0)
        finally:
            self._finished.set()
            if watcher is not None:
                watcher.result()
            for helper in self.helpers:  # complete: the watcher is done adding
                helper.result()

    def grow(self, *, also_stuck: int = 0) -> int:
        """Add helpers if every working thread is stuck in a long item (``also_stuck``: threads
        between items counted as stuck, their last item was long); how many were added."""
        with self._grow:
            if self._next >= self.count:
                return 0
            now = self.clock()
            running = list(self._started.values())
            stuck = also_stuck + sum(
                _blocked(now - since, cpu, clock) for since, cpu, clock in running
            )
            live = 1 + sum(not helper.done() for helper in self.helpers)  # the caller too
            if stuck < live:
                return 0
            added = 0
            while added < stuck and len(self.helpers) < self.wanted:
                number = len(self.helpers) + 1
                helper = self.workers.try_submit(self._work, number)
                if helper is None:
                    break
                self.helpers.append(helper)
                added += 1
            return added

    def _watch(self) -> None:
        every = WATCH_EVERY_S
        while not self._finished.wait(every):
            every = WATCH_EVERY_S if self.grow() else min(every * 2, WATCH_MAX_S)
            if self._next >= self.count or len(self.helpers) >= self.wanted:
                return

    def _work(self, number: int) -> None:
        started = self._started
        clock = _thread_clock()
        while True:
            with self._take:
                index = self._next
                if index >= self.count:
                    return
                self._next = index + 1
            began, cpu = self.clock(), _cpu(clock)
            started[number] = (began, cpu, clock)
            try:
                self.fn(index)
            finally:
                del started[number]
            if not self._watched and len(self.helpers) < self.wanted:
                waited = _blocked(self.clock() - began, cpu, clock)
                self.grow(also_stuck=int(waited))


def _blocked(elapsed: float, cpu_at_start: float, clock: int | None) -> bool:
    """Whether an item that started ``elapsed`` seconds ago (its thread's CPU time then:
    ``cpu_at_start``) has been waiting long enough for a helper to be worth it."""
    if elapsed < HELP_AFTER_S:
        return False
    return clock is None or _cpu(clock) - cpu_at_start < elapsed * BLOCKED_CPU_SHARE
