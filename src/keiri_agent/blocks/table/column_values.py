"""A table's column read as blanks, amounts or dates, for a million rows at once.

The table blocks read columns, not rows: a column a file reader already typed (numbers, dates)
is used as it is; a column of text (records made by other blocks, cells the reader kept as
written) is read with the forms of :mod:`keiri_agent.documents.cell_forms` -- plain numbers and
ISO dates in one vectorized pass, any other form once per distinct text. :func:`read_amounts`
and :func:`read_dates` give every cell and the mask of those that cannot be read;
:func:`amounts` and :func:`dates` the first of them, so the block names it where the user finds
it (``Table.where``).

:func:`exact_sums` adds amounts per group exactly, as decimals (``0.1 + 0.2 = 0.3``): amounts
with at most ``MAX_SCALE`` decimals (:func:`exact_scale`) are added as scaled integers, others
as ``Decimal``."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.cells import ColumnOrder, cells_order, parse_amount, parse_date
from keiri_agent.documents.cell_forms import PLAIN_NUMBER, local_zone
from keiri_agent.documents.table_types import dollar_cells

__all__ = [
    "MAX_SCALE",
    "amounts",
    "blank_mask",
    "dates",
    "exact_amounts",
    "exact_scale",
    "exact_sums",
    "ordinal_days",
    "read_amounts",
    "read_dates",
    "without_blanks",
]

# Decimals up to which amounts are summed as scaled int64 (1e-9 of a yen is below any ledger).
MAX_SCALE = 9
# Scaled values below this are exact in a float, with room for the rounding of v * 10**s.
_EXACT_SCALED = 2**51
_INT64_LIMIT = 2**63
# Spaces are ASCII (not \s): with \s pandas matches with Python's re cell by cell instead of
# Arrow's RE2 (13x slower). Plain numbers: cell_forms.PLAIN_NUMBER.
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
    numbers, bad = _read_amounts(column, stop=True)
    return numbers, _first(bad)


def read_amounts(column: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """Every cell as an amount and the mask of the cells that are not (see
    :func:`_read_amounts`)."""
    return _read_amounts(column, stop=False)


def _read_amounts(column: pd.Series, *, stop: bool) -> tuple[pd.Series, np.ndarray]:
    """``(numbers, unreadable)``: every cell as a float amount (NaN for blanks and for cells
    that are not amounts) and the mask of the non-blank cells that are not amounts. Plain
    numbers are read in one vectorized pass, other forms (``¥1,234``, ``(1,200)``) once per
    distinct text; a truth value, a date or a month is never an amount, nor a ``$`` amount
    among yen (``table_types.dollar_cells``, as ``file.read_table`` lists it)."""
    size = len(column)
    bad = np.zeros(size, dtype=bool)
    out = np.full(size, np.nan)
    if pd.api.types.is_bool_dtype(column.dtype) or _is_temporal(column):
        bad[:] = ~blank_mask(column)
        return pd.Series(out, index=column.index), bad
    if pd.api.types.is_numeric_dtype(column.dtype):
        return column.astype("float64"), bad
    filled = np.flatnonzero(~blank_mask(column))
    if filled.size == 0:
        return pd.Series(out, index=column.index), bad
    cells = column.iloc[filled]
    truth = _truth_values(cells)
    text = cells.astype("string")
    plain = text.str.fullmatch(PLAIN_NUMBER).fillna(False).to_numpy(dtype=bool) & ~truth
    out[filled[plain]] = pd.to_numeric(text[plain].str.replace(",", "", regex=False))
    rest = ~(plain | truth)
    read = _per_distinct(cells.iloc[np.flatnonzero(rest)], parse_amount, stop=stop)
    out[filled[rest]] = read
    bad[filled[truth]] = True
    bad[filled[rest][np.isnan(read)]] = True
    dollars = filled[dollar_cells(text, out[filled])]  # $ among yen: never added
    out[dollars], bad[dollars] = np.nan, True
    return pd.Series(out, index=column.index), bad


def dates(column: pd.Series, zone: dt.tzinfo | None = None) -> tuple[pd.Series, int | None]:
    """``(days, first_bad)``: the column as datetime64 days (NaT for blanks) and the row of the
    first non-blank cell that is not a date (None when every cell is one)."""
    days, bad = _read_dates(column, zone, stop=True)
    return days, _first(bad)


def read_dates(column: pd.Series, zone: dt.tzinfo | None = None) -> tuple[pd.Series, np.ndarray]:
    """Every cell as a day and the mask of the cells that are not dates (see
    :func:`_read_dates`)."""
    return _read_dates(column, zone, stop=False)


def _read_dates(
    column: pd.Series, zone: dt.tzinfo | None, *, stop: bool
) -> tuple[pd.Series, np.ndarray]:
    """``(days, unreadable)``: every cell as a datetime64 day (NaT for blanks and for cells
    that are not dates; any year a date can have, 9999-12-31 included) and the mask of the
    non-blank cells that are not dates. ISO days are read in one pass, other forms
    (``2025/1/31``, ``令和7年1月31日``) once per distinct text; a number is never a date. A time
    with a UTC offset is on its day in ``zone`` (the block's ``KEIRI_TIMEZONE``; None: the
    default zone, ``cell_forms.local_zone``)."""
    size = len(column)
    bad = np.zeros(size, dtype=bool)
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        if column.dt.tz is not None:  # on its day in the local zone, as read_table reads it
            column = column.dt.tz_convert(local_zone(zone)).dt.tz_localize(None)
        return column.dt.normalize(), bad
    if isinstance(column.dtype, pd.PeriodDtype):
        return column.dt.start_time, bad
    out = np.full(size, np.datetime64("NaT"), dtype="datetime64[s]")
    if pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_numeric_dtype(column.dtype):
        bad[:] = ~blank_mask(column)
        return pd.Series(out, index=column.index), bad
    filled = np.flatnonzero(~blank_mask(column))
    if filled.size:
        cells = column.iloc[filled]
        truth = _truth_values(cells)
        text = cells.astype("string")
        iso = text.str.fullmatch(_ISO_DAY).fillna(False).to_numpy(dtype=bool) & ~truth
        parsed = pd.to_datetime(text[iso].str.strip(), format="%Y-%m-%d", errors="coerce")
        out[filled[iso]] = parsed.to_numpy(dtype="datetime64[s]")  # NaT: 2025-02-30
        rest = ~(iso | truth)
        others = cells.iloc[np.flatnonzero(rest)]
        read = partial(_day, zone=zone, order=cells_order(others))  # 13/02/2026: the column's
        out[filled[rest]] = _per_distinct(others, read, "datetime64[s]", stop=stop)
        bad[filled[~truth]] = np.isnat(out[filled[~truth]])
        bad[filled[truth]] = True
    return pd.Series(out, index=column.index), bad


def _is_temporal(column: pd.Series) -> bool:
    return pd.api.types.is_datetime64_any_dtype(column.dtype) or isinstance(
        column.dtype, pd.PeriodDtype
    )


def _truth_values(cells: pd.Series) -> np.ndarray:
    """Which cells are True / False (in an object column): never amounts nor dates."""
    if cells.dtype != object:
        return np.zeros(len(cells), dtype=bool)
    return np.fromiter(
        (isinstance(v, bool | np.bool_) for v in cells.tolist()), dtype=bool, count=len(cells)
    )


def _day(cell: Any, zone: dt.tzinfo | None, order: ColumnOrder) -> np.datetime64:
    day = parse_date(cell, zone, order)
    return np.datetime64("NaT") if day is None else np.datetime64(day, "D")


def _per_distinct(
    cells: pd.Series, read: Any, dtype: str = "float64", *, stop: bool = False
) -> np.ndarray:
    """``read`` of each cell (None → NaN), called once per distinct cell. With ``stop`` the
    cells are read in order and the first that cannot be read ends it (the rest are NaN: the
    caller reports that one cell and nothing else)."""
    if stop:
        out = np.full(len(cells), np.nan if dtype == "float64" else np.datetime64("NaT"), dtype)
        seen: dict[Any, Any] = {}
        for index, cell in enumerate(cells.tolist()):
            try:
                value = seen[cell] if cell in seen else seen.setdefault(cell, _missing(read(cell)))
            except TypeError:  # unhashable (a list or a mapping in a record)
                value = _missing(read(cell))
            out[index] = value
            if value is np.nan or (dtype != "float64" and np.isnat(value)):
                break
        return out
    try:
        codes, uniques = pd.factorize(cells, use_na_sentinel=True)
    except TypeError:  # unhashable cells (a list or a mapping in a record): one by one
        return np.array([_missing(read(cell)) for cell in cells.tolist()], dtype=dtype)
    values = np.array([_missing(read(cell)) for cell in uniques], dtype=dtype)
    return values[codes]


def _missing(value: Any) -> Any:
    return np.nan if value is None else value


def _first(bad: np.ndarray) -> int | None:
    found = np.flatnonzero(bad)
    return int(found[0]) if found.size else None


def exact_scale(values: np.ndarray, limit: int = MAX_SCALE) -> int | None:
    """The fewest decimals (at most ``limit``) in which every finite float of ``values`` is
    exactly the decimal it reads as (``0.1`` has 1, ``1234567.25`` has 2), or None when one
    needs more or the column is too large for its scaled values to be exact integers."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return 0
    peak = float(np.max(np.abs(finite)))
    pending = finite
    for scale in range(limit + 1):
        power = 10.0**scale
        if peak * power >= _EXACT_SCALED:
            return None
        # The decimal round(v * 10**s) / 10**s is the one v reads as when it converts back to
        # v exactly (both conversions are correctly rounded below 2**51).
        pending = pending[np.round(pending * power) / power != pending]
        if pending.size == 0:
            return scale
    return None


