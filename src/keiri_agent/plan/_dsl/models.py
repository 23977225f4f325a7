"""The Plan DSL as Pydantic models (seed 002 §5): Plan, nodes, policy, UI config, exports.

A plan is ``apiVersion``, ``id``, ``version``, ``vars``, ``policy``, ``ui``, ``graph`` (and,
for plans called as subflows, ``exports``). A node is one of:

- a block node: ``block`` (``id`` or ``id@version``), ``in``, ``out`` (port → alias), ``when``;
- a loop node (``type: loop``): ``foreach`` or ``while``, ``body.plan.graph``,
  ``body.plan.exports``, ``out.collect``;
- a subflow node (``type: subflow``): ``call.plan_id``, ``call.inputs``, ``out.exports``.

``when`` is an expression string, ``{expr: ...}`` or ``{left, op, right}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    field_validator,
    model_validator,
)

__all__ = [
    "API_VERSIONS",
    "LEGACY_UI_PREFIXES",
    "MAX_LOOP_ITERATIONS",
    "MAX_SUBFLOW_DEPTH",
    "MAX_VAR_LABEL_CHARS",
    "BlockNode",
    "Concurrency",
    "Export",
    "ForeachSpec",
    "LoopBody",
    "LoopNode",
    "LoopOut",
    "Node",
    "Plan",
    "Policy",
    "SubPlan",
    "SubflowCall",
    "SubflowNode",
    "SubflowOut",
    "UIConfig",
    "WhenCompare",
    "WhenExpr",
    "WhileSpec",
    "node_kind",
    "when_raw",
]

API_VERSIONS = ("v1",)
NODE_ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
PLAN_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*(?:/[A-Za-z0-9_][A-Za-z0-9_\-]*)*$")
RESERVED_ROOTS = frozenset({"vars", "env", "config"})
# The UI block families before ui.interactive_input (seed 002 §13): warned about, migrated.
LEGACY_UI_PREFIXES = ("ui.file_uploader", "ui.confirmation")


# Limits a plan cannot raise (docs/limits.md). A loop keeps one entry per iteration in memory
# and in the run log; a subflow chain is validated and run as nested frames.
MAX_LOOP_ITERATIONS = 10_000  # while.max_iterations (foreach: KEIRI_PLAN_MAX_FOREACH_ITEMS)
MAX_SUBFLOW_DEPTH = 20  # subflows calling subflows


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class WhenExpr(_Strict):
    expr: str


class WhenCompare(_Strict):
    left: Any
    op: Literal["eq", "ne", "gt", "gte", "lt", "lte"]
    right: Any = None


When = str | WhenExpr | WhenCompare


def when_raw(when: When) -> str | dict[str, Any]:
    """A ``when``/``condition`` as written (a string or a mapping), for ``compile_when``."""
    return when if isinstance(when, str) else when.model_dump(by_alias=True)


def _matching(pattern: re.Pattern[str], message: str) -> Callable[[str], str]:
    """A field validator refusing, with ``message``, a string that ``pattern`` does not match."""

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(message)
        return value

    return check


def _check_node_id(value: str) -> str:
    if not NODE_ID_RE.match(value):
        raise ValueError("ノード ID は英字か _ で始め、英数字・_・- で書いてください")
    if value in RESERVED_ROOTS:
        raise ValueError(f"'{value}' は参照式で予約されているためノード ID に使えません")
    return value


class _NodeBase(_Strict):
    id: str = Field(min_length=1)
    description: str | None = None
    when: When | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _check_node_id(value)


class BlockNode(_NodeBase):
    type: Literal["block"] = "block"
    block: str = Field(min_length=1)
    inputs: dict[str, Any] = Field(default_factory=dict, alias="in")
    out: dict[str, str] = Field(default_factory=dict)

    @field_validator("out")
    @classmethod
    def _aliases(cls, value: dict[str, str]) -> dict[str, str]:
        for port, alias in value.items():
            if not NODE_ID_RE.match(alias):
                raise ValueError(f"出力 '{port}' の別名 '{alias}' は英数字・_・- で書いてください")
        return value


class Export(_Strict):
    from_: str = Field(alias="from", min_length=1)
    as_: str = Field(alias="as", min_length=1)

    _name = field_validator("as_")(
        _matching(NODE_ID_RE, "exports の as は英数字・_・- で書いてください")
    )


class SubPlan(_Strict):
    graph: list[Node] = Field(min_length=1)
    exports: list[Export] = Field(default_factory=list)


class LoopBody(_Strict):
    plan: SubPlan


class ForeachSpec(_Strict):
    input: Any
    itemVar: str = "item"  # noqa: N815 - the seed's spelling is the DSL
    indexVar: str | None = None  # noqa: N815
    max_concurrency: int = Field(default=1, ge=1, le=1024)


class WhileSpec(_Strict):
    condition: When
    max_iterations: int = Field(ge=1, le=MAX_LOOP_ITERATIONS)
    # When true, still meeting the condition after max_iterations is an error, not an exit.
    required: bool = False


class LoopOut(_Strict):
    collect: str | list[str] | None = None

    def names(self, exports: list[Export]) -> list[str]:
        if self.collect is None:
            return [e.as_ for e in exports]
        return [self.collect] if isinstance(self.collect, str) else list(self.collect)


class LoopNode(_NodeBase):
    type: Literal["loop"]
    foreach: ForeachSpec | None = None
    while_: WhileSpec | None = Field(default=None, alias="while")
    body: LoopBody
    out: LoopOut = Field(default_factory=LoopOut)

    @model_validator(mode="after")
    def _one_kind(self) -> LoopNode:
        if (self.foreach is None) == (self.while_ is None):
            raise ValueError("ループには foreach か while のどちらか一方だけを書いてください")
        return self


class SubflowCall(_Strict):
    plan_id: str
    inputs: dict[str, Any] = Field(default_factory=dict)

    _plan_id = field_validator("plan_id")(
        _matching(
            PLAN_ID_RE,
            "plan_id は designs/ からの相対名（例: common/validation_flow）にしてください",
        )
    )


class SubflowOut(_Strict):
    exports: list[Export] = Field(default_factory=list)


class SubflowNode(_NodeBase):
    type: Literal["subflow"]
    call: SubflowCall
    out: SubflowOut = Field(default_factory=SubflowOut)


def node_kind(value: Any) -> str:
    """The discriminator: ``type`` when given, else ``block``."""
    if isinstance(value, dict):
        kind = value.get("type", "block")
        return kind if isinstance(kind, str) else "invalid"
    return getattr(value, "type", "invalid")


Node = Annotated[
    Annotated[BlockNode, Tag("block")]
    | Annotated[LoopNode, Tag("loop")]
    | Annotated[SubflowNode, Tag("subflow")],
    Discriminator(
        node_kind,
        custom_error_type="invalid_node_type",
        custom_error_message="ノードの type は block（省略可）・loop・subflow のいずれかです",
    ),
]
SubPlan.model_rebuild()
LoopBody.model_rebuild()
LoopNode.model_rebuild()


class Concurrency(_Strict):
    default_max_workers: int = Field(default=4, ge=1, le=1024)
    per_node: dict[str, int] = Field(default_factory=dict)

    @field_validator("per_node")
    @classmethod
    def _positive(cls, value: dict[str, int]) -> dict[str, int]:
        for node, limit in value.items():
            if limit < 1:
                raise ValueError(f"per_node.{node} は 1 以上にしてください")
        return value


class Policy(_Strict):
    on_error: Literal["halt", "continue", "retry"] = "halt"
    retries: int = Field(default=0, ge=0, le=100)
    timeout_ms: int | None = Field(default=None, ge=1)
    concurrency: Concurrency = Field(default_factory=Concurrency)
    executor: Literal["threads", "dask"] = "threads"


MAX_VAR_LABEL_CHARS = 200  # ui.vars: a field's name on the 実行 page, not a manual
VarLabel = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_VAR_LABEL_CHARS)
]


class UIConfig(_Strict):
    """How the app and the CLI present the plan: ``layout`` (the order of its top-level nodes)
    and ``vars`` (var name → the Japanese label people read for it; the validator checks that
    each names a declared var)."""

    layout: list[str] = Field(default_factory=list)
    vars: dict[str, VarLabel] = Field(default_factory=dict)


class Plan(_Strict):
    apiVersion: str = "v1"  # noqa: N815 - the DSL's key
    id: str
    version: str = "0.1.0"
    description: str | None = None
    vars: dict[str, Any] = Field(default_factory=dict)
    policy: Policy = Field(default_factory=Policy)
    ui: UIConfig = Field(default_factory=UIConfig)
    graph: list[Node] = Field(min_length=1)
    exports: list[Export] = Field(default_factory=list)

    _plan_id = field_validator("id")(
        _matching(PLAN_ID_RE, "Plan の id は英数字・_・- と / で書いてください")
    )

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> str:
        return str(value)

    def node(self, node_id: str) -> BlockNode | LoopNode | SubflowNode | None:
        return next((n for n in self.graph if n.id == node_id), None)

    def var_text(self, name: str) -> str:
        """Var ``name`` as a message names it: ``設定値「label」（vars.name）`` when ``ui.vars``
        labels it, else ``vars.name``."""
        label = self.ui.vars.get(name)
        return f"設定値「{label}」（vars.{name}）" if label else f"vars.{name}"

    def var_listing(self) -> str:
        """The declared vars for a hint: ``fee_tolerance（手数料の上限（円））, out`` or なし."""
        labels = self.ui.vars
        shown = [f"{name}（{labels[name]}）" if name in labels else name for name in self.vars]
        return ", ".join(shown) or "なし"
