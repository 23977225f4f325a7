"""``GET /agent/sse``: a task's events as Server-Sent Events that survive reconnects.

Every message carries ``id`` (the event's id in the task's log: 1, 2, 3, ...), ``event`` (its
kind: ``stage``, ``log``, ``code_gen``, ``code_exec``, ``error``, plan node events, ...),
``data`` (the event's JSON object, exactly the line in ``events.jsonl``; the events of a failed
code step also carry ``reason``, Python's error said in Japanese: ``event_words``) and ``retry``
(how long a browser waits before reconnecting). A comment line (``: ping``) goes out every ~15
seconds so that proxies keep an idle stream open.

Reconnecting: a client sends the last id it saw as the ``Last-Event-ID`` header (browsers do
this themselves) or as the ``last_event_id`` query parameter (``EventSource`` cannot set
headers; the header wins when both are present). The events after it are replayed from the
task's persisted log, then live events follow from the task's stream (which itself reads from
the log what its bounded in-memory tail no longer holds), so nothing is lost and nothing is
sent twice. The log is read only up to the last event known to be complete, once, in batches
of ``TAIL_EVENTS`` events: a client reading a 100,000-item run costs the server one batch.

A paused task keeps its stream open: a plan waiting for answers shows its ``node_waiting``
events and the stream goes on with the continued run once answers arrive (heartbeats keep it
open meanwhile).

The stream ends with a ``done`` event whose id is one past the last event and whose data is
the task's final status, answer and files. A client reconnecting after ``done`` (with that
id) gets ``204 No Content``, which tells a browser to stop reconnecting. When the server stops,
every open stream ends once its task has settled, with a ``shutdown`` event (no id, so a
client reconnecting after the restart with its last id misses nothing). The task does not
depend on any of this: it runs on when every client has gone.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from keiri_agent.errors import ErrorCode
from keiri_agent.events import RunEvent
from keiri_agent.events.logfile import LogCursor
from keiri_agent.events.stream import TAIL_EVENTS
from keiri_agent.server.errors import ApiError
from keiri_agent.server.event_words import shown_json
from keiri_agent.server.tasks import Task, TaskRegistry

__all__ = [
    "DEFAULT_PING_S",
    "DONE_EVENT",
    "RETRY_MS",
    "SHUTDOWN_EVENT",
    "last_event_id",
    "task_events",
]

DEFAULT_PING_S = 15.0
RETRY_MS = 2000
DONE_EVENT = "done"
SHUTDOWN_EVENT = "shutdown"  # the server stops; reconnect after the restart
PAUSED_POLL_S = 0.5  # how often a stream of a paused task looks whether it goes on
MAX_EVENT_ID = 10**12


def last_event_id(request: Request, query_value: str | None) -> int:
    """The id a reconnecting client saw last: the header, else the query parameter, else 0."""
    raw = request.headers.get("last-event-id") or query_value
    if raw is None or not raw.strip():
        return 0
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_EVENT_ID:
        raise ApiError(
            400,
            ErrorCode.INVALID_LAST_EVENT_ID,
            f"Last-Event-ID「{raw[:40]}」は 0 以上の整数ではありません。",
            hint="受け取った最後のイベントの id をそのまま送ってください（最初から受け取るなら省略）。",
        )
    return value


def _message(event: RunEvent) -> ServerSentEvent:
    return ServerSentEvent(
        data=shown_json(event), event=event.event, id=str(event.id), retry=RETRY_MS
    )


def _logged(cursor: LogCursor, after: int, upto: int) -> list[RunEvent]:
    """The next batch (at most ``TAIL_EVENTS``) of the events ``after < id <= upto`` from the
    task's log; the cursor goes on where its last batch stopped."""
    # Stop at ``upto``: a line after it may still be being written by the task's thread (or,
    # after a crash, may never have been finished).
    return cursor.read(after, upto, TAIL_EVENTS)


def _done_payload(task: Task) -> dict[str, Any]:
    return {
        "task_id": task.id,
        "status": str(task.status),
        "answer": task.answer,
        "files": task.files,
        "error": task.error,
    }


def _shutdown_message(task: Task) -> ServerSentEvent:
    data = {
        "task_id": task.id,
        "status": str(task.status),
        "message": "サーバーが停止します。再起動の後に同じ URL へ再接続すると続きを受け取れます。",
    }
    # No id: a client reconnecting with its last event's id misses nothing.
    return ServerSentEvent(
        data=json.dumps(data, ensure_ascii=False), event=SHUTDOWN_EVENT, retry=RETRY_MS
    )


async def _stream(registry: TaskRegistry, task: Task, after: int) -> AsyncIterator[ServerSentEvent]:
    last = after
    cursor = LogCursor(task.events_path)  # a long log is read once, a batch at a time
    while True:
        live = task.events  # None unless the task is queued or running in this process
        upto = task.last_event_id  # every event up to this one is complete in the log
        if live is not None:  # ... and not held back by its stream until it is on disk
            upto = min(upto, live.last_id)
        while last < upto:
            batch = await anyio.to_thread.run_sync(_logged, cursor, last, upto)
            if not batch:
                break
            for event in batch:
                last = event.id
                yield _message(event)
        if live is not None:
            async for event in live.asubscribe(after_id=max(last, upto)):
                last = event.id
                yield _message(event)
        elif task.finished:
            # The status is final (it is saved before the stream closes).
            data = json.dumps(_done_payload(task), ensure_ascii=False)
            done_id = max(last, task.last_event_id) + 1
            yield ServerSentEvent(data=data, event=DONE_EVENT, id=str(done_id), retry=RETRY_MS)
            return
        elif registry.stopping.is_set():
            yield _shutdown_message(task)
            return
        else:  # paused (waiting for answers, interrupted) or between two states
            await anyio.sleep(PAUSED_POLL_S)
        task = await anyio.to_thread.run_sync(registry.get, task.id)


def task_events(
    registry: TaskRegistry,
    task: Task,
    after: int,
    *,
    ping_s: float = DEFAULT_PING_S,
    grace_s: float = 0.0,
) -> Response:
    """The SSE response for ``task`` from the event after ``after`` (204 when all was sent).
    ``grace_s``: how long the stream may take to end by itself once the server stops."""
    if task.finished and after > task.last_event_id:
        return Response(status_code=204)
    return EventSourceResponse(
        _stream(registry, task, after),
        ping=ping_s,
        ping_message_factory=lambda: ServerSentEvent(comment="ping"),
        shutdown_event=anyio.Event(),
        shutdown_grace_period=grace_s,
    )
