"""Seed 001's models under the seed's names: the plan, tool and reflection results, the
subtask record, the final ``AgentResult`` and the two LangGraph states.

Extensions beyond the seed (kept additive): ``ToolResult.error`` records a tool call that could
not run, ``Subtask.index`` keeps the plan order of results that finish in any order,
``CitedSource`` is a search result the answer cites, and ``AgentResult`` carries the
sources, the unresolved subtasks, the token usage of the question and the run log.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Literal, TypedDict

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from keiri_agent.agents.helpdesk.knowledge import SearchOutput
from keiri_agent.llm import UsageTotals

__all__ = [
    "MAX_CHALLENGE_COUNT",
    "AgentResult",
    "AgentState",
    "AgentSubGraphState",
    "CitedSource",
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
    subtasks: list[str] = Field(..., description="問題を解決するためのサブタスクリスト")


class ToolResult(BaseModel):
    """One tool call: its name, its arguments (JSON text) and what it found."""

    tool_name: str
    args: str
    results: list[SearchOutput] = Field(default_factory=list)
    error: str | None = None  # the call could not run (bad arguments, unknown tool, failure)


class ReflectionResult(BaseModel):
    advice: str = Field(
        ...,
        description="回答が不十分な場合、次の試行で何をどう調べ直すべきかの具体的な助言"
        "（十分な場合は簡単な評価）",
    )
    is_completed: bool = Field(
        ..., description="サブタスクの回答が検索結果にもとづいて十分に答えられていれば true"
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

    @property
    def unresolved(self) -> bool:
        """The challenge limit ended the subtask, not a positive reflection."""
        return not self.is_completed

    def used_results(self) -> list[SearchOutput]:
        """The search results its answer was written from (those of the last attempt)."""
        if not self.tool_results:
            return []
        return [hit for result in self.tool_results[-1] for hit in result.results]


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


class TokenUsage(BaseModel):
    """The LLM usage of one question (every call of every subtask)."""

    calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    latency_ms: float = 0.0

    @classmethod
    def from_totals(cls, totals: UsageTotals) -> TokenUsage:
        return cls(
            calls=totals.calls,
            failed_calls=totals.failed_calls,
            input_tokens=totals.input_tokens,
            output_tokens=totals.output_tokens,
            total_tokens=totals.total_tokens,
            latency_ms=round(totals.latency_ms, 3),
        )


class AgentResult(BaseModel):
    question: str
    plan: Plan
    subtasks: list[Subtask]
    answer: str
    sources: list[CitedSource] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)  # task names of unresolved subtasks
    usage: TokenUsage = Field(default_factory=TokenUsage)
    run_log: str | None = None


class AgentState(TypedDict, total=False):
    """The main graph's state (seed 001 §3.1)."""

    question: str
    plan: list[str]
    current_step: int
    subtask_results: Annotated[Sequence[Subtask], operator.add]
    last_answer: str


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
