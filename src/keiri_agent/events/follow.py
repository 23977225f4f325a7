"""Running work while a caller follows its events live, and the event lines agents share.

``run_following(stream, work, on_event)`` runs ``work()`` in a worker thread and hands each
event of ``stream`` to ``on_event`` in the calling thread as it happens (a UI must update from
its own thread); the worker's exception is re-raised in the caller. When only a listener is
available (a plan run's ``on_event``), :class:`LogFollower` does the same from the run's log:
the listener keeps just the newest id, so a reader slower than the run costs no memory.
``progress_line`` (with ``llm_call_line`` and ``error_line``) is the Japanese one-liner every
agent's progress view prints for the events all agents emit: stages, log lines, errors and LLM
calls. An error's line says every Python exception its message quotes as the sandbox says a
failure (``sandbox.failure_words``: the kind in Japanese, the class name last, never Python's
English) and the step it names by the agent's label.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Final, TypeVar

from keiri_agent.errors import CODE_WORDS
from keiri_agent.events.logfile import LogCursor
from keiri_agent.events.models import ErrorEvent, LLMCall, Log, RunEvent, Stage
from keiri_agent.events.stream import TAIL_EVENTS, EventStream
from keiri_agent.sandbox.failure_words import KINDS, english_hidden, failure_said
from keiri_agent.sandbox.outcome import ExecutionFailure
from keiri_agent.threads import in_daemon_thread

__all__ = [
    "LogFollower",
    "error_line",
    "llm_call_line",
    "progress_line",
    "run_following",
]

T = TypeVar("T")

IDLE_S: Final = 1.0  # with ``on_idle``: how long without an event before it is called
# A Python exception as a message quotes it: its class (a module path before it allowed) first,
# with its message up to the sentence's end (``KeyError: '売上'``), or last, in brackets after
# its message (``could not convert string to float: 'x'（ValueError）``; a class of the code's
# own may have a Japanese name: ``period is closed（締め日エラー）``).
_KINDS: Final = "|".join(map(re.escape, sorted(KINDS, key=len, reverse=True)))
_CLASS: Final = (
    rf"(?:[A-Za-z_]\w*\.)*(?P<kind>[A-Z]\w*(?:Error|Exception|Violation|Exit|Interrupt)|{_KINDS})"
)
_RAISED: Final = re.compile(rf"(?<![\w.]){_CLASS}: (?P<message>[^。\n（]*)")
_RAISED_OWN: Final = re.compile(
    r"(?<![\w.])(?P<kind>[^\W\d]\w*(?:エラー|例外)): (?P<message>[^。\n（]*)"
)
_NAMED_AFTER: Final = re.compile(r"(?P<message>[A-Za-z'\"][^（）。]*)（(?P<kind>[^\W\d]\w*)）")


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
    """An LLM call in one line: its model, tokens and time, and, for a failed call, what went
    wrong in the words of its error code (``errors.CODE_WORDS``, as the app and the CLI's error
    line say it; the code stays in the event: ``--json``, the run log)."""
    failed = CODE_WORDS.get(event.error_code or "")
    status = "" if event.ok else "、失敗" + (f"（{failed}）" if failed else "")
    return (
        f"  {where}LLM {event.model}: {event.total_tokens} トークン、"
        f"{event.latency_ms / 1000:.1f} 秒{status}"
    )


def error_line(
    event: ErrorEvent, steps: Mapping[str, str] | None = None, *, where: str = ""
) -> str:
    """The first line of an error event's message as a person reads it: every Python
    exception it quotes (``最後のエラー: KeyError: '売上'``, ``could not convert ...（ValueError）``)
    said as the sandbox says a failure (its kind in Japanese, the values it quotes, the class
    name last), and the step the event names (``convert の途中``) by its label in ``steps``."""
    said = _NAMED_AFTER.sub(_said_english, event.message.strip())
    said = _RAISED_OWN.sub(_said_english, _RAISED.sub(_said, said))
    line = (said.splitlines() or [""])[0]
    step, labels = event.step or "", steps or {}
    if labels.get(step):  # the id as a word of a Japanese sentence, not of an English one
        named = rf"(?<![\w.] )(?<![\w.]){re.escape(step)}(?![\w.])(?! [A-Za-z])(?: (?=[ぁ-ん]))?"
        line = re.sub(named, labels[step], line)
    return f"  {where}エラー: {line}"


def _failure(match: re.Match[str]) -> ExecutionFailure:
    return ExecutionFailure(type=match["kind"], message=" ".join(match["message"].split()))


def _said(match: re.Match[str]) -> str:
    return failure_said(_failure(match))


def _said_english(match: re.Match[str]) -> str:
    """A message in Python's English with its class, said as :func:`_said` says it; a Japanese
    one, or a name in brackets (``CodeAct（生成コード）``), stays as it is."""
    failure = _failure(match)
    return failure_said(failure) if english_hidden(failure) else match[0]


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
        return error_line(event, steps, where=where)
    if isinstance(event, LLMCall):
        return llm_call_line(event, where)
    return None
