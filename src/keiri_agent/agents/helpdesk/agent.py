"""``HelpDeskAgent``: seed 001's help-desk agent, usable from Python, the CLI, the app and as
the ``ai.helpdesk_answer`` block.

``HelpDeskAgent(kb).run_agent(question)`` plans, researches each subtask in parallel against the
knowledge base (``search_manual`` / ``search_qa``) and returns an ``AgentResult`` with the answer,
its status (answered / partial / unresolved), the sources it cites (each verified against what
was retrieved), the unresolved subtasks, what was removed or flagged and the tokens used.
Every run is logged as events (``runs/helpdesk/<timestamp>.jsonl`` unless the caller passes its
own emitter); with ``on_event`` the graph runs in a worker thread and each event is handed to
the callback in the calling thread as it happens (the CLI prints them; Streamlit may only draw
from its script thread).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool

from keiri_agent.agents.helpdesk.answer import collect_sources
from keiri_agent.agents.helpdesk.context import HelpDeskContext
from keiri_agent.agents.helpdesk.graph import MainGraph, build_graph
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.agents.helpdesk.models import (
    AgentResult,
    FinalCheck,
    Plan,
    Subtask,
    TokenUsage,
)
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.agents.helpdesk.tools import make_tools
from keiri_agent.config import LLMRole, Settings, load_settings
from keiri_agent.errors import BlockError, input_error
from keiri_agent.events import EventEmitter, EventStream, RunEvent, open_run
from keiri_agent.events.follow import run_following
from keiri_agent.llm import LLMClient, UsageLedger, get_llm
from keiri_agent.privacy import job_scope

__all__ = ["AGENT_ID", "HelpDeskAgent", "run_agent"]

AGENT_ID = "helpdesk"
logger = logging.getLogger(__name__)


class HelpDeskAgent:
    """The help-desk agent over a knowledge base (or any tools with the same names).

    ``kb``: the knowledge base to search; ``tools``: LangChain tools to use instead (tests,
    other sources). With neither, the index at ``KEIRI_HELPDESK_INDEX`` is opened, and closed by
    ``close()`` (or leaving a ``with`` block); a ``kb`` given is the caller's to close. ``llm``
    defaults to the ``helpdesk`` role's model; ``events`` receives every run's events instead
    of a new run log; ``default_k`` is the number of results of a search call that does not
    say (the tool's own default otherwise). The knowledge base flags hits below its relevance
    floor (``KEIRI_HELPDESK_MIN_RELEVANCE``, or ``KEIRI_HELPDESK_MIN_SIMILARITY`` for semantic
    Q/A hits); the agent keeps them from the model (``grounding.split_relevant``).
    """

    def __init__(
        self,
        kb: KnowledgeBase | None = None,
        *,
        tools: Sequence[BaseTool] | None = None,
        settings: Settings | None = None,
        llm: LLMClient | None = None,
        prompts: HelpDeskAgentPrompts | None = None,
        events: EventEmitter | None = None,
        default_k: int | None = None,
    ) -> None:
        if kb is not None and tools is not None:
            raise ValueError("give either kb or tools, not both")
        self.settings = settings if settings is not None else load_settings()
        self._owned: KnowledgeBase | None = None
        if tools is None:
            if kb is None:
                kb = self._owned = KnowledgeBase.open(
                    self.settings.keiri_helpdesk_index, settings=self.settings
                )
            tools = make_tools(kb)
        self.kb = kb
        self.tools: list[BaseTool] = list(tools)
        self.llm = llm if llm is not None else get_llm(LLMRole.HELPDESK, settings=self.settings)
        self.prompts = prompts if prompts is not None else HelpDeskAgentPrompts()
        self.events = events
        self.default_k = default_k

    def close(self) -> None:
        """Close the knowledge base this agent opened itself (idempotent)."""
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def __enter__(self) -> HelpDeskAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_graph(self) -> MainGraph:
        """The compiled main graph; invoke it with ``context=HelpDeskContext(...)``."""
        return build_graph()

    def run_agent(
        self, question: str, *, on_event: Callable[[RunEvent], None] | None = None
    ) -> AgentResult:
        """Answer ``question``; raises BlockError for an empty question and for LLM failures."""
        if not question.strip():
            raise input_error(
                "質問が空です。",
                "XYZ システムについて知りたいことを日本語で入力してください"
                "（例: パスワードを忘れたときの再設定方法は？）。",
            )
        if self.events is not None and on_event is not None:
            raise ValueError("on_event reads the agent's own run log; do not pass events too")
        stream = (
            open_run(AGENT_ID, runs_dir=self.settings.keiri_runs_dir)
            if self.events is None
            else None
        )
        emitter: EventEmitter = self.events if self.events is not None else stream  # type: ignore[assignment]
        if on_event is None:
            try:
                result = self._run(question.strip(), emitter)
            finally:
                if stream is not None:
                    stream.close()
        else:
            assert stream is not None
            result = self._run_streaming(question.strip(), stream, on_event)
        if stream is not None and stream.log_path is not None:
            result.run_log = str(stream.log_path)
        return result

    def _run(self, question: str, events: EventEmitter) -> AgentResult:
        ledger = UsageLedger()
        context = HelpDeskContext(
            llm=self.llm.bind(events=events, ledger=ledger),
            tools=self.tools,
            prompts=self.prompts,
            events=events,
            default_k=self.default_k,
            max_subtasks=self.settings.keiri_helpdesk_max_subtasks,
        )
        logger.info("helpdesk: question %r", question)
        redactor = getattr(events, "redactor", None)
        try:
            # One question, one set of placeholders for personal data in its prompts.
            with job_scope(learnt=redactor.learn_personal if redactor is not None else None):
                final: dict[str, Any] = self.create_graph().invoke(
                    {"question": question, "current_step": 0}, context=context
                )
        except BlockError as exc:
            logger.info("helpdesk: failed: %s", exc)  # shown by the caller, not twice
            events.emit("error", step="helpdesk", message=exc.message, error=exc.to_dict())
            raise
        subtasks: list[Subtask] = sorted(final["subtask_results"], key=lambda s: s.index)
        check: FinalCheck = final["answer_check"]
        result = AgentResult(
            question=question,
            plan=Plan(subtasks=final["plan"]),
            subtasks=subtasks,
            answer=final["last_answer"],
            status=check.status,
            sources=collect_sources(check),
            unresolved=[s.task_name for s in subtasks if s.unresolved],
            removed_citations=check.removed_citations,
            removed_sentences=check.removed_sentences,
            japanese=check.japanese,
            revised=check.revised,
            omitted_subtasks=list(final.get("omitted_subtasks") or []),
            usage=TokenUsage.of(ledger.totals()),
        )
        logger.info(
            "helpdesk: %s with %d subtasks (%d unresolved), %d tokens",
            result.status,
            len(subtasks),
            len(result.unresolved),
            result.usage.total_tokens,
        )
        return result

    def _run_streaming(
        self, question: str, stream: EventStream, on_event: Callable[[RunEvent], None]
    ) -> AgentResult:
        return run_following(
            stream, lambda: self._run(question, stream), on_event, name="keiri-helpdesk-run"
        )


def run_agent(
    question: str,
    *,
    index_dir: Path | str | None = None,
    settings: Settings | None = None,
    llm: LLMClient | None = None,
    prompts: HelpDeskAgentPrompts | None = None,
    events: EventEmitter | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    default_k: int | None = None,
) -> AgentResult:
    """Answer ``question`` from the knowledge base at ``index_dir`` (default
    ``KEIRI_HELPDESK_INDEX``) in one call."""
    settings = settings if settings is not None else load_settings()
    directory = Path(index_dir) if index_dir is not None else settings.keiri_helpdesk_index
    with KnowledgeBase.open(directory, settings=settings) as kb:
        agent = HelpDeskAgent(
            kb, settings=settings, llm=llm, prompts=prompts, events=events, default_k=default_k
        )
        return agent.run_agent(question, on_event=on_event)
