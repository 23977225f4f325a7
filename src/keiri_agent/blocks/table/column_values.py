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

__all__ = ["MAX_SCALE", "amounts", "blank_mask", "dates", "exact_sums", "without_blanks"]

# Decimals up to which amounts are summed as scaled int64 (1e-9 of a yen is below any ledger).
MAX_SCALE = 9
_EXACT_INT = 2**53  # beyond this a float no longer holds every integer
_PLAIN_NUMBER = r"\s*[+\-]?(?:0|[1-9][0-9]{0,2}(?:,[0-9]{3})+|[1-9][0-9]*)(?:\.[0-9]+)?\s*"
_ISO_DAY = r"\s*[0-9]{4}-[0-9]{2}-[0-9]{2}\s*"


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
    if pd.api.types.is_bool_dtype(column.dtype):
        return pd.Series(np.nan, index=column.index), 0 if len(column) else None
    if pd.api.types.is_numeric_dtype(column.dtype):
        return column.astype("float64"), None
    blank = blank_mask(column)
    out = pd.Series(np.nan, index=column.index, dtype="float64")
    filled = ~blank
    if not filled.any():
        return out, None
    values = column[filled]
    numeric = values.map(lambda v: isinstance(v, int | float) and not isinstance(v, bool))
    if numeric.all():
        out[filled] = values.astype("float64")
        return out, None
    text = values.astype("string")
    plain = text.str.fullmatch(_PLAIN_NUMBER).fillna(False) & ~numeric
    out[values.index[numeric.to_numpy()]] = values[numeric].astype("float64")
    out[values.index[plain.to_numpy()]] = pd.to_numeric(
        text[plain].str.replace(",", "", regex=False)
    )
    rest = values[~(plain | numeric)]
    for label, value in rest.items():
        parsed = parse_amount(value)
        if parsed is None:
            return out, int(column.index.get_indexer(pd.Index([label]))[0])
        out[label] = parsed
    return out, None


def dates(column: pd.Series) -> tuple[pd.Series, int | None]:
    """``(days, first_bad)``: the column as datetime64 days (NaT for blanks) and the row of the
    first non-blank cell that is not a date (None when every cell is one)."""
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        days = column.dt.tz_localize(None) if column.dt.tz is not None else column
        return days.dt.normalize(), None
    if isinstance(column.dtype, pd.PeriodDtype):
        return column.dt.start_time, None
    blank = blank_mask(column)
    out = pd.Series(pd.NaT, index=column.index, dtype="datetime64[ns]")
    filled = ~blank
    if not filled.any():
        return out, None
    values = column[filled]
    text = values.astype("string")
    iso = text.str.fullmatch(_ISO_DAY).fillna(False)
    if iso.any():
        out[values.index[iso.to_numpy()]] = pd.to_datetime(
            text[iso].str.strip(), format="%Y-%m-%d", errors="coerce"
        )
    for label, value in values[~iso].items():
        day = parse_date(value)
        if day is None:
            return out, int(column.index.get_indexer(pd.Index([label]))[0])
        out[label] = pd.Timestamp(day)
    bad = iso & out[values.index].isna()  # 2025-02-30: ISO-shaped, no such day
    if bad.any():
        label = values.index[bad.to_numpy()][0]
        return out, int(column.index.get_indexer(pd.Index([label]))[0])
    return out, None


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
