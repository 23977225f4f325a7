"""Groups of a table and what ``table.aggregate`` computes for each, by columns.

:func:`group_codes` gives every row the number of its group (first appearance order): blank
keys (null, NaN, whitespace) are one group, ``True`` and ``1`` stay apart, and a date keys as
the day it is. :func:`period_labels` derives 日 / 月 / 四半期 / 年度 labels from a date column.
:func:`aggregate_column` computes one function over the groups. A cell a function cannot read
raises :class:`Unreadable` with its row and what it should have been, for the block to name
where the user finds it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.cells import json_cell, parse_amount
from keiri_agent.blocks.table.column_values import (
    amounts,
    blank_mask,
    dates,
    day_of,
    exact_sums,
    ordinal_days,
    without_blanks,
)

__all__ = ["Groups", "Unreadable", "aggregate_column", "group_codes", "period_labels"]


class Unreadable(Exception):  # noqa: N818 - carried to the block, which raises a BlockError
    """A cell a function needs as an amount or a date, and is not one."""

    def __init__(self, row: int, kind: str) -> None:
        super().__init__(row, kind)
        self.row = row
        self.kind = kind


@dataclass(frozen=True)
class Groups:
    """Each row's group (``codes``, 0..count-1) and each group's key values."""

    codes: np.ndarray
    keys: list[tuple[Any, ...]]

    @property
    def count(self) -> int:
        return len(self.keys)


def _has_bools(column: pd.Series) -> bool:
    return column.dtype == object and bool(column.map(lambda v: isinstance(v, bool)).any())


def _column_codes(column: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Codes of one key column (blank: its own code) and the key value of each code."""
    blank = blank_mask(column)
    if _has_bools(column):  # True and 1 hash alike: key them apart
        values = column.map(lambda v: (isinstance(v, bool), json_cell(v)))
    elif pd.api.types.is_datetime64_any_dtype(column.dtype):
        values = column.dt.normalize()
    else:
        values = column
    codes, uniques = pd.factorize(values.where(~blank), use_na_sentinel=True)
    keys = [json_cell(u[1]) if isinstance(u, tuple) else json_cell(u) for u in uniques]
    if blank.any():
        codes = np.where(blank, len(keys), codes)
        keys.append(None)
    return codes.astype(np.int64), keys


def group_codes(frame: pd.DataFrame, columns: list[str]) -> Groups:
    """The groups of ``frame`` by ``columns`` (none: one group of every row)."""
    rows = len(frame)
    if not columns:
        return Groups(np.zeros(rows, dtype=np.int64), [()])
    parts = [_column_codes(frame[c]) for c in columns]
    if len(parts) == 1:
        codes, keys = parts[0]
        order = pd.unique(codes)  # first appearance
        renumber = np.empty(len(keys), dtype=np.int64)
        renumber[order] = np.arange(len(order))
        return Groups(renumber[codes], [(keys[c],) for c in order])
    grouped = pd.DataFrame({i: p[0] for i, p in enumerate(parts)}).groupby(
        list(range(len(parts))), sort=False
    )
    codes = grouped.ngroup().to_numpy(dtype=np.int64)
    firsts = grouped.head(1)
    keys = [
        tuple(parts[i][1][int(code)] for i, code in enumerate(row))
        for row in firsts.itertuples(index=False, name=None)
    ]
    return Groups(codes, keys)


