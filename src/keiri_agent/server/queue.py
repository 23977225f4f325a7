"""How many tasks run at once, how many may wait, and how many of them one user may hold
(``KEIRI_MAX_RUNNING_TASKS`` / ``KEIRI_MAX_QUEUED_TASKS`` / ``KEIRI_MAX_TASKS_PER_USER``).

A submission (or a continuation: answers, retry, a resume after a restart) first reserves a
place (:meth:`TaskQueue.reserve`) for its owner: a running slot when one is free, else a place
in the queue, else it is refused with 429 before anything is created. An owner who already
holds ``max_per_owner`` places (running and queued together) is refused with 429 naming that
cap while everyone else still gets in, so one user cannot fill the queue. The tasks of a
server without keys all have the owner ``None`` and count as one anonymous user. A task that
finishes hands its slot to the oldest queued task (:meth:`TaskQueue.done`). Every method is
thread-safe.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Callable
from typing import Generic, TypeVar

from keiri_agent.errors import ErrorCode
from keiri_agent.server.errors import ApiError

__all__ = ["Owner", "TaskQueue"]

T = TypeVar("T")


Owner = str | None  # a user's name; None: the tasks of a server without keys


def _over_owner_cap(owner: Owner, cap: int) -> ApiError:
    who = "キーなしのサーバーでは全員で" if owner is None else f"ユーザー {owner} は"
    return ApiError(
        429,
        ErrorCode.TOO_MANY_TASKS_PER_USER,
        f"実行中と順番待ちのタスクが 1 人あたりの上限に達しています（{who}同時に {cap} 件まで）。",
        hint="ご自分のタスクが終わるか中止してから送り直してください（上限は"
        " KEIRI_MAX_TASKS_PER_USER で変えられます）。",
        details={"user": owner, "max_tasks_per_user": cap},
        headers={"Retry-After": "5"},
    )


class TaskQueue(Generic[T]):
    """Running slots, a bounded FIFO of items waiting for one, and the places each owner holds
    (``owner_of`` tells the owner of an item)."""

    def __init__(
        self,
        max_running: int,
        max_queued: int,
        max_per_owner: int,
        owner_of: Callable[[T], Owner],
    ) -> None:
        self.max_running = max_running
        self.max_queued = max_queued
        self.max_per_owner = max_per_owner
        self._owner_of = owner_of
        self._running = 0
        self._reserved = 0  # queue places reserved but not yet filled
        self._waiting: deque[T] = deque()
        self._held: Counter[Owner] = Counter()  # running and queued places by owner
        self._lock = threading.Lock()

    def reserve(self, owner: Owner) -> bool:
        """A place for one more task of ``owner``: True to run now, False to queue; 429
        ApiError if the owner holds their cap of places, or if every place is taken."""
        with self._lock:
            if self._held[owner] >= self.max_per_owner:
                raise _over_owner_cap(owner, self.max_per_owner)
            if self._running < self.max_running:
                self._running += 1
                self._held[owner] += 1
                return True
            if len(self._waiting) + self._reserved < self.max_queued:
                self._reserved += 1
                self._held[owner] += 1
                return False
        raise ApiError(
            429,
            ErrorCode.TOO_MANY_TASKS,
            f"実行中と順番待ちのタスクが上限に達しています（同時実行 {self.max_running} 件、"
            f"順番待ち {self.max_queued} 件）。",
            hint="実行中のタスクが終わってから送り直してください（上限は KEIRI_MAX_RUNNING_TASKS と"
            " KEIRI_MAX_QUEUED_TASKS で変えられます）。",
            details={"max_running": self.max_running, "max_queued": self.max_queued},
            headers={"Retry-After": "5"},
        )

    def held(self, owner: Owner) -> int:
        """How many places (running and queued) ``owner`` holds."""
        with self._lock:
            return self._held[owner]

    def _give_back(self, owner: Owner) -> None:
        self._held[owner] -= 1
        if self._held[owner] <= 0:
            del self._held[owner]

    def release(self, owner: Owner, runs_now: bool) -> None:
        """Give back a place that :meth:`reserve` gave ``owner`` but no task took."""
        with self._lock:
            if runs_now:
                self._running -= 1
            else:
                self._reserved -= 1
            self._give_back(owner)

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
                    self._give_back(self._owner_of(item))
                    return True
            return False

    def drain(self) -> list[T]:
        """Take every queued item out (the server stops); they never start."""
        with self._lock:
            taken = list(self._waiting)
            self._waiting.clear()
            for item in taken:
                self._give_back(self._owner_of(item))
            return taken

    @property
    def waiting(self) -> int:
        """How many items wait for a slot."""
        with self._lock:
            return len(self._waiting)

    def done(self, finished: T) -> T | None:
        """The running item ``finished`` ended: the item that takes its slot, or None (the
        slot is freed)."""
        with self._lock:
            self._give_back(self._owner_of(finished))
            if self._waiting:
                return self._waiting.popleft()
            self._running -= 1
            return None
