"""The columns a ``table.compute`` expression works on, and how each kind is read as another.

A node of an expression yields one :data:`Operand`: :class:`~keiri_agent.blocks.table.expr_numbers.Decimals`
(exact numbers), :class:`Texts`, :class:`Truths` (comparison results), or :class:`Raw` (a column
as the table holds it: typed by the file reader, or records' cells). :func:`reading` reads a raw
or text column as numbers or as day numbers with the shared column readers
(:mod:`keiri_agent.blocks.table.column_values`), :func:`truth_reading` as truth values, each
with the mask of the cells that cannot be read (the evaluator names them). :func:`texts` and
:func:`text_keys` give the text an operand shows and the key ``=`` compares it by,
:func:`as_column` the table column an operand becomes, :func:`either` the result of ``if``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.column_values import blank_mask, read_amounts, read_dates
from keiri_agent.blocks.table.expr_numbers import Decimals, choose, with_nones
from keiri_agent.blocks.table.normalize import normalize_key

__all__ = [
    "EPOCH_DAY",
    "Columns",
    "Operand",
    "Raw",
    "Texts",
    "Truths",
    "as_column",
    "cell_at",
    "either",
    "kind_of",
    "reading",
    "text_keys",
    "texts",
    "truth_reading",
]

EPOCH_DAY: Final = np.datetime64("1970-01-01", "D")  # day numbers count from here


@dataclass(frozen=True)
class Texts:
    """Text made by the expression (``&``, written text)."""

    values: np.ndarray  # object: str (anything where blank)
    blank: np.ndarray


@dataclass(frozen=True)
class Truths:
    """Truth values made by the expression (comparisons, and / or / not, true / false)."""

    values: np.ndarray  # bool (anything where blank)
    blank: np.ndarray


@dataclass(frozen=True)
class Raw:
    """A column as the table holds it; its readings as numbers / days are made once. The
    result of an ``if`` whose branches differ in kind keeps them (``branches``: the rows that
    took the first, the two results, the rows without a condition), so that reading it as
    numbers reads the exact numbers of a branch, not the floats of ``series``."""

    series: pd.Series
    branches: tuple[np.ndarray, Operand, Operand, np.ndarray] | None = None
    readings: dict[str, tuple[Decimals, np.ndarray]] = field(default_factory=dict, compare=False)


Operand = Decimals | Texts | Truths | Raw


def kind_of(value: Operand) -> str:
    if isinstance(value, Decimals):
        return "number"
    if isinstance(value, Texts):
        return "text"
    return "bool" if isinstance(value, Truths) else "raw"


def as_column(value: Operand) -> pd.Series:
    """The operand as a table column (its records hold what the expression gave)."""
    if isinstance(value, Decimals):
        return value.output()
    if isinstance(value, Raw):
        return value.series.reset_index(drop=True)
    if isinstance(value, Truths):
        if value.blank.any():
            return pd.Series(pd.arrays.BooleanArray(value.values.astype(bool), value.blank.copy()))
        return pd.Series(value.values.astype(bool))
    return with_nones(value.values, value.blank)


class Columns(Mapping[str, Operand]):
    """The columns an expression can name: the table's (wrapped when first named) and those
    computed by earlier entries of ``columns`` (which replace a table column of their name)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.made: dict[str, Operand] = {}

    def __getitem__(self, name: str) -> Operand:
        if name not in self.made:
            if name not in self.frame.columns:
                raise KeyError(name)
            self.made[name] = Raw(self.frame[name])
        return self.made[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.frame.columns
        yield from (name for name in self.made if name not in self.frame.columns)

    def __len__(self) -> int:
        return len(self.frame.columns) + sum(1 for n in self.made if n not in self.frame.columns)

    def set(self, name: str, value: Operand) -> None:
        self.made[name] = value


def _series(value: Raw | Texts) -> pd.Series:
    if isinstance(value, Raw):
        return value.series
    return with_nones(value.values, value.blank)


def reading(
    value: Raw | Texts, kind: str, zone: dt.tzinfo | None = None
) -> tuple[Decimals, np.ndarray]:
    """``(column, unreadable)``: the cells as numbers or as day numbers (a time with a UTC
    offset on its day in ``zone``), and the non-blank cells that are not; made once per raw
    column."""
    cache = value.readings if isinstance(value, Raw) else {}
    if kind not in cache:
        if isinstance(value, Raw) and value.branches is not None:
            chosen, then, other, blank = value.branches
            (a, a_bad), (b, b_bad) = _read_any(then, kind, zone), _read_any(other, kind, zone)
            bad = np.where(chosen, a_bad, b_bad) & ~blank
            cache[kind] = (_blanked(choose(chosen, a, b), blank), bad)
        else:
            cache[kind] = _read_series(_series(value), kind, zone)
    return cache[kind]


def _read_any(value: Operand, kind: str, zone: dt.tzinfo | None) -> tuple[Decimals, np.ndarray]:
    """Any operand read as numbers or day numbers: a truth value is neither, a number is no
    date."""
    if isinstance(value, Raw | Texts):
        return reading(value, kind, zone)
    if isinstance(value, Decimals) and kind == "number":
        return value, np.zeros(len(value.blank), dtype=bool)
    blank = np.ones(len(value.blank), dtype=bool)
    return Decimals(np.zeros(len(blank), dtype=np.int64), 0, blank), ~value.blank


def _read_series(
    series: pd.Series, kind: str, zone: dt.tzinfo | None
) -> tuple[Decimals, np.ndarray]:
    if kind == "number" and pd.api.types.is_signed_integer_dtype(series.dtype):
        blank = series.isna().to_numpy(dtype=bool)
        ints = series.to_numpy(dtype=np.int64, na_value=0)
        return Decimals.from_ints(ints, blank), np.zeros(len(series), dtype=bool)
    if kind == "number":
        floats, bad = read_amounts(series)
        values = floats.to_numpy(dtype=np.float64, copy=True)
        bad = bad | np.isinf(values)
        values[bad] = np.nan
        return Decimals.from_floats(values), bad
    read, bad = read_dates(series, zone)
    days = read.to_numpy(dtype="datetime64[D]")
    blank = np.isnat(days)
    numbers = np.where(blank, 0, (days - EPOCH_DAY).astype(np.int64))
    return Decimals.from_ints(numbers, blank), bad


def truth_reading(value: Operand) -> tuple[Truths, np.ndarray]:
    """The cells as truth values (True / False; blank as blank), and the cells that are not."""
    if isinstance(value, Truths):
        return value, np.zeros(len(value.blank), dtype=bool)
    if isinstance(value, Raw) and value.branches is not None:
        chosen, then, other, blank = value.branches
        (a, a_bad), (b, b_bad) = truth_reading(then), truth_reading(other)
        values = np.where(chosen, a.values, b.values)
        picked = Truths(values, blank | np.where(chosen, a.blank, b.blank))
        return picked, np.where(chosen, a_bad, b_bad) & ~blank
    series = value.series if isinstance(value, Raw) else as_column(value)
    blank = blank_mask(series)
    if isinstance(value, Raw) and pd.api.types.is_bool_dtype(series.dtype):
        values = series.fillna(False).to_numpy(dtype=bool)
        return Truths(values, blank), np.zeros(len(series), dtype=bool)
    if not isinstance(value, Raw) or series.dtype != object:
        return Truths(np.zeros(len(series), dtype=bool), blank), ~blank
    cells = series.tolist()
    truth = np.fromiter((isinstance(c, bool | np.bool_) for c in cells), bool, len(cells))
    values = np.fromiter((c is True or c is np.True_ for c in cells), bool, len(cells))
    return Truths(values, blank), ~blank & ~truth


def _blanked(column: Decimals, blank: np.ndarray) -> Decimals:
    """``column`` with the ``blank`` rows blank too."""
    if not blank.any():
        return column
    den = None if column.den is None else np.where(blank, 1, column.den)
    return Decimals(np.where(blank, 0, column.ints), column.scale, column.blank | blank, den)


def _per_cell(series: pd.Series, convert: Callable[[Any], Any]) -> np.ndarray:
    """``convert`` of each cell (object array), called once per distinct cell; in an object
    column True and 1 stay apart (they hash alike)."""
    if series.dtype != object:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        converted = np.array([convert(u) for u in uniques] + [convert(None)], dtype=object)
        return converted[codes]  # code -1 (blank) takes the last
    seen: dict[tuple[type, Any], Any] = {}
    out = np.empty(len(series), dtype=object)
    for i, cell in enumerate(series.tolist()):
        try:
            key = (cell.__class__, cell)
            out[i] = seen[key] if key in seen else seen.setdefault(key, convert(cell))
        except TypeError:  # unhashable (a list or mapping in a record)
            out[i] = convert(cell)
    return out


def _text_of(cell: Any) -> str:
    cell = json_cell(cell)
    if cell is None:
        return ""
    return "true" if cell is True else "false" if cell is False else str(cell)


def texts(value: Operand) -> np.ndarray:
    """The operand as text (object array): "" for blanks, true / false, numbers as JSON."""
    if isinstance(value, Texts):
        return np.where(value.blank, "", value.values).astype(object)
    if isinstance(value, Truths):
        words = np.where(value.values, "true", "false")
        return np.where(value.blank, "", words).astype(object)
    series = value.output() if isinstance(value, Decimals) else value.series
    return _per_cell(series, _text_of)


def text_keys(value: Operand) -> tuple[np.ndarray, np.ndarray]:
    """Text as ``=`` / ``!=`` compare it (NFKC, spaces collapsed, casefolded), and blanks."""
    series = _series(value) if isinstance(value, Raw | Texts) else as_column(value)
    blank = blank_mask(series)
    return _per_cell(series, lambda c: normalize_key(c, keep_spaces=True)), blank


def cell_at(value: Operand, row: int) -> Any:
    """Row ``row``'s cell as the records show it (for error messages)."""
    if isinstance(value, Raw):
        return json_cell(value.series.iloc[row])
    if isinstance(value, Texts):
        return None if value.blank[row] else value.values[row]
    return json_cell(as_column(value).iloc[row])


def either(chosen: np.ndarray, then: Operand, other: Operand, blank: np.ndarray) -> Operand:
    """``then`` where ``chosen``, else ``other``; blank where ``blank`` (no condition)."""
    if isinstance(then, Decimals) and isinstance(other, Decimals):
        return _blanked(choose(chosen, then, other), blank)
    if isinstance(then, Texts) and isinstance(other, Texts):
        values = np.where(chosen, then.values, other.values)
        return Texts(values, blank | np.where(chosen, then.blank, other.blank))
    if isinstance(then, Truths) and isinstance(other, Truths):
        values = np.where(chosen, then.values, other.values)
        return Truths(values, blank | np.where(chosen, then.blank, other.blank))
    a_column, b_column = as_column(then), as_column(other)
    mixed = a_column.astype(object) if a_column.dtype != b_column.dtype else a_column
    picked = mixed.where(chosen, b_column)
    series = picked.mask(blank) if blank.any() else picked
    return Raw(series, branches=(chosen, then, other, blank))
