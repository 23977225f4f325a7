"""How a Pydantic failure reads for a person: field, problem and received value in Japanese.

The validator's English (``Input should be a valid string``) never reaches the Japanese text; it
is kept on the problem for error details and for the line sent back to a model.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal, get_args

import pytest
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
)
from pydantic.types import PastDate
from pydantic_core import PydanticCustomError
from pydantic_core.core_schema import ErrorType

from keiri_agent.llm.field_problems import (
    GENERIC_PROBLEM,
    MAX_VALUE_SHOWN,
    PROBLEM_TEXTS,
    field_problems,
    lines_of,
    readable_path,
)


class Line(BaseModel):
    model_config = ConfigDict(extra="forbid")

    account: str
    amount: int = 0
    rate: float = 0.0
    paid: bool = False
    kind: Literal["sales", "expense"] = "sales"
    tags: list[str] = Field(default_factory=list, max_length=2)
    code: str = Field(default="A-1", min_length=3, pattern=r"^[A-Z]-\d+$")
    count: int = Field(default=1, ge=1, le=10)
    meta: dict[str, str] = Field(default_factory=dict)


class Sheet(BaseModel):
    lines: list[Line] = Field(min_length=1)


def _problems(model: type[BaseModel], data: Any) -> list[Any]:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    return field_problems(info.value, data=data)


def _one(data: dict[str, Any]) -> Any:
    (problem,) = _problems(Sheet, {"lines": [{"account": "売上", **data}]})
    return problem


@pytest.mark.parametrize(
    ("data", "kind", "text"),
    [
        ({"account": None}, "string_type", "文字列ではありません（受け取った値: null）"),
        ({"amount": "千円"}, "int_parsing", '整数として読めません（受け取った値: "千円"）'),
        ({"amount": 1.5}, "int_from_float", "小数ではなく整数にしてください"),
        ({"amount": [1]}, "int_type", "整数ではありません"),
        ({"rate": "高い"}, "float_parsing", "数値として読めません"),
        ({"paid": "たぶん"}, "bool_parsing", "真偽値（true / false）として読めません"),
        (
            {"kind": "sale"},
            "literal_error",
            "使える値: 'sales' / 'expense'（'sales' のことではありませんか）",
        ),
        (
            {"memo": "x"},
            "extra_forbidden",
            '定義にない項目です（削除してください）（受け取った値: "x"）',
        ),
        ({"tags": ["a", "b", "c"]}, "too_long", "数が多すぎます（2 個まで、3 個でした）"),
        ({"tags": "a"}, "list_type", "リスト（配列）ではありません"),
        ({"code": "A"}, "string_too_short", "短すぎます（3 文字以上にしてください）"),
        ({"code": "abc"}, "string_pattern_mismatch", "決められた書式に合いません"),
        ({"count": 0}, "greater_than_equal", "1 以上にしてください"),
        ({"count": 11}, "less_than_equal", "10 以下にしてください"),
        ({"meta": "x"}, "dict_type", "オブジェクト（{...}）ではありません"),
    ],
)
def test_each_error_type_reads_in_japanese(data: dict[str, Any], kind: str, text: str) -> None:
    problem = _one(data)
    assert problem.type == kind
    assert text in problem.text
    field = next(iter(data))
    assert problem.text.startswith(f"lines の 1 番目の {field}: ")
    assert problem.message  # the validator's English, kept for details and the model
    assert problem.message not in problem.text


def test_missing_and_too_short_name_the_field_without_a_received_value() -> None:
    (problem,) = _problems(Sheet, {"lines": [{}]})
    assert problem.text == "lines の 1 番目の account: 必須の項目がありません"
    assert problem.received is None
    (short,) = _problems(Sheet, {"lines": []})
    assert short.text == "lines: 数が足りません（1 個以上必要、0 個でした）（受け取った値: []）"


def test_the_whole_value_and_long_values() -> None:
    (whole,) = _problems(Sheet, "表")
    assert whole.field == "全体"
    assert whole.text == '全体: オブジェクト（{...}）ではありません（受け取った値: "表"）'
    long = "あ" * 200
    (cut,) = _problems(Sheet, {"lines": [{"account": "売上", "amount": long}]})
    assert cut.received is not None
    assert len(cut.received) == MAX_VALUE_SHOWN + 1
    assert cut.received.endswith("…")


@pytest.mark.parametrize(
    ("loc", "text"),
    [
        ((), "全体"),
        (("title",), "title"),
        (("sections", 0, "content"), "sections の 1 番目の content"),
        ((2, "id"), "3 番目の id"),
        (("rows", 0, 1), "rows の 1 番目の 2 番目"),
    ],
)
def test_readable_path(loc: tuple[int | str, ...], text: str) -> None:
    assert readable_path(loc) == text


class Read(BaseModel):
    block: Literal["excel.read_data"]
    id: str


class Write(BaseModel):
    block: Literal["excel.write_report"]
    id: str


class Graph(BaseModel):
    graph: list[Annotated[Read | Write, Field(discriminator="block")]]
    value: str | int = ""


def test_union_tags_are_not_read_as_fields() -> None:
    data = {"graph": [{"block": "excel.read_data", "id": 1}], "value": [1]}
    problems = _problems(Graph, data)
    texts = [p.text for p in problems]
    assert "graph の 1 番目の id: 文字列ではありません（受け取った値: 1）" in texts
    assert "value: 文字列ではありません（受け取った値: [1]）" in texts
    assert "value: 整数ではありません（受け取った値: [1]）" in texts
    assert problems[0].loc == ("graph", 0, "id")
    assert (
        problems[0]
        .for_model()
        .endswith("[graph.0.id: string_type: Input should be a valid string]")
    )
    (tag,) = _problems(Graph, {"graph": [{"block": "excel.read", "id": "a"}]})
    assert tag.type == "union_tag_invalid"
    assert tag.text.startswith(
        "graph の 1 番目: 'block' の値 'excel.read' は使えません。"
        "使える値: 'excel.read_data' / 'excel.write_report'（受け取った値: "
    )


class BlockItem(BaseModel):
    id: str
    block: str
    in_: dict[str, Any] = Field(default_factory=dict, alias="in")


class LoopItem(BaseModel):
    id: str
    type: Literal["loop"]


def _kind(value: Any) -> str:
    return "block" if isinstance(value, dict) and "block" in value else "loop"


class Flow(BaseModel):
    graph: list[
        Annotated[
            Annotated[BlockItem, Tag("block")] | Annotated[LoopItem, Tag("loop")],
            Discriminator(_kind),
        ]
    ]


def test_a_tag_that_is_also_a_key_is_not_read_as_a_field() -> None:
    """The plan DSL tags a node by the key it has ("block"): ``graph.0.block.in`` is the
    node's ``in``, not a field of its block id."""
    data = {"graph": [{"id": "a", "block": "table.filter", "in": "x"}, {"block": "table.filter"}]}
    texts = [p.text for p in _problems(Flow, data)]
    assert texts == [
        'graph の 1 番目の in: オブジェクト（{...}）ではありません（受け取った値: "x"）',
        "graph の 2 番目の id: 必須の項目がありません",
    ]


