"""Every cell ``system_forms`` draws is read to its value, cell by cell and as whole files.

Property: "every common date form and amount form is read to the right value or listed;
never a wrong value", for the forms of this round (月末, zones after a time, a time after the
weekday, nanoseconds, JPY, 億・万・千 places), and a day with a time range
(``10:00-12:00``) is never read as a time with a zone. A column headed 年月 whose cells are
six digits (``202601``, as accounting software exports the period) is a month column. Cell by cell (``read_date`` / ``read_amount``,
a zone read into Asia/Tokyo) and as files: a ledger with a title line, CSV (UTF-8) and a
workbook of text cells, read by ``read_table`` with nothing listed and every value right.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from keiri_agent.documents.cell_forms import date_problem, local_time, read_amount, read_date
from keiri_agent.documents.tables import read_table
from tests.documents.cell_shapes import Cell, misread
from tests.documents.system_forms import amount_cell, date_cell, range_cell
from tests.documents.test_ledger_corpus import _workbook
from tests.documents.test_table_footer import xlsx_bytes

CELLS = 3000  # drawn cells of each kind (about a second)
FILES = 24  # drawn files of each format
ROWS = 30  # data rows of a drawn file
TOKYO = ZoneInfo("Asia/Tokyo")


def _local(value: object) -> object:
    return local_time(value, TOKYO) if isinstance(value, dt.datetime) else value


@pytest.mark.parametrize(
    ("draw", "reader"),
    [(date_cell, lambda t: _local(read_date(t))), (amount_cell, read_amount)],
    ids=["date", "amount"],
)
def test_every_drawn_cell_reads_to_its_value(
    draw: Callable[[random.Random], Cell], reader: Callable[[str], object]
) -> None:
    wrong = misread(draw, reader, f"system-{draw.__name__}", CELLS)
    assert wrong == [], f"{len(wrong)} of {CELLS}: {wrong[:10]}"


def _file(seed: int, fmt: str) -> tuple[bytes, list[tuple[Cell, Cell]]]:
    """A drawn export (title line, header, ``ROWS`` rows) and its date and amount cells. A
    file's date column is one kind (月末 dates, or times), as a system writes one column."""
    rng = random.Random(f"{seed}-{fmt}")
    dates = [date_cell(rng) for _ in range(ROWS * 4)]
    kind = rng.random() < 0.5
    dates = [c for c in dates if isinstance(c.value, dt.datetime) is kind][:ROWS]
    cells = [(d, amount_cell(rng)) for d in dates]
    header = ["日時" if kind else "支払期日", "摘要", "金額"]
    rows = [["取引明細（2026年度）"], header]
    rows += [[d.text, f"摘要{n}", a.text] for n, (d, a) in enumerate(cells)]
    if fmt == "xlsx":
        return xlsx_bytes(rows), cells
    lines = [",".join(f'"{c}"' if "," in c else c for c in row) for row in rows]
    return ("\r\n".join(lines) + "\r\n").encode("utf-8"), cells


def _same(read: object, want: object) -> bool:
    if isinstance(read, pd.Timestamp):
        stamp = read.to_pydatetime()
        return (
            stamp == want
            if isinstance(want, dt.datetime)
            else stamp
            == dt.datetime(
                want.year,
                want.month,
                want.day,  # type: ignore[union-attr]
            )
        )
    return read == want


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_drawn_files_read_every_cell(fmt: str) -> None:
    wrong = []
    for seed in range(FILES):
        data, cells = _file(seed, fmt)
        result = read_table(data, name=f"明細{seed}.{fmt}")
        if result.info.unreadable:
            wrong.append((seed, result.info.unreadable[:3]))
            continue
        date_column = result.df.columns[0]
        for (day, amount), when, yen in zip(
            cells, result.df[date_column].tolist(), result.df["金額"].tolist(), strict=True
        ):
            if not (_same(when, day.value) and _same(yen, amount.value)):
                wrong.append((seed, day.text, when, amount.text, yen))
    assert wrong == [], f"{len(wrong)} wrong: {wrong[:5]}"


def test_a_time_range_is_never_read_as_a_zone() -> None:
    # 2026-02-03 10:00-12:00 was read as 10:00 at UTC-12: 2026-02-04 07:00 in Tokyo.
    rng = random.Random("ranges")
    for _ in range(CELLS // 3):
        cell = range_cell(rng)
        assert read_date(cell.text) is None, cell
        assert cell.why in date_problem(cell.text), cell
    rows = "日時,摘要,金額\r\n" + "".join(
        f"{range_cell(rng).text},会議室,{n}\r\n" for n in range(ROWS)
    )
    result = read_table(rows.encode(), name="予約.csv")
    assert "日時" not in result.info.converted
    assert result.df["日時"].map(lambda v: isinstance(v, str)).all()


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_six_digits_under_a_year_month_header_are_months(fmt: str) -> None:
    rng = random.Random(f"yyyymm-{fmt}")
    months = [(rng.randrange(2019, 2031), rng.randrange(1, 13)) for _ in range(ROWS)]
    rows: list[list[object]] = [["対象年月", "部門", "金額"]]
    rows += [[y * 100 + m, "営業", n] for n, (y, m) in enumerate(months)]
    data = (
        _workbook(rows)
        if fmt == "xlsx"
        else "".join(",".join(map(str, r)) + "\n" for r in rows).encode()
    )
    result = read_table(data, name=f"月次.{fmt}")
    assert result.info.converted["対象年月"] == "month"
    assert [str(p) for p in result.df["対象年月"]] == [f"{y}-{m:02d}" for y, m in months]
    assert any("6 桁の年月" in w for w in result.info.warnings)


@pytest.mark.parametrize(
    ("header", "cells"),
    [
        ("計上年月", ["202601", "202613"]),
        ("年月日", ["202601", "202602"]),
        ("伝票番号", ["202601"]),
    ],
)
def test_six_digits_that_name_no_month_stay_numbers(header: str, cells: list[str]) -> None:
    data = (f"{header},金額\n" + "".join(f"{c},100\n" for c in cells)).encode()
    result = read_table(data, name="明細.csv")
    assert result.df[header].tolist() == [int(c) for c in cells]


@pytest.mark.parametrize("written", ["1.2E+06", "1.23457E+11", "-3.5e4"])
def test_a_number_in_exponent_form_is_listed_as_excels_rounding(written: str) -> None:
    result = read_table(f"日付,金額\n2026/2/3,{written}\n2026/2/4,1200\n".encode(), name="x.csv")
    [cell] = result.info.unreadable
    assert (cell["position"], cell["value"]) == (2, written)
    assert "丸めて表示した値" in cell["reason"]
