"""The models the LLM fills in (seed 004 §5.2), built per request from the candidate blocks.

Stage 1 returns a :class:`PlanSkeleton`: the flow, the steps with their blocks, whether a person
must provide input, loops and subflows, and questions for information the instruction lacks.
Stage 2 returns an ``LLMDesignModel``: the wiring. Both are built dynamically so that the schema
the model sees *is* the constraint:

- ``block`` is a ``Literal`` of the candidate block ids (Top-K plus the templates' blocks);
- each block's ``in`` and ``out`` are their own models whose keys are exactly the ports of that
  block's spec (``extra="forbid"``), so an unknown key fails parsing, not just validation;
- ``ai.process_llm`` needs a non-empty ``output_schema`` when it gives one, and a ``prompt`` or an
  ``instruction``.

Inputs may be left out here (``null``): a missing required input is the validator's finding, which
the requirements builder turns into a question for the user (seed 004 §7). The LLM-facing shape
keeps the seed's names (``foreach.items``/``var``); ``design.to_plan`` maps it onto the DSL.
The models parse both schema variants' replies (``design.wire``): strict replies carry every key
(``null`` for "not given"), plan vars as ``[{name, value}]``, their labels (``ui.vars``) as ``[{name, label}]`` and objects as JSON text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    create_model,
    model_validator,
)

from keiri_agent.blocks.catalog import port_type
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.blocks.ui.field_types import FieldType
from keiri_agent.design.wire import FIELD_KINDS, json_text_ports

__all__ = [
    "DEFAULT_LOOP_DEPTH",
    "FIELD_KINDS",
    "DesignExport",
    "DesignPolicy",
    "DesignUI",
    "DesignWhen",
    "MissingInfo",
    "PlanSkeleton",
    "SkeletonStep",
    "design_model",
    "skeleton_model",
]

# Loops may hold blocks but not further loops: provider tools inline every $ref, so each level
# of nesting repeats the whole catalog in the request. Deeper nesting is for hand-written plans.
DEFAULT_LOOP_DEPTH = 1
PROCESS_LLM = "ai.process_llm"


def _make(name: str, **spec: Any) -> Any:
    """``create_model`` with its field specs typed loosely (they are built at run time)."""
    return create_model(name, **spec)


def _without_nulls(data: Any) -> Any:
    """Strict-mode replies carry every key, ``null`` for "not given": treat both alike."""
    if isinstance(data, dict):
        return {key: value for key, value in data.items() if value is not None}
    return data


def _decode_json_text(value: Any) -> Any:
    """A JSON-text value (``design.wire``) as the object or array it spells; else unchanged."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value  # not JSON after all: the validator reports the port's type
    return value


# Field texts several models share (a field's ``title`` is what a person reads of it when a
# reply does not fit: ``llm.field_problems.field_label``).
BLOCK_TEXT = "kind=block のときのブロック ID"
PLAN_ID_TEXT = "Plan の id（英数字・_・- と /）"


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls(cls, data: Any) -> Any:
        return _without_nulls(data)


class _Ports(BaseModel):
    """A block's ``in``/``out``: exactly its ports; JSON-text ports are decoded."""

    model_config = ConfigDict(extra="forbid", populate_by_name=False)
    json_text: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _decode(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return {
            key: _decode_json_text(value) if key in cls.json_text else value
            for key, value in _without_nulls(data).items()
        }


class DesignWhen(_Closed):
    expr: str = Field(description="条件式。例: ${check.count} > 0")

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, data: Any) -> Any:
        return {"expr": data} if isinstance(data, str) else data


class DesignExport(_Closed):
    from_: str = Field(
        alias="from", title="公開する出力", description="node.出力名（例: reconcile.matched）"
    )
    as_: str = Field(alias="as", description="公開名（英数字・_）")


