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
    amount_problem,
    date_problem,
    local_time,
    read_amount,
    read_date,
    read_month,
)
from keiri_agent.documents.table_value import json_cell

__all__ = ["amount_problem", "date_problem", "json_cell", "parse_amount", "parse_date"]


def parse_date(value: Any, zone: dt.tzinfo | None = None) -> dt.date | None:
    """The date a cell holds (date objects, ISO, 2025/1/31, 2025年1月31日, 令和7年1月31日,
    20250131; a month such as 2025-01 or 2025年1月 is its first day). A time with a UTC offset
    is on its day in ``zone`` (the block's ``KEIRI_TIMEZONE``, ``BlockContext.zone``), as
    ``read_table`` reads it (``cell_forms.local_time``)."""
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
    day = read_date(value)
    if isinstance(day, dt.datetime):
        return local_time(day, zone).date()
    if day is not None:
        return day
    month = read_month(value)
    return None if month is None else month.first_day()


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
