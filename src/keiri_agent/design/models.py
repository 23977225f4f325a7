"""What plan generation takes and returns: options, requirements, attempts, the generated plan.

``Requirement`` is the seed 004 §7 model. It is the same field definition that
``ui.interactive_input`` uses in ``inquire`` mode (``to_field()`` gives that form), plus a
``target`` saying where the answer goes: a plan variable, a node input, or the instruction's
context for the next generation round.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.blocks.ui.field_types import FieldType
from keiri_agent.design.candidates import DEFAULT_TOKEN_BUDGET, CutBlock
from keiri_agent.design.compose import ComposeConflict
from keiri_agent.design.topk import DEFAULT_K_PER_CATEGORY, DEFAULT_MAX_TOTAL, RetrievalMode
from keiri_agent.plan import PlanIssue

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_DOCS_CHARS",
    "ApplyMode",
    "AttemptOutcome",
    "AttemptRecord",
    "DesignEngineOptions",
    "GeneratedPlan",
    "GenerationStatus",
    "NodeChange",
    "Requirement",
    "RequirementTarget",
    "SchemaChoice",
]

DEFAULT_MAX_ATTEMPTS = 3  # seed 004 §6: the first attempt and up to two repairs
DEFAULT_MAX_DOCS_CHARS = 4000  # seed 004 §2: documents are normalized to ~4,000 characters
ApplyMode = Literal["hint", "compose", "llm-only"]
GenerationStatus = Literal["ok", "needs_input", "failed", "fallback"]
SchemaChoice = Literal["auto", "strict", "tool"]
AttemptOutcome = Literal["valid", "invalid", "output_error", "dry_run_findings"]


class DesignEngineOptions(BaseModel):
    """Knobs of :func:`keiri_agent.design.generate_plan` (seed 004 「オプション」)."""

    model_config = ConfigDict(extra="forbid")

    max_attempts: int = Field(default=DEFAULT_MAX_ATTEMPTS, ge=1, le=5)
    retrieval_mode: RetrievalMode = "hybrid"
    topk_per_category: int = Field(default=DEFAULT_K_PER_CATEGORY, ge=1, le=30)
    topk_total: int = Field(default=DEFAULT_MAX_TOTAL, ge=1, le=30)
    # estimated tokens the candidates may add to each request (None: the caps alone)
    token_budget: int | None = Field(default=DEFAULT_TOKEN_BUDGET, ge=500, le=200_000)
    # the stage-1/2 schema sent: strict (OpenAI strict subset) or tool (non-strict tool use);
    # auto follows KEIRI_LLM_STRICT_SCHEMA and the provider
    schema_variant: SchemaChoice = "auto"
    # a provider that refuses the schema (HTTP 400) or ignores it: ask for JSON in the reply
    # text and extract it (seed 004 §5.1), recorded as a free_form attempt
    free_form_fallback: bool = True
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
    type: FieldType = "text"
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


# What a node's top-level YAML keys are to a person (a generated attempt's changes)
NODE_KEY_WORDS: Final = {
    "id": "名前（id）",
    "type": "種類",
    "block": "ブロック",
    "in": "入力",
    "out": "出力の名前",
    "when": "実行条件",
    "description": "説明",
    "foreach": "繰り返す一覧",
    "while": "続ける条件",
    "body": "繰り返す手順",
    "call": "呼び出すサブフロー",
}


class NodeChange(BaseModel):
    """One node's difference between two attempts."""

    node_id: str
    change: Literal["added", "removed", "changed"]
    keys: list[str] = Field(default_factory=list)  # for "changed": top-level keys that differ

    def describe(self) -> str:
        """The change in the plan's own terms (node id, YAML keys): what the repair prompt
        tells the model."""
        if self.change == "changed":
            return f"{self.node_id}: 変更（{', '.join(self.keys)}）"
        return f"{self.node_id}: {'追加' if self.change == 'added' else '削除'}"

    def said(self, name: str) -> str:
        """The change as a person reads it: the step by ``name`` (its name on the page), each
        changed setting by its word (``「売上の集計」: 入力とブロックを変更``)."""
        if self.change != "changed":
            return f"「{name}」を{'追加' if self.change == 'added' else '削除'}"
        words = [NODE_KEY_WORDS.get(key, f"YAML の {key}:") for key in self.keys]
        return f"「{name}」: {'・'.join(words)}を変更"


class AttemptRecord(BaseModel):
    """One wiring attempt (stage 2) and what validation said about it."""

    number: int
    plan: dict[str, Any] | None = None
    errors: list[PlanIssue] = Field(default_factory=list)
    output_error: str | None = None  # the reply did not fit the schema at all
    diff: list[NodeChange] = Field(default_factory=list)  # against the previous attempt
    duration_ms: float = 0.0
    findings: list[PlanIssue] = Field(default_factory=list)  # the dry run's, of a valid plan
    mode: Literal["structured", "free_form"] = "structured"
    reasoning: str = ""  # the model's note on its design
    prompt_chars: int = 0  # every message of the request
    prompt_tokens: int = 0  # estimated (design.candidates.estimate_tokens)
    schema_bytes: int = 0

    @property
    def outcome(self) -> AttemptOutcome:
        if self.output_error is not None or self.plan is None:
            return "output_error"
        if self.errors:
            return "invalid"
        return "dry_run_findings" if self.findings else "valid"

    def metrics(self) -> dict[str, Any]:
        """This attempt in the design log: size of what was sent and what came of it."""
        return {
            "attempt": self.number,
            "mode": self.mode,
            "outcome": self.outcome,
            "prompt_chars": self.prompt_chars,
            "prompt_tokens_est": self.prompt_tokens,
            "schema_bytes": self.schema_bytes,
            "errors": len(self.errors) + (1 if self.output_error else 0),
            "findings": len(self.findings),
            "diff": len(self.diff),
            "duration_ms": round(self.duration_ms, 3),
        }

    @property
    def valid(self) -> bool:
        """Validated and dry-run clean: nothing left to repair."""
        return self.outcome == "valid"


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
    cut: list[CutBlock] = Field(default_factory=list)  # blocks Top-K left out, and why
    conflicts: list[ComposeConflict] = Field(default_factory=list)  # compose: to resolve
    skeleton: dict[str, Any] | None = None
    dry_run: dict[str, Any] | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    run_log: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"
