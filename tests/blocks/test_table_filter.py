"""table.filter: rows kept by value (amounts and dates as values), incomparable cells reported."""

from __future__ import annotations

from typing import Any

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

INVOICES = [
    {"番号": "0101", "取引先": "株式会社山田商事", "請求日": "2025/1/31", "金額": "¥110,000"},
    {"番号": "0102", "取引先": "Ａ社", "請求日": "2025年2月10日", "金額": 55000},
    {"番号": "0103", "取引先": "鈴木工業", "請求日": "2025-02-28", "金額": "8,800円"},
    {"番号": "0104", "取引先": "a社", "請求日": "2025-03-05", "金額": 330000, "備考": "  "},
    {"番号": "0105", "取引先": "佐藤物産", "請求日": "2025-03-31", "金額": 1000, "備考": "分割"},
]


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("table.filter")


def run(block: Block, make_ctx: ContextFactory, table: Any = None, **inputs: Any) -> Any:
    data = {"table": INVOICES if table is None else table, **inputs}
    return run_like_runner(block, data, make_ctx("filter"))


def numbers(out: dict[str, Any]) -> list[str]:
    return [row["番号"] for row in out["rows"]]


def test_amount_strings_and_japanese_dates_are_compared_as_values(
    block: Block, make_ctx: ContextFactory
) -> None:
    conditions = [
        {"column": "金額", "op": "ge", "value": "¥50,000"},
        {"column": "請求日", "op": "between", "value": ["2025-01-01", "2025/2/28"]},
    ]
    out = run(block, make_ctx, conditions=conditions)
    # A table has the same columns on every row: a cell the record left out is blank.
    assert out["rows"] == [{**INVOICES[0], "備考": None}, {**INVOICES[1], "備考": None}]
    assert out["summary"] == {
        "input_rows": 5,
        "output_rows": 2,
        "excluded_rows": 3,
        "incomparable_rows": 0,
    }


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"column": "金額", "op": "eq", "value": 8800}, ["0103"]),
        ({"column": "金額", "op": "lt", "value": 8800}, ["0105"]),
        ({"column": "金額", "op": "le", "value": "8,800"}, ["0103", "0105"]),
        ({"column": "請求日", "op": "gt", "value": "2025年3月1日"}, ["0104", "0105"]),
        ({"column": "請求日", "op": "eq", "value": "2025-01-31"}, ["0101"]),
        ({"column": "番号", "op": "eq", "value": "0102"}, ["0102"]),
        ({"column": "取引先", "op": "eq", "value": "A社"}, ["0102", "0104"]),
        ({"column": "取引先", "op": "ne", "value": "a社"}, ["0101", "0103", "0105"]),
        ({"column": "取引先", "op": "in", "value": ["鈴木工業", "佐藤物産"]}, ["0103", "0105"]),
        ({"column": "金額", "op": "not_in", "value": [55000, "¥1,000"]}, ["0101", "0103", "0104"]),
        ({"column": "取引先", "op": "contains", "value": "山田"}, ["0101"]),
        ({"column": "取引先", "op": "not_contains", "value": "社"}, ["0103", "0105"]),
        ({"column": "取引先", "op": "startswith", "value": "株式会社"}, ["0101"]),
        ({"column": "取引先", "op": "regex", "value": r"(工業|物産)$"}, ["0103", "0105"]),
        ({"column": "備考", "op": "is_null"}, ["0101", "0102", "0103", "0104"]),
        ({"column": "備考", "op": "not_null"}, ["0105"]),
    ],
    ids=lambda v: v["op"] if isinstance(v, dict) else "rows",
)
def test_each_operator(
    block: Block, make_ctx: ContextFactory, condition: dict[str, Any], expected: list[str]
) -> None:
    assert numbers(run(block, make_ctx, conditions=[condition])) == expected


def test_text_is_compared_literally_when_normalize_is_off(
    block: Block, make_ctx: ContextFactory
) -> None:
    condition = {"column": "取引先", "op": "eq", "value": "a社"}
    out = run(block, make_ctx, conditions=[condition], normalize=False)
    assert numbers(out) == ["0104"]


def test_match_any_keeps_rows_meeting_one_condition(block: Block, make_ctx: ContextFactory) -> None:
    conditions = [
        {"column": "金額", "op": "gt", "value": 300000},
        {"column": "取引先", "op": "contains", "value": "鈴木"},
    ]
    assert numbers(run(block, make_ctx, conditions=conditions, match="any")) == ["0103", "0104"]