class DesignPolicy(_Closed):
    on_error: Literal["halt", "continue", "retry"] = Field(default="halt", title="失敗したとき")
    retries: int = Field(default=0, ge=0, le=10, title="再試行の回数")


def _pairs(value_key: str) -> Callable[[Any], Any]:
    """A mapping from the strict variant's ``[{name, <value_key>}]`` list (``design.wire``)."""

    def mapping(value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(v, dict) and "name" in v for v in value):
            return {str(v["name"]): v.get(value_key) for v in value}
        return value

    return mapping


class DesignUI(_Closed):
    layout: list[str] = Field(default_factory=list, description="ノード ID の表示順")
    vars: Annotated[dict[str, str], BeforeValidator(_pairs("label"))] = Field(
        default_factory=dict,
        title="設定値の名前",
        description="vars の名前 → 利用者が読む日本語の名前"
        "（例: fee_tolerance → 差し引かれてもよい振込手数料の上限（円））",
    )


class MissingInfo(_Closed):
    """Plan を正しく作るために利用者へ確認が必要な事項。"""

    id: str = Field(
        title="確認事項の名前", description="英数字・_ の識別子（回答は vars のこの名前に入ります）"
    )
    question: str = Field(description="利用者への質問（日本語）")
    type: FieldType = Field(default="text", title="回答の種類")
    options: list[str] = Field(default_factory=list, title="選択肢")
    hint: str | None = Field(default=None, title="補足")


class SkeletonStep(_Closed):
    id: str = Field(description="ノード ID（英字で始まり英数字・_・-）")
    purpose: str = Field(description="このステップで何をするか（日本語）")
    kind: Literal["block", "loop", "subflow"] = Field(default="block", title="ステップの種類")
    block: str | None = Field(default=None, title="ブロック", description=BLOCK_TEXT)
    parent: str | None = Field(default=None, description="このステップを含むループの ID")


class PlanSkeleton(_Closed):
    """段1（骨子）: 入力→変換→出力の流れ、使うブロック、必要な UI、ループ/サブフローの有無。"""

    plan_id: str = Field(title="Plan の ID", description=PLAN_ID_TEXT)
    title: str = Field(title="Plan の表題", description="Plan の説明（日本語）")
    flow: str = Field(description="入力→変換→出力の流れの要約（日本語）")
    steps: list[SkeletonStep] = Field(min_length=1, title="ステップ")
    needs_ui: bool = Field(
        title="利用者の入力の要否",
        description="実行時に利用者の入力（ui.interactive_input）が必要か",
    )
    uses_loop: bool = Field(default=False, title="ループの有無")
    uses_subflow: bool = Field(default=False, title="サブフローの有無")
    missing_information: list[MissingInfo] = Field(
        default_factory=list,
        title="確認が必要な事項",
        description="指示と資料だけでは決められず、利用者に確認が必要な事項",
    )


_JsonDict = Annotated[dict[str, Any], BeforeValidator(_decode_json_text)]
_Vars = Annotated[dict[str, Any], BeforeValidator(_pairs("value"))]
_SAFE = re.compile(r"[^0-9A-Za-z]+")


def _class_name(prefix: str, block_id: str) -> str:
    return prefix + "".join(part.capitalize() for part in _SAFE.split(block_id) if part)


def _port_text(port: dict[str, Any]) -> str:
    # Only the type: the prompt's catalog carries the descriptions, and provider tools inline
    # every $ref, so text here would be repeated once per loop level.
    return f"型: {port_type(port)}"


def _ports_model(
    name: str, ports: dict[str, dict[str, Any]], value: Any, *, json_text: set[str]
) -> type[BaseModel]:
    fields: dict[str, Any] = {
        f"p{index}": (
            value,
            Field(default=None, alias=port, title=spec.get("label"), description=_port_text(spec)),
        )
        for index, (port, spec) in enumerate(ports.items())
    }
    model: type[_Ports] = _make(name, __base__=_Ports, **fields)
    model.json_text = frozenset(json_text)
    return model


