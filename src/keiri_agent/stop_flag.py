"""A cancel flag that is also set once a deadline has passed: ``StopFlag``.

A run that must stop on its caller's cancel *or* on its own deadline (a conversion's
``KEIRI_CONVERT_TIMEOUT_S``, a plan node's ``timeout_ms``) checks one flag. ``StopFlag`` is that
flag without a copy: each ``is_set()`` reads the caller's event and the clock, so there is no
moment when the caller's cancel is set and the flag is not (a thread copying one event into
another leaves such a moment, in which a released run could pass its check and publish its
files). ``wait`` waits on the caller's event for at most the time left, so it wakes on either.

It is a ``threading.Event`` for the code that takes one (the LLM layer's ``cancellable``, the
sandbox's ``run_cancellable``, ``BlockContext.cancel_event``); it is set only through the
caller's event or by its deadline, never by ``set()``. Its caller may itself be a ``StopFlag``
(a conversion run inside a plan node with a timeout).
"""

from __future__ import annotations

import threading
import time

__all__ = ["StopFlag"]


class StopFlag(threading.Event):
    """Set while ``cancel`` is set, and from ``deadline`` (``time.monotonic()``) on if given."""

    def __init__(self, cancel: threading.Event, deadline: float | None = None) -> None:
        super().__init__()
        self._cancel = cancel
        self._deadline = deadline

    @property
    def expired(self) -> bool:
        """Whether the deadline has passed (whether or not ``cancel`` is set too)."""
        return self._deadline is not None and time.monotonic() >= self._deadline

    def is_set(self) -> bool:
        return self._cancel.is_set() or self.expired

    def wait(self, timeout: float | None = None) -> bool:
        if self._deadline is not None:
            left = max(self._deadline - time.monotonic(), 0.0)
            timeout = left if timeout is None else min(timeout, left)
        if not self.is_set():
            self._cancel.wait(timeout)
        return self.is_set()

    def set(self) -> None:
        raise TypeError("a StopFlag is set by its cancel event or its deadline, not by set()")

    def clear(self) -> None:
        raise TypeError("a StopFlag is cleared only with its cancel event")
