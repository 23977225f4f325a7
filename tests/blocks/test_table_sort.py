"""table.sort: top N by value (amount text as numbers), stable ties, blanks, clear errors."""

from __future__ import annotations

from typing import Any

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

SALES = [
    {"取引先": "山田商事", "部門": "東京", "売上金額": "¥1,250,000", "初回取引": "2019/4/1"},
    {"取引先": "鈴木工業", "部門": "大阪", "売上金額": 380000, "初回取引": "令和2年1月15日"},
    {"取引先": "佐藤物産", "部門": "東京", "売上金額": "2,100,000円", "初回取引": "2018-10-01"},
    {"取引先": "高橋電機", "部門": "大阪", "売上金額": "90,000", "初回取引": "2021-06-30"},
    {"取引先": "田中運輸", "部門": "東京", "売上金額": 380000, "初回取引": None},
    {"取引先": "伊藤建設", "部門": "大阪", "売上金額": None, "初回取引": "2020-01-15"},
]


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("table.sort")


def run(block: Block, make_ctx: ContextFactory, table: Any = None, **inputs: Any) -> Any:
    data = {"table": SALES if table is None else table, **inputs}
    return run_like_runner(block, data, make_ctx("sort"))


def names(out: dict[str, Any]) -> list[str]:
    return [row["取引先"] for row in out["rows"]]


def test_top_three_by_amount_reads_yen_text_as_numbers(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(block, make_ctx, by=[{"column": "売上金額", "order": "desc"}], limit=3)
    # As text "90,000" would sort above "2,100,000円"; as values it is the smallest.
    assert names(out) == ["佐藤物産", "山田商事", "鈴木工業"]
    assert out["rows"][0] == SALES[2]  # rows are returned unchanged
    assert out["summary"] == {
        "input_rows": 6,
        "output_rows": 3,
        "keys": [{"column": "売上金額", "order": "desc", "as": "number"}],
    }


def test_ties_keep_input_order_and_blanks_go_last_both_ways(
    block: Block, make_ctx: ContextFactory
) -> None:
    desc = run(block, make_ctx, by=[{"column": "売上金額", "order": "desc"}])
    assert names(desc) == ["佐藤物産", "山田商事", "鈴木工業", "田中運輸", "高橋電機", "伊藤建設"]
    asc = run(block, make_ctx, by="売上金額")
    assert names(asc) == ["高橋電機", "鈴木工業", "田中運輸", "山田商事", "佐藤物産", "伊藤建設"]
    first = run(block, make_ctx, by="売上金額", nulls="first", limit=1)
    assert names(first) == ["伊藤建設"]


def test_several_keys_and_japanese_dates(block: Block, make_ctx: ContextFactory) -> None:
    out = run(block, make_ctx, by=["部門", {"column": "初回取引", "order": "desc"}])
    # 大阪 < 東京 as text; inside each, the newest first (令和2年1月15日 = 2020-01-15).
    assert names(out) == ["高橋電機", "鈴木工業", "伊藤建設", "山田商事", "佐藤物産", "田中運輸"]
    assert [k["as"] for k in out["summary"]["keys"]] == ["text", "date"]


def test_codes_with_leading_zeros_sort_as_text(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"コード": "010"}, {"コード": "002"}, {"コード": "1"}]
    out = run(block, make_ctx, table=table, by="コード")
    assert [r["コード"] for r in out["rows"]] == ["002", "010", "1"]
    assert out["summary"]["keys"][0]["as"] == "text"


def test_empty_table_gives_empty_rows(block: Block, make_ctx: ContextFactory) -> None:
    out = run(block, make_ctx, table={"items": []}, by="売上金額", limit=10)
    assert out["rows"] == []
    assert (out["summary"]["input_rows"], out["summary"]["output_rows"]) == (0, 0)


def test_unknown_column_names_the_closest_one(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(BlockError) as caught:
        run(block, make_ctx, by=[{"column": "売上額", "order": "desc"}])
    error = caught.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "「売上額」" in error.message
    assert "「売上金額」のことではありませんか" in error.message
    assert error.details["closest"] == "売上金額"
    assert "取引先" in (error.hint or "")


# ① is a list marker, not the amount 1 (NFKC would make the digit 1 of it).
# As text, ① compares as the 1 it is written with (the text order's normalized keys).
@pytest.mark.parametrize(
    ("text", "as_text"), [("未定", ["1,000", 100, "未定"]), ("①", ["①", "1,000", 100])]
)
def test_number_column_with_text_is_not_guessed(
    block: Block, make_ctx: ContextFactory, text: str, as_text: list[object]
) -> None:
    table = [{"金額": 100}, {"金額": text}, {"金額": "1,000"}]
    with pytest.raises(BlockError) as caught:
        run(block, make_ctx, table=table, by="金額")
    assert "2 行目" in caught.value.message
    assert f"'{text}'" in caught.value.message
    assert "as: text" in (caught.value.hint or "")
    out = run(block, make_ctx, table=table, by=[{"column": "金額", "as": "text"}])
    assert [r["金額"] for r in out["rows"]] == as_text  # character order


def test_forced_date_reports_unreadable_cells(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"期日": "2025-01-31"}, {"期日": "月末"}]
    with pytest.raises(BlockError) as caught:
        run(block, make_ctx, table=table, by=[{"column": "期日", "as": "date"}])
    assert "日付として読めない" in caught.value.message
    assert caught.value.details["rows"] == [2]


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"by": []}, "by（並べ替えの列）が指定されていません"),
        ({"by": [{"column": "売上金額", "order": "down"}]}, "order 'down'"),
        ({"by": [{"column": "売上金額", "direction": "desc"}]}, "使えないキー（direction）"),
        ({"by": "売上金額", "limit": 0}, "limit '0' は 1 以上の整数ではありません"),
    ],
)
def test_bad_inputs_are_refused_before_running(
    block: Block, inputs: dict[str, Any], expected: str
) -> None:
    with pytest.raises(BlockError) as caught:
        block.check_inputs({"table": SALES, **inputs})
    assert expected in caught.value.message
    assert caught.value.hint


def test_texts_equal_after_normalization_tie_and_keep_input_order(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = [{"取引先": t, "n": n} for n, t in enumerate(["b社", "Ａ社", "B社", "a社", " A社"])]
    out = run(block, make_ctx, table=table, by=[{"column": "取引先", "order": "desc"}])
    assert [r["n"] for r in out["rows"]] == [0, 2, 1, 3, 4]