def _process_llm_rules(model: BaseModel) -> BaseModel:
    values = model.model_dump(by_alias=True)
    schema = values.get("output_schema")
    if schema is not None and (not isinstance(schema, dict) or not schema):
        raise ValueError("ai.process_llm の output_schema は空でないオブジェクトにしてください")
    if not values.get("prompt") and not values.get("instruction"):
        raise ValueError("ai.process_llm には prompt か instruction のどちらかが必要です")
    return model


def _block_node_model(spec: BlockSpec) -> type[BaseModel]:
    in_model = _ports_model(
        _class_name("In", spec.id), spec.inputs, Any, json_text=json_text_ports(spec.inputs)
    )
    if spec.id == PROCESS_LLM:
        in_model = _make(
            _class_name("In", spec.id) + "Checked",
            __base__=in_model,
            __validators__={"rules": model_validator(mode="after")(_process_llm_rules)},
        )
    out_model = _ports_model(_class_name("Out", spec.id), spec.outputs, str | None, json_text=set())
    description = spec.description.strip().splitlines()[0]
    model: type[BaseModel] = _make(
        _class_name("Node", spec.id),
        __base__=_Closed,
        __doc__=description,
        id=(str, Field(description="ノード ID（英字で始まり英数字・_・-）")),
        block=(Literal[spec.id], Field(title="ブロック")),
        description=(str | None, Field(default=None, title="ノードの説明")),
        in_=(in_model, Field(alias="in", description="入力ポート → 値または ${参照}")),
        out=(out_model | None, Field(default=None, description="出力ポート → 別名（省略可）")),
        when=(DesignWhen | None, Field(default=None, title="実行の条件")),
    )
    return model


def _control_node(name: str, kind: str, **fields: Any) -> Any:
    """A ``loop``/``subflow`` node: id, type and description, ``fields``, then ``when``."""
    return _make(
        name,
        __base__=_Closed,
        id=(str, Field(title="ノード ID")),
        type=(Literal[kind], Field(title="ノードの種類")),
        description=(str | None, Field(default=None, title="ノードの説明")),
        **fields,
        when=(DesignWhen | None, Field(default=None, title="実行の条件")),
    )


def _control_models(inner: Any, depth: int) -> list[type[BaseModel]]:
    suffix = str(depth)
    graph = list[inner]
    foreach = _make(
        "Foreach" + suffix,
        __base__=_Closed,
        items=(str, Field(description="繰り返す配列への参照（例: ${read.rows}）")),
        var=(str, Field(default="item", description="各要素を受け取る変数名")),
        max_concurrency=(int, Field(default=1, ge=1, le=64, title="同時に処理する数")),
    )
    while_ = _make(
        "While" + suffix,
        __base__=_Closed,
        condition=(DesignWhen, Field(title="続ける条件")),
        max_iterations=(int, Field(ge=1, le=1000, title="繰り返しの上限")),
    )
    body_plan = _make(
        "BodyPlan" + suffix,
        __base__=_Closed,
        graph=(graph, Field(min_length=1, title="ノード")),
        exports=(list[DesignExport], Field(default_factory=list, title="公開する出力")),
    )
    body = _make("Body" + suffix, __base__=_Closed, plan=(body_plan, Field(title="中の Plan")))
    loop = _control_node(
        "LoopNode" + suffix,
        "loop",
        foreach=(foreach | None, Field(default=None, title="各要素の繰り返し")),
        while_=(while_ | None, Field(default=None, alias="while", title="条件つきの繰り返し")),
        body=(body, Field(title="繰り返す処理")),
        collect=(
            list[str] | None,
            Field(default=None, title="集める出力", description="集める body の exports 名"),
        ),
    )
    call = _make(
        "Call" + suffix,
        __base__=_Closed,
        plan_id=(str, Field(title="呼び出す Plan", description="designs/ からの相対名")),
        inputs=(_JsonDict, Field(default_factory=dict, title="渡す値")),
    )
    subflow = _control_node(
        "SubflowNode" + suffix,
        "subflow",
        call=(call, Field(title="呼び出し")),
        exports=(list[DesignExport], Field(default_factory=list, title="公開する出力")),
    )
    return [loop, subflow]


