"""Reading the cells of a long column at once, for ``table_types``: what a CSV of 10万 rows
costs is decided here, what a cell means is not.

A column of a ledger writes the same few forms over and over, and a form read one cell at a
time costs a regular expression and an NFKC each: so the commonest forms are taken by
patterns on the whole column (Arrow's on a CSV's column, Python's on a workbook's cells), and
every other cell is read one by one by the same readers as before (``cell_forms``), each
distinct value once (``each_once``, ``distinct``: a year's ledger writes a few thousand
distinct dates; a CSV's long column is told apart by ``pd.factorize``, not cell by cell):

* ``marked_amounts``: ``¥1,234``, ``1,234円``, ``▲1,234``, ``(1,234)``, as
  ``read_amount_unit`` reads them;
* ``dash_ended``: the cells that end in a dash (the only ones whose dash after the digits a
  column's reading of it turns on: ``table_types._yen_dash``), by their last character;
* ``column_digits``: the digits, commas and points of each cell (``cell_forms.digits_of``), for the
  questions a column asks of its points (``1.200``);
* ``YEN_DASHED``, ``TRAILING``, ``YEN_UNSIGNED``: the commonest cells of ``dash_form``'s
  classes.

Each gives what reading every cell one by one gives (``tests/documents/test_ledger_rows.py``
compares the two on drawn ledgers; ``benchmarks/table_read.py`` measures the difference).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.documents.cell_forms import (
    NOT_DIGITS,
    PLAIN_NUMBER,
    digits_of,
    ends_in_dash,
)

__all__ = [
    "ASCII_NUMBER",
    "AT_ONCE_CELLS",
    "MARKED_AMOUNT",
    "TRAILING",
    "YEN_DASHED",
    "YEN_UNSIGNED",
    "at_once",
    "cell_text",
    "column_digits",
    "dash_ended",
    "distinct",
    "each_once",
    "marked_amounts",
    "matches",
    "rows_of",
]

ASCII_NUMBER = re.compile(PLAIN_NUMBER)
# A yen amount marked as ledgers mark them, no space, no zero, at most 15 digits (a float
# keeps them): read a column at once (``marked_amounts``); anything else one cell at a time.
MARKED_NUMBER = r"(?:[1-9][0-9]{0,2}(?:,[0-9]{3}){1,4}|[1-9][0-9]{0,14})(?:\.[0-9]+)?"
MARKED_AMOUNT = re.compile(rf"[(（][¥￥\\]?{MARKED_NUMBER}円?[)）]|[▲△]?[¥￥\\]?{MARKED_NUMBER}円?")
# The commonest cells of a column's decision on a dash after the digits (``_yen_dash``), as
# ``dash_form`` classes them: a yen amount with the dash (``¥12,000-``, ``12,000円－``), a
# plain amount with a trailing minus (``12,000-``), a yen amount without either (``¥12,000``).
YEN_MARK = r"[¥￥\\]"
YEN_DASHED = re.compile(rf"(?:{YEN_MARK}{MARKED_NUMBER}円?|{MARKED_NUMBER}円)[-－]")
TRAILING = re.compile(rf"{MARKED_NUMBER}[-－]")
YEN_UNSIGNED = re.compile(rf"{YEN_MARK}{MARKED_NUMBER}円?|{MARKED_NUMBER}円")


def cell_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# Below this many cells a column is asked with Python's regex, cell by cell: one call of an
# Arrow kernel costs about 2 ms (it compiles its pattern each time), more than a short column's
# cells cost one by one. A workbook's cells are always asked so (no Arrow in its child).
AT_ONCE_CELLS = 5_000


def at_once(values: pd.Series) -> bool:
    """Whether ``values`` (a CSV's long column of ``str``) are asked with Arrow's kernels."""
    return isinstance(values.dtype, pd.StringDtype) and len(values) >= AT_ONCE_CELLS


def matches(values: pd.Series, pattern: re.Pattern[str]) -> pd.Series:
    """Which ``values`` are strings that ``pattern`` matches whole (a long column at once)."""
    if at_once(values):
        return values.str.fullmatch(pattern.pattern).fillna(False).astype(bool)
    found = [isinstance(v, str) and pattern.fullmatch(v) is not None for v in values.tolist()]
    return pd.Series(found, index=values.index, dtype=bool)


def each_once(read: Callable[[Any], Any], cells: Iterable[Any]) -> list[Any]:
    """``read`` of every cell, each distinct value (and type) read once: a ledger's 10万 rows
    write a few thousand distinct dates, and ``read`` (a date's or an amount's reader) gives
    the same for the same text."""
    seen: dict[tuple[type, Any], Any] = {}
    found = []
    for cell in cells:
        key = (type(cell), cell)
        if key not in seen:
            seen[key] = read(cell)
        found.append(seen[key])
    return found


def distinct(cells: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """``(codes, uniques)``: each cell's position in ``uniques``, the distinct values (and
    types: 1, 1.0 and True are three) in the order they first appear. A CSV's long column is
    told apart at once (``pd.factorize``): a reader then asks each distinct text once and the
    column takes the answers by ``codes`` (a date column: ``table_types``)."""
    if at_once(cells) and not cells.hasnans:
        codes, uniques = pd.factorize(cells)
        return np.asarray(codes), list(uniques)
    keys = [(type(cell), cell) for cell in cells.tolist()]
    index: dict[tuple[type, Any], int] = {}
    for key in keys:
        index.setdefault(key, len(index))
    codes = np.fromiter((index[key] for key in keys), dtype=np.intp, count=len(keys))
    return codes, [cell for _, cell in index]


def rows_of(series: pd.Series) -> dict[Any, int]:
    """The 0-based row of each index label of ``series`` (whose labels are unique): built once
    for a column's list of unreadable cells, which may hold every one of 10万 cells."""
    return dict(zip(series.index.tolist(), range(len(series)), strict=True))


