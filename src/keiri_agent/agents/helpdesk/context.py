"""What the help-desk graph's nodes use besides the state, and their progress events.

Dependencies that are not state (the LLM client, the tools, the prompts, the event sink, the
limits) travel in the LangGraph runtime context, so tests and the UI pass their own without
patching anything.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.tools import BaseTool

from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.config import DEFAULT_HELPDESK_MAX_SUBTASKS
from keiri_agent.events import EventEmitter, NullEmitter
from keiri_agent.llm import LLMClient

__all__ = ["HelpDeskContext", "log", "stage", "subtask_node_id"]

logger = logging.getLogger("keiri_agent.agents.helpdesk.graph")


@dataclass
class HelpDeskContext:
    """What the nodes use besides the state. ``llm`` should already report to the run's
    events and ledger; nodes only add their node id. ``max_subtasks`` caps the plan (which hits
    count as found: ``grounding.split_relevant``)."""

    llm: LLMClient
    tools: Sequence[BaseTool]
    prompts: HelpDeskAgentPrompts = field(default_factory=HelpDeskAgentPrompts)
    events: EventEmitter = field(default_factory=NullEmitter)
    default_k: int | None = None  # the ``k`` of a search call that does not give one
    max_subtasks: int = DEFAULT_HELPDESK_MAX_SUBTASKS


def subtask_node_id(index: int) -> str:
    """The node id of a subtask's events: ``subtask[0]`` for the first."""
    return f"subtask[{index}]"


def stage(ctx: HelpDeskContext, node_id: str, step: str, status: str) -> None:
    ctx.events.emit("stage", node_id=node_id, step=step, status=status)


def log(ctx: HelpDeskContext, node_id: str, msg: str, level: str = "info") -> None:
    ctx.events.emit("log", node_id=node_id, msg=msg, level=level)
    logger.log(logging.WARNING if level == "warning" else logging.INFO, "%s: %s", node_id, msg)
