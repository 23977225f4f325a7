"""What plan generation takes and returns: options, requirements, attempts, the generated plan.

``Requirement`` is the seed 004 §7 model. It is the same field definition that
``ui.interactive_input`` uses in ``inquire`` mode (``to_field()`` gives that form), plus a
``target`` saying where the answer goes: a plan variable, a node input, or the instruction's
context for the next generation round.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.design.topk import DEFAULT_K_PER_CATEGORY, DEFAULT_MAX_TOTAL, RetrievalMode
from keiri_agent.plan.issues import PlanIssue

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_DOCS_CHARS",
    "ApplyMode",
    "AttemptRecord",
    "DesignEngineOptions",
    "GeneratedPlan",
    "GenerationStatus",
    "NodeChange",
    "Requirement",
    "RequirementTarget",
]

DEFAULT_MAX_ATTEMPTS = 2  # seed 004 §6: v1.1 sends validation errors back once
DEFAULT_MAX_DOCS_CHARS = 4000  # seed 004 §2: documents are normalized to ~4,000 characters
ApplyMode = Literal["hint", "compose", "llm-only"]
GenerationStatus = Literal["ok", "needs_input", "failed", "fallback"]


class DesignEngineOptions(BaseModel):
    """Knobs of :func:`keiri_agent.design.generate_plan` (seed 004 「オプション」)."""

    model_config = ConfigDict(extra="forbid")

    max_attempts: int = Field(default=DEFAULT_MAX_ATTEMPTS, ge=1, le=5)
    retrieval_mode: RetrievalMode = "hybrid"
    topk_per_category: int = Field(default=DEFAULT_K_PER_CATEGORY, ge=1, le=30)
    topk_total: int = Field(default=DEFAULT_MAX_TOTAL, ge=1, le=30)
    max_docs_chars: int = Field(default=DEFAULT_MAX_DOCS_CHARS, ge=0, le=100_000)
    suggest_when: bool = True
    suggest_foreach: bool = True
    foreach_var_name: str = "item"
    dry_run: bool = True
    # compose only: "<template>.<import>" → "<template>.<export>" (or "vars.<name>", "${...}"),
    # chosen by a person where compose found the binding ambiguous (seed 004 §4 合成ルール)
    bindings: dict[str, str] = Field(default_factory=dict)


class RequirementTarget(BaseModel):
    """Where an answer goes."""

    kind: Literal["var", "input", "context"]
    var: str | None = None  # kind=var: plan vars[var]
    node: str | None = None  # kind=input: the node's in[port]
    port: str | None = None


class Requirement(BaseModel):
    """One missing item to ask for (seed 004 §7)."""

    id: str
    type: Literal[
        "text", "select", "boolean", "number", "file", "files", "folder", "table", "enum"
    ] = "text"
    label: str | None = None
    description: str | None = None
    options: list[Any] = Field(default_factory=list)
    required: bool = True
    accept: str | None = None
    hint: str | None = None
    validation: dict[str, Any] = Field(default_factory=dict)
    default: Any = None
    target: RequirementTarget

    def to_field(self) -> dict[str, Any]:
        """The ``ui.interactive_input`` requirement (inquire mode) for this item."""
        field = self.model_dump(exclude={"target"}, exclude_none=True)
        if not field.get("options"):
            field.pop("options", None)
        if not field.get("validation"):
            field.pop("validation", None)
        return field


class NodeChange(BaseModel):
    """One node's difference between two attempts."""

    node_id: str
    change: Literal["added", "removed", "changed"]
    keys: list[str] = Field(default_factory=list)  # for "changed": top-level keys that differ

    def describe(self) -> str:
        if self.change == "changed":
            return f"{self.node_id}: 変更（{', '.join(self.keys)}）"
        return f"{self.node_id}: {'追加' if self.change == 'added' else '削除'}"


class AttemptRecord(BaseModel):
    """One wiring attempt (stage 2) and what validation said about it."""

    number: int
    plan: dict[str, Any] | None = None
    errors: list[PlanIssue] = Field(default_factory=list)
    output_error: str | None = None  # the reply did not fit the schema at all
    diff: list[NodeChange] = Field(default_factory=list)  # against the previous attempt
    duration_ms: float = 0.0

    @property
    def valid(self) -> bool:
        return self.plan is not None and not self.errors and self.output_error is None


class GeneratedPlan(BaseModel):
    """The result of one generation (seed 004 「返却モデル」, with the metrics and the chat)."""

    status: GenerationStatus
    plan: dict[str, Any] | None = None
    yaml: str | None = None
    reasoning: str = ""
    attempts: list[AttemptRecord] = Field(default_factory=list)
    errors: list[PlanIssue] = Field(default_factory=list)
    requirements: list[Requirement] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    candidates: list[str] = Field(default_factory=list)
    skeleton: dict[str, Any] | None = None
    dry_run: dict[str, Any] | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    run_log: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"
