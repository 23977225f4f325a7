"""Running work while a caller follows its events live, and the event lines agents share.

``run_following(stream, work, on_event)`` runs ``work()`` in a worker thread and hands each
event of ``stream`` to ``on_event`` in the calling thread as it happens (a UI must update from
its own thread); the worker's exception is re-raised in the caller. When only a listener is
available (a plan run's ``on_event``), :class:`LogFollower` does the same from the run's log:
the listener keeps just the newest id, so a reader slower than the run costs no memory.
``progress_line`` (with ``llm_call_line`` and ``error_line``) is the Japanese one-liner every
agent's progress view prints for the events all agents emit: stages, log lines, errors and LLM
calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Final, TypeVar

from keiri_agent.events.logfile import LogCursor
from keiri_agent.events.models import ErrorEvent, LLMCall, Log, RunEvent, Stage
from keiri_agent.events.stream import TAIL_EVENTS, EventStream
from keiri_agent.threads import in_daemon_thread

__all__ = ["LogFollower", "error_line", "llm_call_line", "progress_line", "run_following"]

T = TypeVar("T")

IDLE_S: Final = 1.0  # with ``on_idle``: how long without an event before it is called


def run_following(
    stream: EventStream,
    work: Callable[[], T],
    on_event: Callable[[RunEvent], None],
    *,
    name: str = "keiri-run",
    on_idle: Callable[[], None] | None = None,
    idle_s: float = IDLE_S,
) -> T:
    """``work()``'s result; ``stream`` is closed when it ends, which ends the following.

    ``on_idle`` is called in the calling thread whenever no event came for ``idle_s`` seconds
    while the work runs (a page shows the time spent, and so learns that its user stopped it).
    """

    def run() -> T:
        try:
            return work()
        finally:
            stream.close()  # ends the subscription below

    outcome = in_daemon_thread(run, name=name)
    pos = 0
    while not stream.closed:
        for event in stream.subscribe(pos, timeout=None if on_idle is None else idle_s):
            pos = event.id
            on_event(event)
        if on_idle is not None and not stream.closed:
            on_idle()
    for event in stream.subscribe(pos):  # those that came just before the close
        on_event(event)
    return outcome.result()  # the worker's exception is raised here


class LogFollower:
    """The events of a run logged by other threads, read back from its log in one thread.

    Give :meth:`see` to the run as its listener (it is called right after each event's line is
    written, so every event up to the newest one seen is whole in the log) and call
    :meth:`finish` when the run has ended; iterating yields each event once, in id order, and
    ends after the last one. ``locate`` finds the log from the run's first event.
    """

    def __init__(self, locate: Callable[[RunEvent], Path]) -> None:
        self._locate = locate
        self._cond = threading.Condition()
        self._first: RunEvent | None = None
        self._newest = 0
        self._done = False

    def see(self, event: RunEvent) -> None:
        with self._cond:
            if self._first is None:
                self._first = event
            self._newest = max(self._newest, event.id)
            self._cond.notify_all()

    def finish(self) -> None:
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def _has_news(self, pos: int) -> bool:
        return self._newest > pos or self._done

    def __iter__(self) -> Iterator[RunEvent]:
        pos, cursor = 0, None
        while True:
            with self._cond:
                self._cond.wait_for(partial(self._has_news, pos))
                upto, first = self._newest, self._first
            if upto <= pos or first is None:  # finished, and everything was handed out
                return
            cursor = cursor or LogCursor(self._locate(first))
            batch = cursor.read(pos, upto, TAIL_EVENTS)
            if not batch:
                return
            pos = batch[-1].id
            yield from batch


def llm_call_line(event: LLMCall, where: str = "") -> str:
    status = "" if event.ok else f"、失敗 {event.error_code or ''}"
    return (
        f"  {where}LLM {event.model}: {event.total_tokens} トークン、"
        f"{event.latency_ms / 1000:.1f} 秒{status}"
    )


def error_line(event: ErrorEvent) -> str:
    return "  エラー: " + (event.message.strip().splitlines() or [""])[0]


def progress_line(
    event: RunEvent, steps: Mapping[str, str], statuses: Mapping[str, str], *, where: str = ""
) -> str | None:
    """The line of a stage (``[step] status``, with its percentage when it has one), a log
    line, an error or an LLM call; None for other events. ``steps``/``statuses`` are the
    agent's Japanese labels; ``where`` prefixes the place (``サブタスク 2: ``)."""
    if isinstance(event, Stage):
        label = steps.get(event.step, event.step)
        percent = f"（{round(event.progress * 100)}%）" if event.progress is not None else ""
        return f"[{where}{label}] {statuses.get(event.status, event.status)}{percent}"
    if isinstance(event, Log):
        return f"  {where}{event.msg}"
    if isinstance(event, ErrorEvent):
        return error_line(event)
    if isinstance(event, LLMCall):
        return llm_call_line(event, where)
    return None
