"""One column read the way ``table.filter`` and ``table.sort`` compare its cells.

Each cell is blank (null, NaN, only whitespace) or not, and may read as an amount and as a date
(the forms of :mod:`~keiri_agent.blocks.table.column_values`); each has a text, either the table
blocks' normalization (:func:`~keiri_agent.blocks.table.normalize.normalize_key`, spaces kept)
or the cell as a record shows it. A cell means what its record means: ``2025-01-31`` read from a
file and the Timestamp it became read alike, and ``True`` is never the amount 1.

The cost is per distinct value, not per row: a column a file reader typed (numbers, dates) is
read as a whole; any other column is factorized once and each distinct value is read once (a
million-row ledger has a few hundred customers). Texts are made only for the distinct values a
comparison asks about, so an amount compared with an amount never builds a text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.column_values import (
    amounts,
    blank_mask,
    dates,
    ordinal_days,
    read_amounts,
    read_dates,
)
from keiri_agent.blocks.table.normalize import normalize_key

__all__ = ["MAJORITY_CHUNK", "ColumnReading", "cell_text"]

# Distinct values read at a time when only the share of amounts matters: small enough to stop
# early on a column of codes, large enough that each read stays vectorized.
MAJORITY_CHUNK = 65_536


class ColumnReading:
    """``column`` read once: blanks, amounts, days and texts per row (each made when first
    asked for, then kept)."""

    def __init__(self, column: pd.Series, zone: dt.tzinfo | None = None) -> None:
        self.column = column
        self.zone = zone  # where a time with a UTC offset is on its day (KEIRI_TIMEZONE)
        self._amounts: np.ndarray | None = None
        self._days: np.ndarray | None = None
        self._texts: dict[bool, np.ndarray] = {}  # normalize → text per slot (None: not made)

    def cell(self, row: int) -> Any:
        """Row ``row``'s cell as its record holds it (what an error shows the user)."""
        return json_cell(self.column.iloc[row])

    @cached_property
    def blank(self) -> np.ndarray:
        """Cells that are blank: null, NaN/NaT/NA, or only whitespace."""
        return self._per_row(blank_mask(self._source), True)

    @property
    def amounts(self) -> np.ndarray:
        """Each cell as an amount (float), NaN where it is blank or not an amount."""
        if self._amounts is None:
            numbers = read_amounts(self._source)[0]
            self._amounts = self._per_row(numbers.to_numpy(dtype="float64"), np.nan)
        return self._amounts

    @property
    def days(self) -> np.ndarray:
        """Each cell as a date (proleptic ordinal, as ``date.toordinal``), NaN where it is blank
        or not a date (an amount that also reads as a date, ``20250131``, has its day here)."""
        if self._days is None:
            self._days = self._per_row(ordinal_days(read_dates(self._source, self.zone)[0]), np.nan)
        return self._days

    def all_amounts(self) -> bool:
        """Whether every non-blank cell reads as an amount; reading stops at the first that
        does not, so a column of text answers at once."""
        if self._amounts is None:
            numbers, first_bad = amounts(self._source)
            if first_bad is not None:
                return False
            self._amounts = self._per_row(numbers.to_numpy(dtype="float64"), np.nan)
        return not (~self.blank & np.isnan(self._amounts)).any()

    def all_dates(self) -> bool:
        """Whether every non-blank cell reads as a date (stops at the first that does not)."""
        if self._days is None:
            days, first_bad = dates(self._source, self.zone)
            if first_bad is not None:
                return False
            self._days = self._per_row(ordinal_days(days), np.nan)
        return not (~self.blank & np.isnan(self._days)).any()

    def mostly_amounts(self) -> bool:
        """Whether more than half of the non-blank cells read as amounts. Distinct values are
        read ``MAJORITY_CHUNK`` at a time until the answer is certain, so a column of codes
        (one per row) stops after reading half of them."""
        filled = ~self.blank
        total = int(filled.sum())
        if self._amounts is not None or self._typed:
            return 2 * int((filled & ~np.isnan(self.amounts)).sum()) > total
        rows = np.bincount(self._slots, minlength=self._size + 1)[:-1]  # per distinct value
        blank = blank_mask(self._source)
        read = unread = 0
        for start in range(0, self._size, MAJORITY_CHUNK):
            part = slice(start, start + MAJORITY_CHUNK)
            numbers = read_amounts(self._source.iloc[part])[0].to_numpy(dtype="float64")
            found = ~np.isnan(numbers)
            read += int(rows[part][found].sum())
            unread += int(rows[part][~found & ~blank[part]].sum())
            if 2 * read > total or 2 * unread >= total:
                break
        return 2 * read > total

    def text_test(
        self, normalize: bool, test: Callable[[str], bool], rows: np.ndarray | None = None
    ) -> np.ndarray:
        """``test`` of each cell's text (normalized or as written), asked once per distinct
        value; only for ``rows`` when given (False elsewhere)."""
        slots = self._slots
        present = slots if rows is None else slots[rows]
        asked = np.flatnonzero(np.bincount(present, minlength=self._size + 1))
        texts = self._text_of(normalize, asked)
        answers = np.zeros(self._size + 1, dtype=bool)
        answers[asked] = [test(texts[slot]) for slot in asked.tolist()]
        hits: np.ndarray = answers[slots]
        return hits if rows is None else hits & rows

    def texts(self, normalize: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(slots, texts)``: each row's slot and the text of every slot (an object array)."""
        every = np.arange(self._size + 1)
        return self._slots, self._text_of(normalize, every)

    # --- distinct values ----------------------------------------------------------------------

    @cached_property
    def _typed(self) -> bool:
        """A column the reader typed: read as a whole, vectorized."""
        dtype = self.column.dtype
        return bool(
            pd.api.types.is_numeric_dtype(dtype)
            or pd.api.types.is_bool_dtype(dtype)
            or pd.api.types.is_datetime64_any_dtype(dtype)
            or isinstance(dtype, pd.PeriodDtype)
        )

    @cached_property
    def _factors(self) -> tuple[np.ndarray, list[Any], pd.Series]:
        """Each row's slot (0..size-1 for a distinct value, ``size`` for a null), each distinct
        value, and the distinct values as a Series (its dtype kept: text stays vectorized)."""
        codes, uniques = pd.factorize(self.column, use_na_sentinel=True)
        values = uniques.tolist()
        distinct = pd.Series(uniques)
        if self.column.dtype == object and any(map(_may_be_bool, values)):
            # True == 1 and False == 0 hash alike: key them apart, as their records differ.
            keyed = self.column.map(lambda v: (_is_bool(v), v)).where(self.column.notna())
            codes, pairs = pd.factorize(keyed, use_na_sentinel=True)
            values = [pair[1] for pair in pairs]
            distinct = pd.Series(values, dtype=object)
        size = len(values)
        slots = np.where(codes < 0, size, codes).astype(np.int64)
        if isinstance(distinct.dtype, pd.CategoricalDtype):
            distinct = distinct.astype(object)
        return slots, values, distinct

    @property
    def _slots(self) -> np.ndarray:
        return self._factors[0]

    @property
    def _size(self) -> int:
        return len(self._factors[1])

    @property
    def _source(self) -> pd.Series:
        """What is read: the column when typed (vectorized as a whole), else its distinct
        values."""
        return self.column if self._typed else self._factors[2]

    def _per_row(self, read: np.ndarray, null: Any) -> np.ndarray:
        """What was read from ``_source`` as one value per row (``null`` for null cells)."""
        return read if self._typed else np.append(read, null)[self._slots]

    def _text_of(self, normalize: bool, asked: np.ndarray) -> np.ndarray:
        """The texts of the ``asked`` slots, made once each (the null slot's text is "")."""
        texts = self._texts.get(normalize)
        if texts is None:
            texts = np.full(self._size + 1, None, dtype=object)
            texts[self._size] = ""
            self._texts[normalize] = texts
        values = self._factors[1]
        for slot in asked.tolist():
            if texts[slot] is None:
                texts[slot] = cell_text(values[slot], normalize)
        return texts


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _may_be_bool(value: Any) -> bool:
    """A distinct value that is a bool, or a number a bool could have been merged into."""
    if _is_bool(value):
        return True
    return isinstance(value, int | float | Decimal | np.number) and value in (0, 1)


def cell_text(value: Any, normalize: bool) -> str:
    """A cell's (or a compared value's) text: normalized (NFKC, casefold, spaces collapsed),
    or as its record shows it; "" for a null."""
    if normalize:
        return normalize_key(value, keep_spaces=True)
    cell = json_cell(value)
    if cell is None:
        return ""
    return cell if isinstance(cell, str) else str(cell)
