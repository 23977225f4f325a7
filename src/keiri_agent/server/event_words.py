"""The Japanese reason the server adds to the events of a failed code step, for the page.

A failed ``code_exec`` event carries in its ``stderr``, and the analysis agent's ``error`` event
of the ``code_exec`` step in its ``message``, Python's own text: what the model was shown
(``KeyError: '存在しない列'`` and a traceback). Those events go to the progress page with one more
field, ``reason``: the failure said in Japanese by ``agents.execlog.error_summary`` (its kind in
Japanese and the values its message quotes), the same line the CLI and the app print. The page
shows the reason and keeps Python's text behind a toggle; the task's log on disk is not changed.

The ``error`` event of the code step is not the task's end: the agent shows the failure to the
model and tries again. It goes out with ``continues: true`` (the page logs it instead of ending
the run with the red banner), and it does not stand for the task's own error event
(:func:`ends_task`; which events these are: ``execlog.retried_code_error``): a task failing later still sends its own error, with its code and hint.
"""

from __future__ import annotations

import json
from typing import Any

from keiri_agent.agents.execlog import error_summary, retried_code_error
from keiri_agent.events import CodeExec, ErrorEvent, RunEvent

__all__ = ["CONTINUES_FIELD", "REASON_FIELD", "ends_task", "shown_json"]

REASON_FIELD = "reason"
CONTINUES_FIELD = "continues"


def ends_task(event: RunEvent) -> bool:
    """Whether ``event`` is an error event that ends its task."""
    return isinstance(event, ErrorEvent) and not retried_code_error(event)


def _python_text(event: RunEvent) -> str | None:
    """The text written by Python (not by us) that a failed code step's event carries."""
    if isinstance(event, CodeExec) and event.success is False:
        return event.stderr
    if retried_code_error(event):
        return event.message
    return None


def shown_json(event: RunEvent) -> str:
    """The event's JSON as the page receives it: its log line, plus ``reason`` for a failed
    code step."""
    text = _python_text(event)
    if text is None:
        return event.to_json()
    data: dict[str, Any] = event.to_dict()
    data[REASON_FIELD] = error_summary(text)
    if retried_code_error(event):
        data[CONTINUES_FIELD] = True
    return json.dumps(data, ensure_ascii=False)
