"""One cell of a table: read as a date or an amount, written back as a JSON scalar.

:func:`parse_date` and :func:`parse_amount` read the ways Japanese documents write dates and
amounts (the forms live in :mod:`keiri_agent.documents.cell_forms`, shared with ``read_table``);
they return None for what they cannot read, and callers decide how that is reported (naming the
cell by its file position: ``Table.where``). :func:`json_cell` turns what pandas, openpyxl or a
computation gives into what a record holds (NaN/NA → None, Timestamps → ISO strings, numpy
scalars → Python numbers).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.documents.cell_forms import (
    DAY_FIRST,
    MONTH_FIRST,
    amount_problem,
    date_problem,
    day_order,
    local_time,
    read_amount,
    read_date,
    read_month,
)
from keiri_agent.documents.table_date_order import ColumnOrder, cells_order, order_reason
from keiri_agent.documents.table_value import json_cell

__all__ = [
    "ColumnOrder",
    "amount_problem",
    "cells_order",
    "column_date_problem",
    "date_problem",
    "json_cell",
    "order_reason",
    "parse_amount",
    "parse_date",
    "two_readings",
]


def parse_date(
    value: Any, zone: dt.tzinfo | None = None, order: ColumnOrder | None = None
) -> dt.date | None:
    """The date a cell holds (date objects, ISO, 2025/1/31, 2025年1月31日, 令和7年1月31日,
    20250131; a month such as 2025-01 or 2025年1月 is its first day). A time with a UTC offset
    is on its day in ``zone`` (the block's ``KEIRI_TIMEZONE``, ``BlockContext.zone``), as
    ``read_table`` reads it (``cell_forms.local_time``).

    A date with its year last (``13/02/2026``, ``02/13/2026``) is read in ``order``, the order
    of the column the cell is in (``cells_order``: the column's cells decide, as ``read_table``
    decides); a single value (``order`` None: a condition's value, a field found in a text) in
    the one order it can be read in (``05/05/2026`` is one day either way), and not at all where
    it reads as two days (``02/03/2026``: ``two_readings`` says both)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, pd.Timestamp) and pd.isna(value):
        return None
    if isinstance(value, pd.Period):
        return value.start_time.date()
    if isinstance(value, dt.datetime):  # pandas' Timestamp too
        return local_time(value, zone).date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    if order is None and day_order(value) is not None:  # a single value with its year last
        days = _year_last_days(value)
        day = days[0] if len(days) == 1 else None
    else:
        day = read_date(value, None if order is None else order.order)
    if isinstance(day, dt.datetime):
        return local_time(day, zone).date()
    if day is not None:
        return day
    month = read_month(value)
    return None if month is None else month.first_day()


def _year_last_days(value: str) -> list[dt.date]:
    """The days a date with its year last reads as, each once: month first, then day first
    (``05/05/2026``: one day; ``02/03/2026``: two; ``13/02/2026``: day first only)."""
    days: list[dt.date] = []
    for shown in (MONTH_FIRST, DAY_FIRST):
        day = read_date(value, shown)
        if day is not None and day not in days:
            days.append(day)
    return days


def column_date_problem(cell: Any, column: pd.Series) -> str:
    """Why ``cell`` of ``column`` is not a date, in Japanese: a date with its year last by the
    order the column shows (``order_reason``: none, or both with a cell of each)."""
    return order_reason(str(cell), cells_order(column.dropna()))


def two_readings(value: Any) -> str | None:
    """For a single value (not a cell of a column) that writes a date with its year last in
    both orders (``02/03/2026``): why it is not read, naming both readings (Japanese); else
    None."""
    if not isinstance(value, str) or day_order(value) != "":
        return None
    days = _year_last_days(value)
    if len(days) < 2:  # 05/05/2026: one day either way
        return None
    said = "とも ".join(
        f"{day:%Y年}{day.month}月{day.day}日（{form}）"
        for day, form in zip(days, ("月/日/年", "日/月/年"), strict=True)
    )
    spelled = " か ".join(f"{day:%Y-%m-%d}" for day in days)
    return f"年が最後に書かれた日付で、{said}とも読めます（{spelled} のように年から書いてください）"


def parse_amount(value: Any) -> float | None:
    """The amount a cell holds (numbers, "1,234", "¥1,234", "1,234円", "▲500", "(1,200)"),
    or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal | np.integer | np.floating):
        number = float(value)
        return None if math.isnan(number) else number
    if isinstance(value, str):
        parsed = read_amount(value)
        return None if parsed is None else float(parsed)
    return None
