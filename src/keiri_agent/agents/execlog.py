"""The one line a person reads about a failed code execution: why it failed, in Japanese.

A ``code_exec`` event of a failed run carries, at the end of its ``stderr``, the error the
model was shown: the exception as the sandbox's worker reports it (``KeyError: '存在しない列'``,
a message of several lines, then the code's lines as ``3 行目: …``), or a sandbox limit
(``中断: メモリの上限に達しました``); before it, whatever the code wrote to stderr (warnings, a
traceback it printed itself). Where a run's stderr is Python's own (``Traceback (most recent
call last):``, frames, chained exceptions, ``pandas.errors.ParserError: …``), its last
exception is the error. The progress lines of the CLI and the pages quote that last error, so
the reason reaches the user, not only the model: an exception as ``sandbox.failure_words``
says it (its kind in Japanese, by the class's name or its ending, and the values its message
quotes; the model keeps Python's English), the sandbox's own Japanese as it is, and a stderr
holding no exception said as a failed run (:data:`~keiri_agent.sandbox.failure_words.GENERIC`)
rather than in its English.

An exception's class is a name Python prints first on a line: a module path before it allowed,
and ending as exception classes do (``…Error``, ``…Warning``, ``…Interrupt``), or of two words or
more (``InvalidOperation``, ``StopIteration``, ``OutOfBoundsDatetime``, numpy's
``_ArrayMemoryError``), or a script's own with a Japanese name (``締め日エラー``); a class alone on
its line (an exception without a message) only where Python prints one, after its traceback.

The analysis agent also reports a failed code run as an ``error`` event of the ``code_exec``
step, with Python's text and no error code: not the end of the turn (the model is shown the
error and tries again), and said already by the ``code_exec`` event's line.
:func:`retried_code_error` tells such an event from an error that ends a task.
"""

from __future__ import annotations

import re
from typing import Final, TypeGuard

from keiri_agent.events import ErrorEvent, EventType, RunEvent
from keiri_agent.sandbox.failure_words import GENERIC, KINDS, english_hidden, failure_said
from keiri_agent.sandbox.outcome import ExecutionFailure

__all__ = ["MAX_ERROR_LINE", "error_summary", "retried_code_error"]

MAX_ERROR_LINE = 200  # characters of the error quoted in one progress line
# ``Kind: message`` or ``Kind`` at a line's start, the kind after any module path
_RAISED: Final = re.compile(
    r"(?:[A-Za-z_]\w*\.)*(?P<kind>[^\W\d]\w*)(?:(?P<colon>:)(?: (?P<message>.*))?)?"
)
_CLASS_NAME: Final = re.compile(
    r"_*(?:\w*(?:Error|Exception|Warning|Exit|Interrupt|Iteration|Violation)"
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[^\W\d]\w*(?:エラー|例外))"
)
# The worker's lines of the code where it failed (``3 行目: df['売上']``, ``…（ほか 4 行）``)
_CODE_LINE: Final = re.compile(r"\d+ 行目: |…（ほか \d+ 行）$")
_JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
# The sandbox's own line for a run it stopped at a limit (``ExecutionOutcome.summary_ja``)
_STOPPED: Final = "中断: "


def error_summary(stderr: str) -> str:
    """The last error of ``stderr`` said in Japanese, as the module says, cut to one line."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    while lines and _CODE_LINE.match(lines[-1]):
        lines.pop()
    if not lines:
        return GENERIC if stderr.strip() else ""
    failure = _last_exception(lines)
    if failure is not None:
        line = failure_said(failure)
    else:
        last = lines[-1].strip()
        readable = _JAPANESE.search(last) and not english_hidden(_as_failure(last))
        line = last if readable else GENERIC
    line = " ".join(line.split())
    return line if len(line) <= MAX_ERROR_LINE else line[:MAX_ERROR_LINE] + "…"


def _as_failure(text: str) -> ExecutionFailure:
    return ExecutionFailure(type="", message=text)


def _last_exception(lines: list[str]) -> ExecutionFailure | None:
    """The last exception ``lines`` print (its message's further lines with it), unless the
    sandbox stopped the run after it."""
    if lines[-1].startswith(_STOPPED):
        return None
    for at in range(len(lines) - 1, -1, -1):
        raised = _RAISED.fullmatch(lines[at])
        if raised is None or not _is_class(raised["kind"]):
            continue
        after_frames = at > 0 and lines[at - 1][:1].isspace()
        if raised["colon"] or after_frames:
            more = [line for line in lines[at + 1 :] if not _CODE_LINE.match(line)]
            message = "\n".join([raised["message"] or "", *more]).strip()
            return ExecutionFailure(type=raised["kind"], message=message)
    return None


def _is_class(kind: str) -> bool:
    return kind in KINDS or _CLASS_NAME.fullmatch(kind) is not None


def retried_code_error(event: RunEvent) -> TypeGuard[ErrorEvent]:
    """Whether ``event`` is the error of a failed code run that the agent goes on after (no
    error code: Python's exception, not a ``BlockError``)."""
    return (
        isinstance(event, ErrorEvent) and event.step == EventType.CODE_EXEC and event.error is None
    )
