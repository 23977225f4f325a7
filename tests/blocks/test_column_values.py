"""The column readers read every cell as the cell readers do, and find every unreadable cell."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest

from keiri_agent.blocks.table.cells import parse_amount, parse_date
from keiri_agent.blocks.table.column_values import amounts, dates, read_amounts, read_dates
from keiri_agent.documents.tables import read_table

# Cells as records and files hold them: plain and written amounts and dates, codes, blanks.
CELLS = [
    "1,234",
    " 1,234 ",
    "\u30001,234",  # a full-width space: read by the cell reader, not the vectorized pass
    "¥5,000",
    "▲500",
    "(1,200)",
    "１，２３４",
    "010",
    "-0",
    "2025",
    "20250131",
    "2025-01-31",
    " 2025-01-31 ",
    "2025-02-30",
    "2025/1/31",
    "令和7年1月31日",
    "2026-02",
    "2025-03-01 10:30",
    "未定",
    True,
    1234,
    1.5,
    Decimal("2.5"),
    dt.date(2025, 2, 1),
    pd.Timestamp("2025-03-01 10:30"),
]
BLANKS = [None, "", "  ", "\u3000"]


@pytest.mark.parametrize("dtype", [object, "str"])
def test_every_cell_reads_as_the_cell_readers_read_it(dtype: Any) -> None:
    cells = [c for c in CELLS if dtype is object or isinstance(c, str)] + BLANKS
    column = pd.Series(cells, dtype=dtype)
    numbers, not_amounts = read_amounts(column)
    days, not_dates = read_dates(column)
    for row, cell in enumerate(cells):
        blank = cell in BLANKS
        amount = parse_amount(cell)
        day = parse_date(cell)
        assert (None if np.isnan(numbers[row]) else numbers[row]) == amount, cell
        assert bool(not_amounts[row]) == (amount is None and not blank), cell
        assert (None if pd.isna(days[row]) else days[row].date()) == day, cell
        assert bool(not_dates[row]) == (day is None and not blank), cell


def test_the_first_unreadable_cell_and_every_one() -> None:
    column = pd.Series(["100", "未定", None, "200", "TBD", "2025-02-30"], dtype="str")
    assert amounts(column)[1] == 1
    assert np.flatnonzero(read_amounts(column)[1]).tolist() == [1, 4, 5]
    assert dates(column)[1] == 0
    assert np.flatnonzero(read_dates(column)[1]).tolist() == [0, 1, 3, 4, 5]


def test_typed_columns_numbers_are_never_dates_and_dates_never_amounts() -> None:
    numbers = pd.Series([20250131, 5], dtype="int64")
    assert read_dates(numbers)[1].tolist() == [True, True]
    assert read_amounts(numbers)[0].tolist() == [20250131.0, 5.0]
    days = pd.to_datetime(pd.Series(["2025-01-31 10:30", None]))
    assert read_amounts(days)[1].tolist() == [True, False]
    assert read_dates(days)[0].tolist()[0] == pd.Timestamp("2025-01-31")


def test_a_time_with_an_offset_reads_as_its_day_where_the_file_reader_puts_it() -> None:
    """23:30 UTC is 08:30 the next day in Asia/Tokyo (the default KEIRI_TIMEZONE): the table
    blocks read the day that ``read_table`` reads, for text and for typed cells alike."""
    cell = "2026-02-03T23:30:00+00:00"
    expected = dt.date(2026, 2, 4)
    ledger = read_table(f"日付\n{cell}\n".encode(), name="a.csv")
    assert ledger.df["日付"][0].date() == expected

    assert parse_date(cell) == expected
    assert parse_date(pd.Timestamp(cell)) == expected
    assert parse_date(dt.datetime(2026, 2, 3, 23, 30, tzinfo=dt.UTC)) == expected
    for column in (
        pd.Series([cell], dtype=object),
        pd.Series([cell], dtype="str"),
        pd.Series(pd.to_datetime([cell])),  # a column typed with its offset
    ):
        assert read_dates(column)[0][0].date() == expected, column.dtype
        assert dates(column)[0][0].date() == expected, column.dtype