def test_records_wrapped_by_ai_process_llm_and_empty_tables(
    block: Block, make_ctx: ContextFactory
) -> None:
    condition = [{"column": "金額", "op": "ge", "value": 100000}]
    out = run(block, make_ctx, table={"items": INVOICES}, conditions=condition)
    assert numbers(out) == ["0101", "0104"]
    empty = run(block, make_ctx, table=[], conditions=condition)
    assert empty == {
        "rows": [],
        "summary": {"input_rows": 0, "output_rows": 0, "excluded_rows": 0, "incomparable_rows": 0},
    }


# ① is a list marker, not the amount 1 (NFKC would make the digit 1 of it).
@pytest.mark.parametrize("text", ["未定", "①"])
def test_a_cell_that_cannot_be_compared_stops_the_run_naming_row_and_column(
    block: Block, make_ctx: ContextFactory, text: str
) -> None:
    table = [*INVOICES, {"番号": "0106", "金額": text}, {"番号": "0107", "金額": None}]
    with pytest.raises(BlockError) as info:
        run(block, make_ctx, table=table, conditions=[{"column": "金額", "op": "gt", "value": 0}])
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "6 行目の列「金額」" in error.message
    assert f"'{text}'" in error.message
    assert "7 行目の列「金額」（値: 空欄" in error.message
    assert "on_incomparable: skip" in error.hint
    assert [p["row"] for p in error.details["problems"]] == [6, 7]


def test_skip_treats_incomparable_cells_as_not_meeting_the_condition(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = [*INVOICES, {"番号": "0106", "金額": "未定"}]
    conditions = [{"column": "金額", "op": "lt", "value": 10000}]
    out = run(block, make_ctx, table=table, conditions=conditions, on_incomparable="skip")
    assert numbers(out) == ["0103", "0105"]
    assert out["summary"]["incomparable_rows"] == 1


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"column": "金額", "op": ">=", "value": 1}, "'>='"),
        ({"column": "金額", "op": "gt", "value": "多い"}, "数値でも日付でもありません"),
        ({"column": "金額", "op": "between", "value": [100, 1]}, "下限 100 が上限 1 より大きく"),
        ({"column": "金額", "op": "between", "value": [1, "2025-01-01"]}, "両方とも数値か"),
        ({"column": "金額", "op": "in", "value": 1}, "値のリスト"),
        ({"column": "取引先", "op": "regex", "value": "(未完"}, "正規表現"),
        ({"column": "備考", "op": "is_null", "value": "x"}, "値を取りません"),
        ({"column": "取引先", "op": "contains"}, "文字列か数値"),
        ({"column": "取引先", "op": "eq", "value": 1, "extra": 2}, "extra"),
    ],
    ids=[
        "symbol-op",
        "text-order",
        "swapped",
        "mixed",
        "scalar-in",
        "regex",
        "null",
        "no-value",
        "key",
    ],
)
def test_bad_conditions_are_refused_before_running(
    block: Block, condition: dict[str, Any], expected: str
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"table": INVOICES, "conditions": [condition]})
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert expected in error.message
    assert "conditions の 1 番目" in error.message
    assert error.hint


def test_a_missing_column_is_named_with_the_columns_that_exist(
    block: Block, make_ctx: ContextFactory
) -> None:
    with pytest.raises(BlockError) as info:
        run(block, make_ctx, conditions=[{"column": "金 額", "op": "not_null"}])
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "金 額" in info.value.message
    assert "使える列: 番号, 取引先, 請求日, 金額, 備考" in info.value.hint


def test_true_is_not_the_amount_1_and_a_number_equals_its_text(
    block: Block, make_ctx: ContextFactory
) -> None:
    # Cells are read once per distinct value: True and 1 (equal in Python) must stay apart.
    table = [{"番号": n, "値": v} for n, v in enumerate([True, 1, "1", 1.0, "¥1", False, 0])]

    def kept(value: Any) -> list[int]:
        out = run(
            block, make_ctx, table=table, conditions=[{"column": "値", "op": "eq", "value": value}]
        )
        return [row["番号"] for row in out["rows"]]

    assert kept(1) == [1, 2, 3, 4]
    assert kept("true") == [0]
    assert kept(0) == [6]
