"""A table's column read as blanks, amounts or dates, for a million rows at once.

The table blocks read columns, not rows: a column a file reader already typed (numbers, dates)
is used as it is; a column of text (records made by other blocks, cells the reader kept as
written) is read with the forms of :mod:`keiri_agent.documents.cell_forms` -- plain numbers and
ISO dates in one vectorized pass, anything else cell by cell -- and the first cell that cannot be
read is returned by its row, so the block names it where the user finds it (``Table.where``).

:func:`exact_sums` adds amounts per group exactly, as decimals (``0.1 + 0.2 = 0.3``): amounts
with at most ``MAX_SCALE`` decimals are added as scaled integers, others as ``Decimal``.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.cells import parse_amount, parse_date
from keiri_agent.documents.cell_forms import PLAIN_NUMBER

__all__ = [
    "MAX_SCALE",
    "amounts",
    "blank_mask",
    "dates",
    "exact_sums",
    "ordinal_days",
    "read_amounts",
    "read_dates",
    "without_blanks",
]

# Decimals up to which amounts are summed as scaled int64 (1e-9 of a yen is below any ledger).
MAX_SCALE = 9
_EXACT_INT = 2**53  # beyond this a float no longer holds every integer
# Forms read in one vectorized pass; any other cell is read by itself. Spaces are ASCII (not
# \s): with \s pandas matches with Python's re cell by cell instead of Arrow's RE2 (13x slower).
_ISO_DAY = r" *[0-9]{4}-[0-9]{2}-[0-9]{2} *"


def blank_mask(column: pd.Series) -> np.ndarray:
    """Cells that are blank: null, NaN/NaT/NA, or only whitespace."""
    blank = column.isna().to_numpy(dtype=bool)
    if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
        text = column.astype("string")
        return blank | text.str.strip().eq("").fillna(True).to_numpy(dtype=bool)
    return blank


def without_blanks(column: pd.Series) -> pd.Series:
    """The column with blank cells as NA (so pandas skips them)."""
    mask = blank_mask(column)
    return column.where(~mask) if mask.any() else column


def amounts(column: pd.Series) -> tuple[pd.Series, int | None]:
    """``(numbers, first_bad)``: the column as float amounts (NaN for blanks) and the row of
    the first non-blank cell that is not an amount (None when every cell is one)."""
    numbers, bad = _amounts(column, stop=True)
    return numbers, _first(bad)


def read_amounts(column: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """``(numbers, unreadable)``: every cell read as an amount (NaN for blanks and for cells
    that are not amounts) and the mask of the non-blank cells that are not amounts."""
    return _amounts(column, stop=False)


def _amounts(column: pd.Series, *, stop: bool) -> tuple[pd.Series, np.ndarray]:
    """The amounts of ``column`` and its unreadable cells (with ``stop``: only the first)."""
    bad = np.zeros(len(column), dtype=bool)
    if pd.api.types.is_bool_dtype(column.dtype):
        bad[:] = ~blank_mask(column)
        return pd.Series(np.nan, index=column.index), bad
    if pd.api.types.is_numeric_dtype(column.dtype):
        return column.astype("float64"), bad
    out = pd.Series(np.nan, index=column.index, dtype="float64")
    if _is_temporal(column):  # dates and months are never amounts
        bad[:] = ~blank_mask(column)
        return out, bad
    blank = blank_mask(column)
    filled = ~blank
    if not filled.any():
        return out, bad
    values = column[filled]
    if column.dtype == object:
        numeric = values.map(lambda v: isinstance(v, int | float) and not isinstance(v, bool))
    else:  # a text column holds no numbers
        numeric = pd.Series(False, index=values.index)
    if numeric.all():
        out[filled] = values.astype("float64")
        return out, bad
    text = values.astype("string")
    plain = text.str.fullmatch(PLAIN_NUMBER).fillna(False) & ~numeric
    out[values.index[numeric.to_numpy()]] = values[numeric].astype("float64")
    out[values.index[plain.to_numpy()]] = pd.to_numeric(
        text[plain].str.replace(",", "", regex=False)
    )
    rest = ~(plain | numeric).to_numpy()
    places = np.flatnonzero(filled)[rest]  # positions of the cells read one by one
    read: list[float] = []
    for count, value in enumerate(values[rest].tolist()):
        parsed = parse_amount(value)
        if parsed is None:
            bad[places[count]] = True
            if stop:
                places = places[:count]
                break
            parsed = np.nan
        read.append(parsed)
    numbers = out.to_numpy(copy=True)
    numbers[places] = read
    return pd.Series(numbers, index=column.index), bad


def dates(column: pd.Series) -> tuple[pd.Series, int | None]:
    """``(days, first_bad)``: the column as datetime64 days (NaT for blanks) and the row of the
    first non-blank cell that is not a date (None when every cell is one)."""
    days, bad = _dates(column, stop=True)
    return days, _first(bad)


def read_dates(column: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """``(days, unreadable)``: every cell read as a date (NaT for blanks and for cells that
    are not dates) and the mask of the non-blank cells that are not dates."""
    return _dates(column, stop=False)


def _dates(column: pd.Series, *, stop: bool) -> tuple[pd.Series, np.ndarray]:
    """The days of ``column`` and its unreadable cells (with ``stop``: only the first)."""
    bad = np.zeros(len(column), dtype=bool)
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        days = column.dt.tz_localize(None) if column.dt.tz is not None else column
        return days.dt.normalize(), bad
    if isinstance(column.dtype, pd.PeriodDtype):
        return column.dt.start_time, bad
    out = pd.Series(pd.NaT, index=column.index, dtype="datetime64[ns]")
    if pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_numeric_dtype(column.dtype):
        bad[:] = ~blank_mask(column)  # a number is never a date (serials are the reader's)
        return out, bad
    blank = blank_mask(column)
    filled = ~blank
    if not filled.any():
        return out, bad
    values = column[filled]
    text = values.astype("string")
    iso = text.str.fullmatch(_ISO_DAY).fillna(False)
    if iso.any():
        out[values.index[iso.to_numpy()]] = pd.to_datetime(
            text[iso].str.strip(), format="%Y-%m-%d", errors="coerce"
        )
    rest = ~iso.to_numpy()
    places = np.flatnonzero(filled)[rest]  # positions of the cells read one by one
    read: list[Any] = []
    for count, value in enumerate(values[rest].tolist()):
        day = parse_date(value)
        if day is None:
            bad[places[count]] = True
            if stop:
                places = places[:count]
                break
        read.append(np.datetime64("NaT", "ns") if day is None else np.datetime64(day, "ns"))
    if read:
        days = out.to_numpy(dtype="datetime64[ns]", copy=True)
        days[places] = read
        out = pd.Series(days, index=column.index)
    invalid = iso & out[values.index].isna()  # 2025-02-30: ISO-shaped, no such day
    if invalid.any():
        bad[column.index.get_indexer(values.index[invalid.to_numpy()])] = True
    return out, bad


def _is_temporal(column: pd.Series) -> bool:
    return pd.api.types.is_datetime64_any_dtype(column.dtype) or isinstance(
        column.dtype, pd.PeriodDtype
    )


def _first(bad: np.ndarray) -> int | None:
    found = np.flatnonzero(bad)
    return int(found[0]) if found.size else None


def _scale(values: np.ndarray) -> int | None:
    """The fewest decimals (<= MAX_SCALE) that make every value an integer, or None."""
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return 0
    peak = float(np.max(np.abs(finite)))
    for scale in range(MAX_SCALE + 1):
        scaled = finite * 10**scale
        if peak * 10**scale >= _EXACT_INT:
            return None
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return scale
    return None


def exact_sums(values: pd.Series, codes: np.ndarray, groups: int) -> list[Decimal]:
    """Per-group sums (``codes``: 0..groups-1 for each row, -1 for none) of float amounts
    (NaN for blanks), exactly as decimals."""
    array = values.to_numpy(dtype="float64")
    scale = _scale(array)
    if scale is not None:
        ints = np.where(np.isnan(array), 0, np.round(array * 10**scale)).astype(np.int64)
        keep = codes >= 0
        totals = pd.Series(ints[keep]).groupby(codes[keep]).sum()
        divisor = Decimal(10) ** scale
        return [Decimal(int(totals.get(g, 0))) / divisor for g in range(groups)]
    sums = [Decimal(0)] * groups
    for code, value in zip(codes.tolist(), array.tolist(), strict=True):
        if code >= 0 and value == value:
            sums[code] += Decimal(repr(value))
    return sums


def ordinal_days(days: pd.Series) -> np.ndarray:
    """datetime64 days as proleptic ordinals (float, NaN for NaT), as ``date.toordinal``."""
    epoch = dt.date(1970, 1, 1).toordinal()
    values = days.to_numpy(dtype="datetime64[D]").astype("int64").astype("float64")
    values[days.isna().to_numpy()] = np.nan
    return values + epoch


def day_of(ordinal: float) -> dt.date:
    return dt.date.fromordinal(int(ordinal))


def as_python(value: Any) -> Any:
    """A numpy scalar as Python (for records)."""
    return value.item() if isinstance(value, np.generic) else value
