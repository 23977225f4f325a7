"""Cancelling LLM calls that are in flight.

A blocking HTTP read cannot be interrupted from another thread (closing an httpx client does
not wake a thread waiting on its socket), so a cancellable call runs as a coroutine on one
background event loop, ``keiri-llm-io``, while the calling thread waits for either its result
or the cancel event. Cancelling cancels the coroutine: httpx closes the connection at once (the
provider stops generating) and the caller gets ``BlockError(CANCELLED)`` within
``CANCEL_POLL_S``. Waits between retries are cut short the same way.

A call is cancellable when its client has a cancel event (``LLMClient(cancel=...)``) or when it
runs inside :func:`cancellable` -- the API server wraps each task in one, so every LLM call the
task makes, in any agent and in threads that copy the context (LangGraph's do), stops when the
task is cancelled. Calls outside both run as before, synchronously in the caller's thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Generic, TypeVar

from keiri_agent.errors import BlockError, ErrorCode

__all__ = [
    "CANCEL_POLL_S",
    "Call",
    "cancellable",
    "cancellable_sleep",
    "cancelled_call_error",
    "current_cancel",
    "run_cancellable",
]

CANCEL_POLL_S = 0.1  # how often a waiting caller looks at its cancel event

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One provider call in its two forms: ``run`` makes it in the calling thread, ``arun`` is
    the same call as a coroutine, used when the call is cancellable (:func:`run_cancellable`)."""

    run: Callable[[], T]
    arun: Callable[[], Awaitable[T]]


_CURRENT: ContextVar[threading.Event | None] = ContextVar("keiri_llm_cancel", default=None)
_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Make every LLM call in this context stop when ``event`` is set."""
    token = _CURRENT.set(event)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_cancel() -> threading.Event | None:
    """The cancel event of the enclosing :func:`cancellable` block, if any."""
    return _CURRENT.get()


def cancelled_call_error(describe: str) -> BlockError:
    return BlockError(
        f"LLM の呼び出しを中止しました: {describe}",
        code=ErrorCode.CANCELLED,
        hint="中止が要求されたため、応答を待たずに接続を閉じました。",
        details={"call": describe},
    )


def _io_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="keiri-llm-io", daemon=True).start()
            _loop = loop
        return _loop


def run_cancellable(make: Callable[[], Awaitable[T]], cancel: threading.Event, describe: str) -> T:
    """Await ``make()`` on the LLM I/O loop; on ``cancel``, abort it and raise CANCELLED.

    Exceptions of the call itself are raised unchanged (the retry policy classifies them).
    The caller's context variables go with the call (``call_soon_threadsafe`` copies them).
    """
    if cancel.is_set():
        raise cancelled_call_error(describe)

    async def call() -> T:
        return await make()

    future = asyncio.run_coroutine_threadsafe(call(), _io_loop())
    while True:
        try:
            return future.result(timeout=CANCEL_POLL_S)
        except concurrent.futures.TimeoutError:
            if cancel.is_set():
                future.cancel()  # cancels the task on the loop: httpx closes the connection
                raise cancelled_call_error(describe) from None


def cancellable_sleep(cancel: threading.Event, describe: str) -> Callable[[float], None]:
    """A ``sleep`` for the retry policy that ends early, raising CANCELLED, on ``cancel``."""

    def sleep(seconds: float) -> None:
        if cancel.wait(seconds):
            raise cancelled_call_error(describe)

    return sleep
