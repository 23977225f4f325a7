"""Seed 001's models under the seed's names: the plan, tool and reflection results, the
subtask record, the final ``AgentResult`` and the two LangGraph states.

Extensions beyond the seed (kept additive): ``ToolResult.error`` records a tool call that could
not run and ``ToolResult.weak_results`` the hits under the relevance floor; ``Subtask.index``
keeps the plan order of results that finish in any order, and a subtask records which
citations of its answer were verified or removed and why it stayed unresolved; ``CitedSource``
is a search result the answer cites, and ``AgentResult`` carries the status, the sources, the
unresolved subtasks, what was removed or flagged, the token usage and the run log.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Literal, TypedDict

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from keiri_agent.agents.helpdesk.knowledge import SearchOutput
from keiri_agent.llm import UsageSums

__all__ = [
    "MAX_CHALLENGE_COUNT",
    "AgentResult",
    "AgentState",
    "AgentSubGraphState",
    "AnswerStatus",
    "CitedSource",
    "FinalCheck",
    "Plan",
    "ReflectionResult",
    "SearchOutput",
    "Subtask",
    "TokenUsage",
    "ToolResult",
    "citation",
]

# Seed 001: a subtask gets at most three select → execute → answer → reflect rounds.
MAX_CHALLENGE_COUNT = 3


class Plan(BaseModel):
    subtasks: list[str] = Field(
        ..., title="サブタスク", description="問題を解決するためのサブタスクリスト"
    )


class ToolResult(BaseModel):
    """One tool call: its name, its arguments (JSON text) and what it found."""

    tool_name: str
    args: str
    results: list[SearchOutput] = Field(default_factory=list)  # relevant hits (the model saw)
    error: str | None = None  # the call could not run (bad arguments, unknown tool, failure)
    # Hits under the relevance floor: not shown to the model, never a source.
    weak_results: list[SearchOutput] = Field(default_factory=list)


class ReflectionResult(BaseModel):
    advice: str = Field(
        ...,
        title="助言",
        description="回答が不十分な場合、次の試行で何をどう調べ直すべきかの具体的な助言"
        "（十分な場合は簡単な評価）",
    )
    is_completed: bool = Field(
        ...,
        title="回答が十分か",
        description="サブタスクの回答が検索結果にもとづいて十分に答えられていれば true",
    )


class Subtask(BaseModel):
    """What one subtask's subgraph produced."""

    index: int = 0  # position in the plan
    task_name: str
    tool_results: list[list[ToolResult]] = Field(default_factory=list)  # one list per attempt
    reflection_results: list[ReflectionResult] = Field(default_factory=list)
    is_completed: bool
    subtask_answer: str
    challenge_count: int
    # The last attempt's answer: citation labels that named a relevant hit of that attempt,
    # and those that did not (removed from ``subtask_answer``).
    verified_citations: list[str] = Field(default_factory=list)
    removed_citations: list[str] = Field(default_factory=list)
    # Why the subtask is unresolved (None when resolved): tool_errors, no_results,
    # below_floor, no_citation (checked by the agent), not_completed (the reflection's verdict).
    unresolved_reason: str | None = None

    @property
    def unresolved(self) -> bool:
        """Not both grounded in a relevant, cited hit and judged complete by the reflection."""
        return not self.is_completed

    def used_results(self) -> list[SearchOutput]:
        """The relevant search results of the last attempt (what its answer was written from)."""
        if not self.tool_results:
            return []
        return [hit for result in self.tool_results[-1] for hit in result.results]

    def cited_results(self) -> list[SearchOutput]:
        """The hits of the last attempt its answer cites (verified)."""
        return [hit for hit in self.used_results() if citation(hit) in self.verified_citations]


def citation(hit: SearchOutput) -> str:
    """The label a cited search result is written with: 【出典: 手引き.pdf p.3】,
    【出典: Q&A よくある質問.csv 12 行目】. File names are always kept."""
    prefix = "Q&A " if hit.source == "qa" else ""
    return f"【出典: {prefix}{hit.citation()}】"


class CitedSource(BaseModel):
    """A search result the final answer cites."""

    file_name: str
    page: int | None = None
    row: int | None = None
    source: Literal["manual", "qa"]
    chunk_id: str
    citation: str

    @classmethod
    def from_hit(cls, hit: SearchOutput) -> CitedSource:
        return cls(
            file_name=hit.file_name,
            page=hit.page,
            row=hit.row,
            source=hit.source,
            chunk_id=hit.chunk_id,
            citation=citation(hit),
        )


class TokenUsage(UsageSums):
    """The LLM usage of one question (every call of every subtask)."""


AnswerStatus = Literal["answered", "partial", "unresolved"]


class AgentResult(BaseModel):
    """``status``: answered (every subtask grounded), partial (some), unresolved (none: the
    answer only says the materials do not cover the question). ``sources``: the hits the
    answer cites, each verified against what was retrieved for this question."""

    question: str
    plan: Plan
    subtasks: list[Subtask]
    answer: str
    status: AnswerStatus = "answered"
    sources: list[CitedSource] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)  # task names of unresolved subtasks
    removed_citations: list[str] = Field(default_factory=list)  # of the final answer
    removed_sentences: list[str] = Field(default_factory=list)  # its uncited facts, removed
    japanese: bool = True  # False: the answer stayed non-Japanese after one rewrite
    revised: bool = False  # the final answer was sent back once (citations or language)
    omitted_subtasks: list[str] = Field(default_factory=list)  # planned beyond the cap
    usage: TokenUsage = Field(default_factory=TokenUsage)
    run_log: str | None = None


class FinalCheck(BaseModel):
    """What ``create_answer`` checked and changed in the final answer."""

    status: AnswerStatus
    removed_citations: list[str] = Field(default_factory=list)
    removed_sentences: list[str] = Field(default_factory=list)  # stated facts with no citation
    cited: list[SearchOutput] = Field(default_factory=list)
    japanese: bool = True
    revised: bool = False


class AgentState(TypedDict, total=False):
    """The main graph's state (seed 001 §3.1)."""

    question: str
    plan: list[str]
    omitted_subtasks: list[str]
    current_step: int
    subtask_results: Annotated[Sequence[Subtask], operator.add]
    last_answer: str
    answer_check: FinalCheck


class AgentSubGraphState(TypedDict, total=False):
    """One subtask's state (seed 001 §3.1); ``messages`` are LangChain messages."""

    question: str
    plan: list[str]
    current_step: int  # the subtask's index in the plan
    subtask: str
    is_completed: bool
    messages: list[BaseMessage]
    challenge_count: int
    tool_results: Annotated[Sequence[Sequence[ToolResult]], operator.add]
    reflection_results: Annotated[Sequence[ReflectionResult], operator.add]
    subtask_answer: str
    verified_citations: list[str]
    removed_citations: list[str]
    grounding_issue: str | None  # the last attempt's (see grounding.attempt_issue)
    retry_advice: str | None  # set when the agent overrode a reflection that said "done"
