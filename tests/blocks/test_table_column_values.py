"""The shared column readers: every unreadable cell found, dates of any year, exact sums."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.column_values import (
    dates,
    exact_amounts,
    exact_scale,
    exact_sums,
    read_amounts,
    read_dates,
)


def test_every_cell_that_is_not_an_amount_is_found() -> None:
    cells = pd.Series(
        ["(1,200)", "-", "¥1,234", True, 5, None, " ", "未定", 1.5, "１，０００円", {"内訳": 1}],
        dtype=object,
    )
    numbers, bad = read_amounts(cells)
    assert np.flatnonzero(bad).tolist() == [1, 3, 7, 10]  # a lone dash, a truth value, text...
    assert numbers[[0, 2, 4, 8, 9]].tolist() == [-1200.0, 1234.0, 5.0, 1.5, 1000.0]
    assert numbers[[5, 6]].isna().all()  # blanks are blank, not unreadable


def test_dates_of_any_year_are_read() -> None:
    cells = pd.Series(
        ["2025/1/31", "9999/12/31", "9999-12-31", "2025-02-30", "令和7年2月1日", None]
    )
    days, first_bad = dates(cells)
    assert first_bad == 3  # 2025-02-30: written as a date, no such day
    assert days[1] == days[2] == pd.Timestamp("9999-12-31")  # an open end date, not an overflow
    assert days[4] == pd.Timestamp("2025-02-01")
    _, bad = read_dates(pd.Series([20250131, True, "2025-01-31"], dtype=object))
    assert bad.tolist() == [True, True, False]  # numbers and truth values are not dates


def test_sums_are_exact_for_amounts_with_decimals() -> None:
    codes = np.zeros(3, dtype=np.int64)
    assert exact_sums(pd.Series([1000000.5, 2.0, 0.25]), codes, 1) == [Decimal("1000002.75")]
    assert exact_sums(pd.Series([0.1, 0.2, np.nan]), codes, 1) == [Decimal("0.3")]
    # sums that would overflow int64 as scaled integers are still exact
    big = pd.Series([9.0e15, 9.0e15, 0.5])
    assert exact_sums(big, codes, 1) == [Decimal("18000000000000000.5")]


def test_the_scale_of_a_float_is_the_decimals_it_is_written_with() -> None:
    assert exact_scale(np.array([0.1, 1234567.25, 3.0, np.nan])) == 2
    assert exact_scale(np.array([1 / 3])) is None


def test_exact_amounts_subtract_as_the_decimals_they_are_written_as() -> None:
    units, scale = exact_amounts(np.array([0.3, 0.1, 1234567.25]))
    assert (units.tolist(), scale) == ([30, 10, 123456725], 2)  # 0.3 - 0.1 is 20 units
    # Beyond nine decimals (or 2**51 units) they are Decimals, one made per distinct amount.
    exact, scale = exact_amounts(np.array([0.1234567891, 0.1, 0.1234567891]))
    assert scale is None
    assert exact.tolist() == [Decimal("0.1234567891"), Decimal("0.1"), Decimal("0.1234567891")]
    assert exact[0] is exact[2]