def _node_tag(value: Any) -> str | None:
    """Which member of the node union a raw node is: its block id, or ``loop``/``subflow``."""
    if isinstance(value, dict):
        tag = value.get("block") if "block" in value else value.get("type")
    else:
        tag = getattr(value, "block", None) or getattr(value, "type", None)
    return tag if isinstance(tag, str) else None


def _node_union(block_models: Sequence[tuple[str, type[BaseModel]]], depth: int) -> Any:
    members: list[tuple[str, Any]] = list(block_models)
    if depth > 0:
        loop, subflow = _control_models(_node_union(block_models, depth - 1), depth)
        members += [("loop", loop), ("subflow", subflow)]
    tagged: list[Any] = [Annotated[model, Tag(tag)] for tag, model in members]
    union: Any = tagged[0]
    for member in tagged[1:]:
        union = union | member
    return Annotated[
        union,
        Discriminator(
            _node_tag,
            custom_error_type="unknown_block",
            custom_error_message="block は候補のブロック ID、または type: loop / subflow にしてください",
        ),
    ]


def _specs(registry: BlockRegistry, block_ids: Sequence[str]) -> list[BlockSpec]:
    seen: dict[str, BlockSpec] = {}
    for block_id in block_ids:
        if block_id not in seen:
            seen[block_id] = registry.get(block_id)
    return list(seen.values())


def skeleton_model(block_ids: Sequence[str]) -> type[PlanSkeleton]:
    """``PlanSkeleton`` with ``steps[].block`` limited to ``block_ids``."""
    allowed: Any = Literal[tuple(dict.fromkeys(block_ids))]
    step: Any = _make(
        "SkeletonStepChoice",
        __base__=SkeletonStep,
        block=(allowed | None, Field(default=None, title="ブロック", description=BLOCK_TEXT)),
    )
    model: type[PlanSkeleton] = _make(
        "PlanSkeleton",
        __base__=PlanSkeleton,
        __doc__=PlanSkeleton.__doc__,
        steps=(list[step], Field(min_length=1, title="ステップ")),
    )
    return model


def design_model(
    registry: BlockRegistry, block_ids: Sequence[str], *, loop_depth: int = DEFAULT_LOOP_DEPTH
) -> type[BaseModel]:
    """``LLMDesignModel`` for these candidate blocks (seed 004 §5.2, with the dynamic rules)."""
    block_models = [(spec.id, _block_node_model(spec)) for spec in _specs(registry, block_ids)]
    node = _node_union(block_models, loop_depth)
    model: type[BaseModel] = _make(
        "LLMDesignModel",
        __base__=_Closed,
        __doc__="業務フローの Plan（keiri-agent Plan DSL v1）。",
        id=(str, Field(title="Plan の ID", description=PLAN_ID_TEXT)),
        version=(str, Field(default="0.1.0", title="版")),
        description=(str | None, Field(default=None, title="Plan の説明")),
        vars=(
            _Vars,
            Field(
                default_factory=dict,
                title="設定値",
                description="${vars.名前} で参照する値。未定は null",
            ),
        ),
        policy=(DesignPolicy | None, Field(default=None, title="失敗時の方針")),
        ui=(DesignUI | None, Field(default=None, title="画面の設定")),
        graph=(list[node], Field(min_length=1, title="ノード")),  # type: ignore[valid-type]
        exports=(list[DesignExport], Field(default_factory=list, title="公開する出力")),
        reasoning=(str, Field(default="", description="設計の意図（日本語、短く）")),
    )
    return model
