"""Running work while a caller follows its events live, and the event lines agents share.

``run_following(stream, work, on_event)`` runs ``work()`` in a worker thread and hands each
event of ``stream`` to ``on_event`` in the calling thread as it happens (a UI must update from
its own thread); the worker's exception is re-raised in the caller. ``llm_call_line`` and
``error_line`` are the Japanese one-liners every agent's progress view prints for those events.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from keiri_agent.events.models import ErrorEvent, LLMCall, RunEvent
from keiri_agent.events.stream import EventStream

__all__ = ["error_line", "llm_call_line", "run_following"]

T = TypeVar("T")


def run_following(
    stream: EventStream,
    work: Callable[[], T],
    on_event: Callable[[RunEvent], None],
    *,
    name: str = "keiri-run",
) -> T:
    """``work()``'s result; ``stream`` is closed when it ends, which ends the following."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = work()
        except BaseException as exc:  # handed to the calling thread below
            outcome["error"] = exc
        finally:
            stream.close()  # ends the subscription below

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    for event in stream.subscribe():
        on_event(event)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    result: T = outcome["result"]
    return result


def llm_call_line(event: LLMCall, where: str = "") -> str:
    status = "" if event.ok else f"、失敗 {event.error_code or ''}"
    return (
        f"  {where}LLM {event.model}: {event.total_tokens} トークン、"
        f"{event.latency_ms / 1000:.1f} 秒{status}"
    )


def error_line(event: ErrorEvent) -> str:
    return "  エラー: " + (event.message.strip().splitlines() or [""])[0]
