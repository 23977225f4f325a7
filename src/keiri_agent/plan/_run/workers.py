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
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Workers", "run_inline"]

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

        def target() -> None:
            try:
                future.set_result(fn(*args))
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
