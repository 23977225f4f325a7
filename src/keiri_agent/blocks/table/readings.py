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

from collections.abc import Callable
from decimal import Decimal
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.column_values import (
    blank_mask,
    ordinal_days,
    read_amounts,
    read_dates,
)
from keiri_agent.blocks.table.normalize import normalize_key

__all__ = ["ColumnReading", "cell_text"]


class ColumnReading:
    """``column`` read once: blanks, amounts, days and texts per row (lazily, then kept)."""

    def __init__(self, column: pd.Series) -> None:
        self.column = column
        self._texts: dict[bool, np.ndarray] = {}  # normalize → text per slot (None: not made)

    def cell(self, row: int) -> Any:
        """Row ``row``'s cell as its record holds it (what an error shows the user)."""
        return json_cell(self.column.iloc[row])

    @cached_property
    def blank(self) -> np.ndarray:
        """Cells that are blank: null, NaN/NaT/NA, or only whitespace."""
        if self._typed:
            return blank_mask(self.column)
        return self._spread(np.append(blank_mask(self._distinct), True))

    @cached_property
    def amounts(self) -> np.ndarray:
        """Each cell as an amount (float), NaN where it is blank or not an amount."""
        if self._typed:
            return read_amounts(self.column)[0].to_numpy(dtype="float64")
        numbers = read_amounts(self._distinct)[0].to_numpy(dtype="float64")
        return self._spread(np.append(numbers, np.nan))

    @cached_property
    def days(self) -> np.ndarray:
        """Each cell as a date (proleptic ordinal, as ``date.toordinal``), NaN where it is blank
        or not a date (an amount that also reads as a date, ``20250131``, has its day here)."""
        if self._typed:
            return ordinal_days(read_dates(self.column)[0])
        ordinals = ordinal_days(read_dates(self._distinct)[0])
        return self._spread(np.append(ordinals, np.nan))

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
        hits = answers[slots]
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
        values = list(uniques.tolist()) if hasattr(uniques, "tolist") else list(uniques)
        if self.column.dtype == object and any(map(_may_be_bool, values)):
            # True == 1 and False == 0 hash alike: key them apart, as their records differ.
            keyed = self.column.map(lambda v: (_is_bool(v), v)).where(self.column.notna())
            codes, tuples = pd.factorize(keyed, use_na_sentinel=True)
            values = [pair[1] for pair in tuples]
            uniques = np.empty(len(values), dtype=object)
            uniques[:] = values
        size = len(values)
        slots = np.where(codes < 0, size, codes).astype(np.int64)
        distinct = pd.Series(uniques)
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
    def _distinct(self) -> pd.Series:
        return self._factors[2]

    def _spread(self, per_slot: np.ndarray) -> np.ndarray:
        """A value per slot (the null slot last) as a value per row."""
        return per_slot[self._slots]

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
