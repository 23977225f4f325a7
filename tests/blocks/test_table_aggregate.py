"""table.aggregate: per-group totals people can check by hand; unreadable values are named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.tables import read_table
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

SALES = [
    {"取引先": "山田商事", "売上日": "2025/1/10", "金額": "¥110,000", "担当": "佐藤"},
    {"取引先": "鈴木工業", "売上日": "2025-01-20", "金額": 33000, "担当": "田中"},
    {"取引先": "山田商事", "売上日": "2025年1月25日", "金額": "55,000円", "担当": "佐藤"},
    {"取引先": "山田商事", "売上日": "2025-02-03", "金額": 22000, "担当": "鈴木"},
    {"取引先": "鈴木工業", "売上日": "2025-03-31", "金額": "▲3,000", "担当": None},
]


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("table.aggregate")


def run(block: Block, make_ctx: ContextFactory, **inputs: Any) -> dict[str, Any]:
    return run_like_runner(block, {"table": SALES, **inputs}, make_ctx("aggregate"))


def test_monthly_totals_per_vendor_from_amount_strings_and_japanese_dates(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(
        block,
        make_ctx,
        group_by=["取引先", "月"],
        period={"column": "売上日", "unit": "month", "as": "月"},
        aggregations=[
            {"column": "金額", "func": "sum", "as": "売上合計"},
            {"func": "count"},
            {"column": "金額", "func": "mean"},
        ],
    )
    assert out["rows"] == [
        {"取引先": "山田商事", "月": "2025-01", "売上合計": 165000, "件数": 2, "金額_mean": 82500},
        {"取引先": "山田商事", "月": "2025-02", "売上合計": 22000, "件数": 1, "金額_mean": 22000},
        {"取引先": "鈴木工業", "月": "2025-01", "売上合計": 33000, "件数": 1, "金額_mean": 33000},
        {"取引先": "鈴木工業", "月": "2025-03", "売上合計": -3000, "件数": 1, "金額_mean": -3000},
    ]
    assert out["summary"] == {"input_rows": 5, "groups": 4}


def test_sorting_descending_with_a_totals_row(block: Block, make_ctx: ContextFactory) -> None:
    out = run(
        block,
        make_ctx,
        group_by="取引先",
        aggregations=[
            {"column": "金額", "func": "sum", "as": "合計金額"},
            {"column": "売上日", "func": "max", "as": "最終売上日"},
            {"column": "担当", "func": "count", "as": "担当あり"},
        ],
        sort_by=["-合計金額"],
        totals=True,
    )
    assert out["rows"] == [
        {"取引先": "山田商事", "合計金額": 187000, "最終売上日": "2025-02-03", "担当あり": 3},
        {"取引先": "鈴木工業", "合計金額": 30000, "最終売上日": "2025-03-31", "担当あり": 1},
        {"取引先": "合計", "合計金額": 217000, "最終売上日": "2025-03-31", "担当あり": 4},
    ]
    assert out["summary"]["groups"] == 2


def test_grand_total_without_group_by_and_of_an_empty_table(
    block: Block, make_ctx: ContextFactory
) -> None:
    aggregations = [
        {"column": "金額", "func": "sum", "as": "合計"},
        {"column": "金額", "func": "min", "as": "最小"},
        {"column": "担当", "func": "nunique", "as": "担当者数"},
        {"func": "count"},
    ]
    out = run(block, make_ctx, aggregations=aggregations)
    assert out["rows"] == [{"合計": 217000, "最小": -3000, "担当者数": 3, "件数": 5}]
    empty = run_like_runner(block, {"table": [], "aggregations": aggregations}, make_ctx())
    assert empty["rows"] == [{"合計": 0, "最小": None, "担当者数": 0, "件数": 0}]
    assert empty["summary"] == {"input_rows": 0, "groups": 1}


def test_fiscal_quarters_and_years_start_in_april(block: Block, make_ctx: ContextFactory) -> None:
    table = [
        {"日付": "2025-03-31", "金額": 1},
        {"日付": "2025-04-01", "金額": 10},
        {"日付": "2025-12-31", "金額": 100},
        {"日付": "2026-01-05", "金額": 1000},
    ]
    quarters = run_like_runner(
        block,
        {
            "table": table,
            "group_by": "四半期",
            "period": {"column": "日付", "unit": "quarter", "start_month": 4},
            "aggregations": [{"column": "金額", "func": "sum", "as": "合計"}],
        },
        make_ctx(),
    )
    assert quarters["rows"] == [
        {"四半期": "2024-Q4", "合計": 1},
        {"四半期": "2025-Q1", "合計": 10},
        {"四半期": "2025-Q3", "合計": 100},
        {"四半期": "2025-Q4", "合計": 1000},
    ]
    years = run_like_runner(
        block,
        {
            "table": table,
            "group_by": "年度",
            "period": {"column": "日付", "unit": "year", "start_month": 4},
            "aggregations": [{"column": "金額", "func": "sum", "as": "合計"}],
        },
        make_ctx(),
    )
    assert years["rows"] == [{"年度": "2024", "合計": 1}, {"年度": "2025", "合計": 1110}]


def test_blank_keys_form_one_group_listed_last_and_first_last_skip_blanks(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(
        block,
        make_ctx,
        group_by="担当",
        aggregations=[
            {"column": "取引先", "func": "first"},
            {"column": "取引先", "func": "last"},
            {"column": "金額", "func": "sum"},
        ],
    )
    assert out["rows"] == [
        {"担当": "佐藤", "取引先_first": "山田商事", "取引先_last": "山田商事", "金額_sum": 165000},
        {"担当": "田中", "取引先_first": "鈴木工業", "取引先_last": "鈴木工業", "金額_sum": 33000},
        {"担当": "鈴木", "取引先_first": "山田商事", "取引先_last": "山田商事", "金額_sum": 22000},
        {"担当": None, "取引先_first": "鈴木工業", "取引先_last": "鈴木工業", "金額_sum": -3000},
    ]


def test_sums_are_exact_decimals(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"率": 0.1}, {"率": 0.2}, {"率": "0.3"}]
    out = run_like_runner(
        block, {"table": table, "aggregations": [{"column": "率", "func": "sum"}]}, make_ctx()
    )
    assert out["rows"] == [{"率_sum": 0.6}]


# ① is a list marker, not the amount 1 (NFKC would make the digit 1 of it).
@pytest.mark.parametrize("text", ["未定", "①"])
def test_a_value_that_is_not_an_amount_stops_the_sum_naming_row_and_column(
    block: Block, make_ctx: ContextFactory, text: str
) -> None:
    table = [*SALES, {"取引先": "佐藤物産", "売上日": "2025-04-01", "金額": text}]
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block,
            {
                "table": table,
                "group_by": "取引先",
                "aggregations": [{"column": "金額", "func": "sum"}],
            },
            make_ctx(),
        )
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert f"6 行目の列「金額」の値 '{text}'" in error.message
    assert "table.filter" in error.hint
    assert (error.details["row"], error.details["column"]) == (6, "金額")


def test_an_unreadable_date_stops_the_period_naming_the_row(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = [*SALES, {"取引先": "佐藤物産", "売上日": "4月上旬", "金額": 1}]
    with pytest.raises(BlockError) as info:
        run(
            block,
            make_ctx,
            table=table,
            period={"column": "売上日", "unit": "month"},
            group_by="月",
            aggregations=[{"func": "count"}],
        )
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "6 行目の列「売上日」" in info.value.message
    assert "not_null" in info.value.hint


def test_min_max_on_text_is_refused(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(BlockError) as info:
        run(block, make_ctx, aggregations=[{"column": "取引先", "func": "max"}])
    assert "1 行目の列「取引先」" in info.value.message
    assert "金額か日付" in info.value.message
    assert "first / last" in info.value.hint


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"aggregations": [{"column": "金額", "func": "total"}]}, "'total'"),
        ({"aggregations": [{"func": "sum"}]}, "集計する列（column）がありません"),
        (
            {"aggregations": [{"column": "金額", "func": "sum", "as": "件数"}, {"func": "count"}]},
            "件数 が重複",
        ),
        (
            {"aggregations": [{"func": "count"}], "group_by": "取引先", "sort_by": "-金額"},
            "sort_by の列「金額」は集計結果にありません",
        ),
        (
            {"aggregations": [{"func": "count"}], "period": {"column": "売上日", "unit": "week"}},
            "period の column / unit / as",
        ),
        (
            {
                "aggregations": [{"func": "count"}],
                "period": {"column": "売上日", "unit": "year", "start_month": 13},
            },
            "1〜12",
        ),
        ({"aggregations": []}, "aggregations（集計のしかた）"),
    ],
    ids=["func", "no-column", "clash", "sort", "unit", "month", "empty"],
)
def test_bad_settings_are_refused_before_running(
    block: Block, inputs: dict[str, Any], expected: str
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"table": SALES, **inputs})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert expected in info.value.message
    assert info.value.hint


def test_a_missing_column_and_a_period_name_that_exists_are_refused(
    block: Block, make_ctx: ContextFactory
) -> None:
    with pytest.raises(BlockError) as info:
        run(block, make_ctx, group_by="部門", aggregations=[{"func": "count"}])
    assert "部門" in info.value.message
    assert "使える列: 取引先, 売上日, 金額, 担当" in info.value.hint
    with pytest.raises(BlockError) as clash:
        run(
            block,
            make_ctx,
            period={"column": "売上日", "unit": "month", "as": "担当"},
            aggregations=[{"func": "count"}],
        )
    assert "「担当」は表に既にあります" in clash.value.message


@pytest.mark.parametrize(("func", "written"), [("sum", "0.1"), ("mean", "12"), ("sum", "未定")])
def test_a_doubtful_cell_of_a_rate_column_is_said_as_a_rate(
    block: Block, make_ctx: ContextFactory, func: str, written: str
) -> None:
    """A rate column ``file.read_table`` kept as written (a plain number among percentages):
    the error names that cell as a rate, not the first percentage as an amount."""
    rows = ["10%", "―", "0", written, "12.5%"]
    table = [{"部門": "営業", "前年比": rate} for rate in rows]
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block,
            {"table": table, "aggregations": [{"column": "前年比", "func": func}]},
            make_ctx(),
        )
    error = info.value
    assert f"4 行目の列「前年比」の値 '{written}' を率（百分率）の列の割合として読めない" in (
        error.message
    )
    assert "金額" not in error.message
    assert "10%" in error.message  # the form the column writes
    assert (error.details["row"], error.details["column"]) == (4, "前年比")


def test_a_stray_percentage_in_an_amount_column_is_said_as_an_amount(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = [*SALES, {"取引先": "佐藤物産", "売上日": "2025-04-01", "金額": "10%"}]
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block, {"table": table, "aggregations": [{"column": "金額", "func": "sum"}]}, make_ctx()
        )
    assert "6 行目の列「金額」の値 '10%' を金額（数値）として読めない" in info.value.message


def test_a_dollar_amount_among_yen_stops_the_sum_at_its_line(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    path = tmp_path / "経費.csv"
    path.write_text("日付,摘要,金額\n2026/2/3,タクシー,¥3300\n2026/2/4,ホテル,$120.50\n", "utf-8")
    inputs = {
        "table": read_table(path).table(),
        "aggregations": [{"column": "金額", "func": "sum"}],
    }
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert "経費.csv の 3 行目の列「金額」の値 '$120.50'" in info.value.message