def exact_amounts(values: np.ndarray) -> tuple[np.ndarray, int | None]:
    """``(exact, scale)``: finite float amounts as exact numbers to compare and subtract: int64
    in units of ``10**-scale`` (:func:`exact_scale`), or, when no scale fits, Decimal objects
    (each the decimal its float reads as; ``scale`` None), made once per distinct amount."""
    scale = exact_scale(values)
    if scale is not None:
        return np.round(values * 10.0**scale).astype(np.int64), scale
    codes, distinct = pd.factorize(values)
    decimals = np.array([Decimal(repr(v)) for v in distinct.tolist()] + [None], dtype=object)
    return decimals[codes], None


def exact_sums(values: pd.Series, codes: np.ndarray, groups: int) -> list[Decimal]:
    """Per-group sums (``codes``: 0..groups-1 for each row, -1 for none) of float amounts
    (NaN for blanks), exactly as decimals."""
    array = values.to_numpy(dtype="float64")
    scale = exact_scale(array)
    keep = codes >= 0
    if scale is not None:
        ints = np.where(np.isnan(array), 0, np.round(array * 10**scale)).astype(np.int64)
        peak = int(np.max(np.abs(ints))) if ints.size else 0
        if peak * max(int(np.count_nonzero(keep)), 1) < _INT64_LIMIT:  # no sum can overflow
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
