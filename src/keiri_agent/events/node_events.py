"""An agent's events as the events of the node (or task) that runs it, with its cancellation points.

A block that runs an agent (``data.convert``, ``ai.helpdesk_answer``, ``ai.analyze_data``) and the
server's analysis task hand the agent a :class:`NodeEvents` instead of their own stream. One rule
for all of them:

- **Re-tagging.** Given a ``node_id``, every event carries it (the agent's own step names stay in
  ``stage.step``; a stage whose agent node is not its step, such as a help-desk subtask, reads
  ``subtask/step``). Without one (a task's stream), events pass unchanged.
- **Cancellation.** An event that starts a step (``stage`` with ``status: start``) or runs
  generated code (``code_gen``) is a cancellation point: ``check_cancelled`` is called first and
  its error stops the agent before the step or the code runs. Other events (logs, LLM usage, a
  step's end, an error being reported) never raise, so an agent's cleanup is not cut short.
- **Usage.** ``llm_call`` events are counted (:attr:`NodeEvents.llm_calls`, :attr:`tokens`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from keiri_agent.events.models import EventType, RunEvent
from keiri_agent.events.stream import EventEmitter

__all__ = ["NodeEvents", "is_cancellation_point"]


def is_cancellation_point(kind: str, fields: Mapping[str, Any]) -> bool:
    """True for an event that starts a step or runs generated code (see the module docstring)."""
    return kind == "code_gen" or (kind == "stage" and fields.get("status") == "start")


class NodeEvents:
    """An agent's events re-tagged as ``node_id``'s, cancellable at each step: see the module."""

    def __init__(
        self,
        events: EventEmitter,
        check_cancelled: Callable[[], None],
        *,
        node_id: str | None = None,
    ) -> None:
        self.events = events
        self.check_cancelled = check_cancelled
        self.node_id = node_id
        self.llm_calls = 0
        self.tokens = 0

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent | None:
        name = str(kind)
        if is_cancellation_point(name, fields):
            self.check_cancelled()
        if name == "llm_call":
            self.llm_calls += 1
            total = fields.get("total_tokens") or (
                int(fields.get("input_tokens") or 0) + int(fields.get("output_tokens") or 0)
            )
            self.tokens += int(total)
        if self.node_id is not None:
            agent_node = fields.get("node_id")
            if name == "stage" and agent_node and agent_node != fields.get("step"):
                fields["step"] = f"{agent_node}/{fields['step']}"
            fields["node_id"] = self.node_id
        return self.events.emit(kind, **fields)
