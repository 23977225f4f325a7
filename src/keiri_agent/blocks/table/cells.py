"""One cell of a table: read as a date or an amount, written back as a JSON scalar.

:func:`parse_date` and :func:`parse_amount` read the ways Japanese documents write dates and
amounts; they return None for what they cannot read, and callers decide how that is reported.
:func:`json_cell` turns what pandas, openpyxl or a computation gives into what a record holds
(NaN → None, Timestamps → ISO strings, numpy scalars → Python numbers).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.documents.table_infer import parse_number

__all__ = ["json_cell", "parse_amount", "parse_date"]

# 2025-01-31, 2025/1/31, 2025.1.31, 2025年1月31日, optionally followed by a time.
_YMD = re.compile(
    r"(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*日?"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
)
# 令和7年1月31日 / R7.1.31 / 平成31年4月30日 (era + year, month, day).
_ERA = re.compile(
    r"(?P<era>令和|平成|昭和|R|H|S)\s*(?P<y>\d{1,2}|元)\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]"
    r"\s*(?P<d>\d{1,2})\s*日?"
)
_ERA_START = {"令和": 2018, "R": 2018, "平成": 1988, "H": 1988, "昭和": 1925, "S": 1925}


def json_cell(value: Any) -> Any:
    """One cell as a JSON scalar: NaN/NaT → None, dates → ISO, numpy → Python, Decimal → number."""
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0) and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, str | int | bool):
        return value
    return str(value)


def parse_date(value: Any) -> dt.date | None:
    """The date a cell holds (date objects, ISO, 2025/1/31, 2025年1月31日, 令和7年1月31日)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, pd.Timestamp):
        return None if pd.isna(value) else value.date()
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).strip()
    if match := _YMD.fullmatch(text):
        year = int(match["y"])
    elif match := _ERA.fullmatch(text):
        offset = 1 if match["y"] == "元" else int(match["y"])
        year = _ERA_START[match["era"]] + offset
    else:
        return None
    try:
        return dt.date(year, int(match["m"]), int(match["d"]))
    except ValueError:
        return None


def parse_amount(value: Any) -> float | None:
    """The amount a cell holds (numbers, "1,234", "¥1,234", "1,234円", "▲500"), or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal | np.integer | np.floating):
        number = float(value)
        return None if math.isnan(number) else number
    if isinstance(value, str):
        parsed = parse_number(value)
        return None if parsed is None else float(parsed)
    return None
