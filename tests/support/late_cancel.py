"""A cancel flag whose waiters wake late: ``CancelSeenLate``.

Setting a ``threading.Event`` sets its flag and then wakes the threads waiting on it, which run
when the scheduler lets them. ``CancelSeenLate`` makes that moment last until the stopped work
has ended: ``set()`` makes ``is_set()`` true at once, calls ``on_set`` (a test releases the work
it held), waits for ``ended``, and only then wakes ``wait()``. Work that reads its caller's
cancel itself meets it at its next check; work that learns of it through a thread waiting on
the flag (copying it into a flag of its own) goes on to its end as if nothing had been set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["CancelSeenLate"]


class CancelSeenLate(threading.Event):
    def __init__(
        self, ended: threading.Event, limit_s: float, on_set: Callable[[], None] = lambda: None
    ) -> None:
        super().__init__()
        self._ended = ended
        self._limit_s = limit_s
        self._on_set = on_set
        self._said = False

    def is_set(self) -> bool:
        return self._said or super().is_set()

    def set(self) -> None:
        self._said = True
        self._on_set()
        assert self._ended.wait(self._limit_s), "the stopped work did not end"
        super().set()