def marked_amounts(texts: pd.Series) -> tuple[pd.Series, np.ndarray, list[str | None]]:
    """The cells of a CSV's column in the commonest forms of a yen amount besides a plain
    number, read at once: ``¥1,234``, ``￥1,234``, ``1,234円``, ``▲1,234``, ``△¥1,234``,
    ``(1,234)``, ``（¥1,234円）`` (``MARKED_AMOUNT``: no space, no zero, at most 15 digits).
    ``(mask, numbers, units)``: which cells, their amounts and the unit each wrote (``円`` or
    None), exactly as ``read_amount_unit`` reads them (a test compares the two on drawn cells);
    every other cell is read one by one."""
    mask = matches(texts, MARKED_AMOUNT)
    read = texts[mask.to_numpy()]
    if at_once(read):
        digits = read.str.replace("[^0-9.]", "", regex=True)
        negative = read.str.contains("[▲△(（]", regex=True).to_numpy(dtype=bool)
        yen = read.str.contains("円", regex=False).tolist()
    else:
        cells = read.tolist()
        digits = pd.Series([re.sub("[^0-9.]", "", c) for c in cells], dtype=object)
        negative = np.array([any(m in c for m in "▲△(（") for c in cells], dtype=bool)
        yen = ["円" in c for c in cells]
    amounts = pd.to_numeric(digits).to_numpy(dtype=float)
    units: list[str | None] = ["円" if y else None for y in yen]
    return mask, np.where(negative, -amounts, amounts), units


def dash_ended(values: pd.Series) -> np.ndarray:
    """The mask of the cells that are strings ending in a dash (``ends_in_dash``). A CSV's
    column is asked by its last characters, each distinct one once; a cell ending in a space
    is asked whole."""
    if not at_once(values):
        return np.array([isinstance(v, str) and ends_in_dash(v) for v in values], dtype=bool)
    last = values.str[-1:]
    asked = {c: None if c.isspace() else ends_in_dash(c) for c in last.dropna().unique()}
    found = last.map(asked)
    spaced = found.isna() & values.notna()
    if spaced.any():
        found[spaced] = [ends_in_dash(v) for v in values[spaced].tolist()]
    return found.fillna(False).to_numpy(dtype=bool)


def column_digits(cells: pd.Series) -> pd.Series:
    """The digits, commas and points of each cell as the readers compare it (``1,200``,
    ``¥1.200`` → ``1.200``). A CSV's plain and marked amounts and ASCII cells, whose normal
    form is themselves, are taken at once; the others one by one (NFKC)."""
    if not at_once(cells):
        return pd.Series(
            [digits_of(cell_text(v)) for v in cells.tolist()],
            index=cells.index,
            dtype=object,
        )
    found = cells.str.replace(NOT_DIGITS, "", regex=True)
    simple = matches(cells, ASCII_NUMBER) | matches(cells, MARKED_AMOUNT)
    simple |= cells.map(lambda v: v.isascii(), na_action="ignore").fillna(False).astype(bool)
    others = ~simple.to_numpy(dtype=bool)
    if others.any():
        labels = cells.index[others]
        found.update(pd.Series([digits_of(v) for v in cells[others]], index=labels, dtype=object))
    return found