def period_labels(
    column: pd.Series, unit: str, start_month: int, zone: dt.tzinfo | None = None
) -> tuple[pd.Series, int | None]:
    """``(labels, first_bad)``: 2025-01-31 / 2025-01 / 2025-Q1 / 2025 for each row; the
    fiscal year and quarter start in ``start_month`` (2025年度 = 2025-04..2026-03); a time with
    a UTC offset is on its day in ``zone``."""
    days, bad = dates(column, zone)
    if bad is not None:
        return pd.Series(dtype=object), bad
    missing = days.isna().to_numpy()
    if missing.any():
        return pd.Series(dtype=object), int(np.flatnonzero(missing)[0])
    if unit == "day":
        return days.dt.strftime("%Y-%m-%d"), None
    year = days.dt.year.to_numpy()
    month = days.dt.month.to_numpy()
    if unit == "month":
        number = year * 100 + month
        return _formatted(number, lambda n: f"{n // 100:04d}-{n % 100:02d}", column.index), None
    shifted = month - start_month
    fiscal = year + np.where(shifted < 0, -1, 0)
    if unit == "year":
        return _formatted(fiscal, lambda n: f"{n:04d}", column.index), None
    quarter = (shifted % 12) // 3 + 1
    return _formatted(
        fiscal * 10 + quarter, lambda n: f"{n // 10:04d}-Q{n % 10}", column.index
    ), None


def _formatted(numbers: np.ndarray, label: Any, index: pd.Index) -> pd.Series:
    """Labels made once per distinct number, then spread to the rows."""
    codes, uniques = pd.factorize(numbers)
    texts = np.array([label(int(u)) for u in uniques], dtype=object)
    return pd.Series(texts[codes], index=index, dtype=object)


def _counts(mask: np.ndarray, groups: Groups) -> np.ndarray:
    return np.bincount(groups.codes[mask], minlength=groups.count)


def aggregate_column(
    column: pd.Series | None, func: str, groups: Groups, zone: dt.tzinfo | None = None
) -> list[Any]:
    """``func`` over each group (JSON-safe values; dates with a UTC offset on their day in
    ``zone``); raises :class:`Unreadable`."""
    if column is None:
        return [int(n) for n in np.bincount(groups.codes, minlength=groups.count)]
    filled = ~blank_mask(column)
    if func == "count":
        return [int(n) for n in _counts(filled, groups)]
    if func in ("first", "last"):
        grouped = without_blanks(column).groupby(groups.codes)
        picked = grouped.first() if func == "first" else grouped.last()
        return [json_cell(picked.get(g)) for g in range(groups.count)]
    if func == "nunique":
        present = column[filled]
        if _has_bools(present):
            present = present.map(lambda v: (isinstance(v, bool), json_cell(v)))
        unique = present.groupby(groups.codes[filled]).nunique()
        return [int(unique.get(g, 0)) for g in range(groups.count)]
    if func in ("sum", "mean"):
        numbers, bad = amounts(column)
        if bad is not None:
            raise Unreadable(bad, "金額（数値）")
        totals = exact_sums(numbers, groups.codes, groups.count)
        if func == "sum":
            return [json_cell(t) for t in totals]
        counted = _counts(numbers.notna().to_numpy(), groups)
        return [
            json_cell(float(t / int(n))) if n else None
            for t, n in zip(totals, counted, strict=True)
        ]
    return _extreme(column, func, groups, filled, zone)


def _extreme(
    column: pd.Series, func: str, groups: Groups, filled: np.ndarray, zone: dt.tzinfo | None
) -> list[Any]:
    """min / max of amounts, or of dates when the first non-blank cell is not an amount."""
    first = np.flatnonzero(filled)
    if first.size == 0:
        return [None] * groups.count
    if parse_amount(column.iloc[int(first[0])]) is not None or pd.api.types.is_numeric_dtype(
        column.dtype
    ):
        numbers, bad = amounts(column)
        if bad is not None:
            raise Unreadable(bad, "金額")
        values, as_days = numbers, False
    else:
        days, bad = dates(column, zone)
        if bad is not None:
            raise Unreadable(bad, "日付" if bad != int(first[0]) else "金額か日付")
        values, as_days = pd.Series(ordinal_days(days), index=column.index), True
    grouped = values.groupby(groups.codes)
    picked = grouped.min() if func == "min" else grouped.max()
    out: list[Any] = []
    for g in range(groups.count):
        value = picked.get(g)
        if value is None or value != value:
            out.append(None)
        elif as_days:
            out.append(day_of(float(value)).isoformat())
        else:
            out.append(json_cell(Decimal(repr(float(value)))))
    return out
