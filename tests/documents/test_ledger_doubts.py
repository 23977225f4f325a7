"""What a ledger does not say must not be guessed: dates without a year, a weekday that is not
the date's; and a report's title unit (単位：千円) belongs to its period columns, not its rates."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.cell_forms import date_problem, is_month_day, read_date
from keiri_agent.documents.tables import read_table
from keiri_agent.errors import BlockError


@pytest.mark.parametrize(
    ("written", "actual"),
    [
        ("2026年2月3日(水)", "火"),
        ("2026年2月3日（月）", "火"),
        ("令和8年2月3日(日)", "火"),
        ("R8.2.3(土)", "火"),
        ("平成31年4月30日(水)", "火"),
        ("2026/2/3(水) 10:15", "火"),
    ],
)
def test_a_weekday_that_is_not_the_dates_is_refused_naming_the_real_one(
    written: str, actual: str
) -> None:
    assert read_date(written) is None
    problem = date_problem(written)
    assert "曜日" in problem
    assert f"{actual}曜日です" in problem


@pytest.mark.parametrize(
    ("written", "day"),
    [
        ("2026年2月3日(火)", dt.date(2026, 2, 3)),
        ("令和元年5月1日（水）", dt.date(2019, 5, 1)),
        ("2026/2/11(祝)", dt.date(2026, 2, 11)),  # 祝 names no weekday
        ("2026/2/11(水・祝)", dt.date(2026, 2, 11)),
    ],
)
def test_a_weekday_that_is_the_dates_is_read(written: str, day: dt.date) -> None:
    assert read_date(written) == day


@pytest.mark.parametrize("written", ["2/3", "12/31", "2月3日", "２月３日", "2月3日(火)", "2/29"])
def test_a_month_and_day_without_a_year_is_not_read_and_says_why(written: str) -> None:
    assert read_date(written) is None
    assert is_month_day(written)
    assert "年が書かれていない" in date_problem(written)


@pytest.mark.parametrize("written", ["13/3", "2/30", "1/2/3", "2026/2/3", "3月"])
def test_other_forms_are_not_taken_for_a_month_and_day(written: str) -> None:
    assert not is_month_day(written)


YEARLESS = (
    "日付,科目,金額\r\n2/3,旅費交通費,1200\r\n2/4,通信費,3400\r\n2月5日(木),旅費交通費,100\r\n"
)


def test_a_date_column_without_years_stays_text_and_every_cell_is_listed() -> None:
    result = read_table(YEARLESS.encode("cp932"), name="経費.csv")

    assert "日付" not in result.info.converted
    assert result.table().records()[0]["日付"] == "2/3"  # kept as written, never a guessed year
    assert [(u["position"], u["value"]) for u in result.info.unreadable] == [
        (2, "2/3"),
        (3, "2/4"),
        (4, "2月5日(木)"),
    ]
    assert all("年が書かれていない" in u["reason"] for u in result.info.unreadable)
    warning = next(w for w in result.info.warnings if w.startswith("列「日付」"))
    assert "3 個のセルを日付として読めないため列は文字のまま残しました" in warning
    assert "経費.csv の 2 行目" in warning


def test_a_monthly_total_by_a_yearless_date_column_stops_saying_the_year_is_missing(
    tmp_path: Path,
) -> None:
    table = read_table(YEARLESS.encode("cp932"), name="経費.csv").table()
    ctx = BlockContext(
        run_id="r", plan_id="p", node_id="agg", block_version="0.1.0", workspace=tmp_path
    )
    block = BlockRegistry().load("table.aggregate")
    inputs = {
        "table": table,
        "group_by": ["月"],
        "period": {"column": "日付", "unit": "month", "as": "月"},
        "aggregations": [{"column": "金額", "func": "sum"}],
    }
    with pytest.raises(BlockError) as caught:
        block.run(inputs, ctx)
    assert "経費.csv の 2 行目" in caught.value.message
    assert "年が書かれていない" in caught.value.message


def test_a_title_unit_covers_period_columns_but_not_rates_or_counts() -> None:
    data = (
        "損益比較表（単位：千円）\r\n"
        "科目,前期,当期,増減,増減率,前年比,件数,予算,実績\r\n"
        "売上高,100,120,20,20%,120%,3,110,120\r\n"
        "売上原価,60,66,6,10%,110%,4,62,66\r\n"
    )
    result = read_table(data.encode("utf-8"), name="比較.csv")

    assert result.info.units == dict.fromkeys(["前期", "当期", "増減", "予算", "実績"], "千円")
