"""The one line a person reads about a failed code execution: why it failed, in Japanese.

A ``code_exec`` event of a failed run carries, at the end of its ``stderr``, the error the
model was shown (``KeyError: '存在しない列'``, ``PolicyViolation: ...``, a sandbox limit). The
progress lines of the CLI and the pages quote it, so the reason reaches the user, not only the
model: an exception as ``sandbox.failure_words`` says it (its kind in Japanese and the values
its message quotes; the model keeps Python's English).

The analysis agent also reports a failed code run as an ``error`` event of the ``code_exec``
step, with Python's text and no error code: not the end of the turn (the model is shown the
error and tries again), and said already by the ``code_exec`` event's line.
:func:`retried_code_error` tells such an event from an error that ends a task.
"""

from __future__ import annotations

import re
from typing import TypeGuard

from keiri_agent.events import ErrorEvent, EventType, RunEvent
from keiri_agent.sandbox.failure_words import failure_said
from keiri_agent.sandbox.outcome import ExecutionFailure

__all__ = ["MAX_ERROR_LINE", "error_summary", "retried_code_error"]

MAX_ERROR_LINE = 200  # characters of the error quoted in one progress line
_ERROR_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Violation|Exit|Interrupt)\b.*"
)


def error_summary(stderr: str) -> str:
    """The last ``Type: message`` line of ``stderr`` said in Japanese (else its last line), cut
    to one line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    found = [line for line in lines if _ERROR_LINE.match(line)]
    line = lines[-1]
    if found:
        kind, _, message = found[-1].partition(":")
        failure = ExecutionFailure(type=kind.rsplit(".", 1)[-1], message=message.strip())
        line = " ".join(failure_said(failure).split())
    return line if len(line) <= MAX_ERROR_LINE else line[:MAX_ERROR_LINE] + "…"


def retried_code_error(event: RunEvent) -> TypeGuard[ErrorEvent]:
    """Whether ``event`` is the error of a failed code run that the agent goes on after (no
    error code: Python's exception, not a ``BlockError``)."""
    return (
        isinstance(event, ErrorEvent) and event.step == EventType.CODE_EXEC and event.error is None
    )
