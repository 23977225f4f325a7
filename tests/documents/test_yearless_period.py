"""Dates written without years are read in the period the title names, and only there.

A hand-kept 現金出納帳 writes ``2/3`` or ``2月3日(火)`` under ``2026年2月分`` or
``期間：2025/4/1～2026/3/31``. Drawn ledgers (seeded; CSV and workbooks): under a title that
names one period, every month and day inside it reads to its day; with a day outside the
period, or under a title that names no period (a fiscal year alone, a print date, two months),
the column stays as written and every cell is listed at its line with why: never a guessed year.
"""

from __future__ import annotations

import datetime as dt
import io
import random

import pytest
from openpyxl import Workbook

from keiri_agent.documents.cell_forms import WEEKDAYS
from keiri_agent.documents.cell_period import Period, day_in, period_in
from keiri_agent.documents.tables import TableResult, read_table
from tests.documents.test_table_footer import WRITERS

LEDGERS = 30  # drawn ledgers of each kind and format


def _period(rng: random.Random) -> tuple[str, Period]:
    """A title naming a period, as a back office writes it, and the period."""
    if rng.random() < 0.4:
        year, month = rng.randrange(2019, 2031), rng.randrange(1, 13)
        first = dt.date(year, month, 1)
        last = (first + dt.timedelta(days=31)).replace(day=1) - dt.timedelta(days=1)
        era = f"令和{year - 2018}年{month}月" if year > 2019 else f"{year}年{month}月"
        return rng.choice([f"現金出納帳 {era}分", f"{era}度 小口現金"]), Period(first, last)
    first = dt.date(2019, 6, 1) + dt.timedelta(days=rng.randrange(3000))
    last = first + dt.timedelta(days=rng.randrange(27, 365))
    title = rng.choice(
        [
            f"期間：{first:%Y/%m/%d}～{last:%Y/%m/%d}",
            f"自 令和{first.year - 2018}年{first.month}月{first.day}日 至 "
            f"令和{last.year - 2018}年{last.month}月{last.day}日",
            f"{first.year}年{first.month}月{first.day}日から{last.year}年{last.month}月{last.day}日",
        ]
    )
    return title, Period(first, last)


def _written(rng: random.Random, day: dt.date) -> str:
    weekday = f"({WEEKDAYS[day.weekday()]})" if rng.random() < 0.3 else ""
    return rng.choice([f"{day.month}/{day.day}", f"{day.month}月{day.day}日{weekday}"])


def _ledger(rows: list[list[str]], fmt: str) -> TableResult:
    return read_table(WRITERS[fmt](rows), name=f"出納帳.{fmt}")


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_days_in_the_named_period_read_to_their_dates(fmt: str) -> None:
    rng = random.Random(f"in-{fmt}")
    for _ in range(LEDGERS):
        title, period = _period(rng)
        span = (period.last - period.first).days
        days = [period.first + dt.timedelta(days=rng.randrange(span + 1)) for _ in range(8)]
        rows = [[title], ["日付", "摘要", "金額"]]
        rows += [[_written(rng, d), f"摘要{n}", f"{n + 1},000"] for n, d in enumerate(days)]
        result = _ledger(rows, fmt)
        assert period_in([title]) == period, title
        assert result.info.unreadable == [], (title, result.info.unreadable)
        assert [t.date() for t in result.df["日付"]] == days, title
        assert any("年のない日付 8 個を表題の期間" in w for w in result.info.warnings)


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_day_outside_the_period_keeps_every_cell_listed(fmt: str) -> None:
    rng = random.Random(f"out-{fmt}")
    for _ in range(LEDGERS):
        title, period = _period(rng)
        inside = period.first
        outside = period.last + dt.timedelta(days=rng.randrange(1, 20))
        if day_in(f"{outside.month}/{outside.day}", period) is not None:
            continue  # the same month and day a year before lies in a long period
        rows = [[title], ["日付", "摘要", "金額"], [_written(rng, inside), "文具", "1,200"]]
        rows.append([f"{outside.month}/{outside.day}", "交通費", "300"])
        result = _ledger(rows, fmt)
        assert result.df["日付"].tolist() == [rows[2][0], rows[3][0]]  # as written
        listed = {u["position"]: u["reason"] for u in result.info.unreadable}
        assert set(listed) == {3, 4}
        assert "期間の日に当たらないセル" in listed[3]
        assert "当たる日がありません" in listed[4]


@pytest.mark.parametrize(
    "title",
    [
        "現金出納帳 2025年度",  # the month the fiscal year begins with is not written
        "作成日 2026/3/5",
        "2026年1月分・2026年2月分 比較",
        "現金出納帳",
    ],
)
def test_no_period_named_no_year_taken(title: str) -> None:
    rows = [
        [title],
        ["日付", "摘要", "金額"],
        ["2/3", "文具", "1,200"],
        ["2月4日", "交通費", "300"],
    ]
    for fmt in WRITERS:
        result = _ledger(rows, fmt)
        assert result.df["日付"].tolist() == ["2/3", "2月4日"]
        assert [u["position"] for u in result.info.unreadable] == [3, 4]
        assert all("年が書かれていない" in u["reason"] for u in result.info.unreadable)
        assert "期間：2026/4/1～2027/3/31" in result.info.unreadable[0]["reason"]  # the hint


def test_a_weekday_that_is_not_the_days_in_the_period_is_listed() -> None:
    period = Period(dt.date(2026, 2, 1), dt.date(2026, 2, 28))
    assert day_in("2月3日(火)", period) == dt.date(2026, 2, 3)
    assert day_in("2月3日(水)", period) is None  # the 3rd of February 2026 is a Tuesday


def test_a_slip_in_a_column_that_writes_its_years_is_still_listed() -> None:
    rows = [["現金出納帳 2026年2月分"], ["日付", "摘要", "金額"]]
    rows += [[f"2026/2/{d}", "文具", "100"] for d in range(1, 10)] + [["2/10", "文具", "100"]]
    result = _ledger(rows, "csv")
    assert [(u["position"], u["value"]) for u in result.info.unreadable] == [(12, "2/10")]


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_period_line_wider_than_the_table_is_a_title_not_the_header(fmt: str) -> None:
    start, end = dt.datetime(2026, 2, 1), dt.datetime(2026, 2, 28)
    cells: list[object] = ["期間", start, "～", end] if fmt == "xlsx" else []
    rows: list[list[object]] = [
        ["現金出納帳"],
        cells or ["自", "令和8年2月1日", "至", "令和8年2月28日"],
    ]
    rows += [["日付", "摘要", "金額"], ["2/3", "文具", 1200], ["2/4", "交通費", 300]]
    if fmt == "xlsx":
        book = Workbook()
        sheet = book.active
        assert sheet is not None
        for row in rows:
            sheet.append(row)
        out = io.BytesIO()
        book.save(out)
        data = out.getvalue()
    else:
        data = "\n".join(",".join(map(str, row)) for row in rows).encode()
    result = read_table(data, name=f"出納帳.{fmt}")
    assert result.info.columns == ["日付", "摘要", "金額"]
    assert len(result.info.skipped_title_rows) == 2
    assert [t.date() for t in result.df["日付"]] == [dt.date(2026, 2, 3), dt.date(2026, 2, 4)]
