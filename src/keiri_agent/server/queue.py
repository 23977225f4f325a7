"""How many tasks run at once, and how many may wait (``KEIRI_MAX_RUNNING_TASKS`` /
``KEIRI_MAX_QUEUED_TASKS``).

A submission first reserves a place (:meth:`TaskQueue.reserve`): a running slot when one is
free, else a place in the queue, else it is refused with 429 before anything is created. A
task that finishes hands its slot to the oldest queued task (:meth:`TaskQueue.done`). Every
method is thread-safe.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from keiri_agent.server.errors import ApiError

__all__ = ["TaskQueue"]

T = TypeVar("T")


class TaskQueue(Generic[T]):
    """Running slots and a bounded FIFO of items waiting for one."""

    def __init__(self, max_running: int, max_queued: int) -> None:
        self.max_running = max_running
        self.max_queued = max_queued
        self._running = 0
        self._reserved = 0  # queue places reserved but not yet filled
        self._waiting: deque[T] = deque()
        self._lock = threading.Lock()

    def reserve(self) -> bool:
        """A place for one more task: True to run now, False to queue; 429 ApiError if full."""
        with self._lock:
            if self._running < self.max_running:
                self._running += 1
                return True
            if len(self._waiting) + self._reserved < self.max_queued:
                self._reserved += 1
                return False
        raise ApiError(
            429,
            "TOO_MANY_TASKS",
            f"実行中と順番待ちのタスクが上限に達しています（同時実行 {self.max_running} 件、"
            f"順番待ち {self.max_queued} 件）。",
            hint="実行中のタスクが終わってから送り直してください（上限は KEIRI_MAX_RUNNING_TASKS と"
            " KEIRI_MAX_QUEUED_TASKS で変えられます）。",
            details={"max_running": self.max_running, "max_queued": self.max_queued},
            headers={"Retry-After": "5"},
        )

    def release(self, runs_now: bool) -> None:
        """Give back a place that :meth:`reserve` gave but no task took."""
        with self._lock:
            if runs_now:
                self._running -= 1
            else:
                self._reserved -= 1

    def enqueue(self, item: T) -> int:
        """Fill a reserved queue place with ``item``; returns its position (1 = next), or 0
        when a slot was freed meanwhile and ``item`` takes it (the caller starts it)."""
        with self._lock:
            self._reserved -= 1
            if self._running < self.max_running and not self._waiting:
                self._running += 1
                return 0
            self._waiting.append(item)
            return len(self._waiting)

    def remove(self, match: Callable[[T], bool]) -> bool:
        """Take the queued item ``match`` accepts out (it was cancelled); False if none is."""
        with self._lock:
            for item in self._waiting:
                if match(item):
                    self._waiting.remove(item)
                    return True
            return False

    def drain(self) -> list[T]:
        """Take every queued item out (the server stops); they never start."""
        with self._lock:
            taken = list(self._waiting)
            self._waiting.clear()
            return taken

    @property
    def waiting(self) -> int:
        """How many items wait for a slot."""
        with self._lock:
            return len(self._waiting)

    def done(self) -> T | None:
        """A running task ended: the item that takes its slot, or None (the slot is freed)."""
        with self._lock:
            if self._waiting:
                return self._waiting.popleft()
            self._running -= 1
            return None
