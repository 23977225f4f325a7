"""Work handed to a daemon thread, its outcome handed back: ``in_daemon_thread``.

A caller that must stay free while work runs (to read the work's events as they come, or to
watch a cancel event) starts the work in a daemon thread and later takes its value, or its
exception re-raised in the caller's own thread, from a ``concurrent.futures.Future``. Daemon,
because the work may block where no one can interrupt it (a sandboxed action, a plan run) and
must not keep the process alive at exit; ``ThreadPoolExecutor``'s threads are joined at exit.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["in_daemon_thread"]

T = TypeVar("T")


def in_daemon_thread(work: Callable[[], T], *, name: str) -> cf.Future[T]:
    """Start ``work()`` in a new daemon thread called ``name``; the future holds its value or
    its exception (``result()`` re-raises it in the caller's thread)."""
    future: cf.Future[T] = cf.Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # handed to the thread that reads the future
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future