class DayItem(BaseModel):
    kind: Literal["day"]
    day: int
    offset: int = Field(default=0, ge=-10, le=10)


class WeekItem(BaseModel):
    kind: Literal["week"]
    weekday: str


Rule = TypeAdapter(Annotated[DayItem | WeekItem, Field(discriminator="kind")])


def test_a_top_level_tag_that_is_also_a_key_is_not_read_as_the_field() -> None:
    """A schedule rule is tagged by its kind, and the kind ``day`` is also a key: Pydantic's
    ``day.offset`` is the rule's ``offset``, not a field of its day (it read 「day: -10 以上」)."""
    with pytest.raises(ValidationError) as caught:
        Rule.validate_python({"kind": "day", "day": 25, "offset": -11})
    (problem,) = field_problems(caught.value, data={"kind": "day", "day": 25, "offset": -11})
    assert problem.loc == ("offset",)
    assert problem.text.startswith("offset: -10 以上にしてください")


class Own(BaseModel):
    type: str
    when: dt.date | None = None
    past: PastDate | None = None

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        if value == "custom":
            raise PydanticCustomError(
                "unknown_type", "型 '{name}' は登録されていません", {"name": value}
            )
        if value != "records":
            raise ValueError(f"型 '{value}' は使えません（使える型: records, text, any）")
        return value


def test_our_own_messages_are_kept_and_an_unknown_pydantic_type_is_generic() -> None:
    (own,) = _problems(Own, {"type": "table"})
    assert own.problem == "型 'table' は使えません（使える型: records, text, any）"
    (custom,) = _problems(Own, {"type": "custom"})
    assert custom.problem == "型 'custom' は登録されていません"
    (generic,) = _problems(Own, {"type": "records", "past": "2999-01-01"})
    assert generic.type == "date_past"
    assert generic.problem == GENERIC_PROBLEM
    assert "past" in generic.message.lower()  # the English stays on the problem


def test_lines_count_what_is_not_listed() -> None:
    problems = _problems(Sheet, {"lines": [{} for _ in range(10)]})
    lines = lines_of(problems, 3)
    assert len(lines) == 4
    assert lines[-1] == "ほか 7 件"
    assert lines_of(problems, 3, model=True)[0].endswith(
        "[lines.0.account: missing: Field required]"
    )


def test_the_table_names_only_pydantic_error_types() -> None:
    assert set(PROBLEM_TEXTS) <= set(get_args(ErrorType))
    for kind in (
        "missing",
        "string_type",
        "int_parsing",
        "literal_error",
        "extra_forbidden",
        "too_short",
    ):
        assert kind in PROBLEM_TEXTS
