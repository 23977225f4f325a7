"""Values in words for the screen: the one place the app turns a Python value into what a person
reads (tables and the error details).

Streamlit draws a value as Python writes it: a missing cell as ``None`` (``nan``, ``<NA>``), a
truth value as ``True``, a date read from a ledger as ``2024-04-01 00:00:00``, a list as
``['a', 'b']``. :func:`shown_value` says each in the app's words: a missing value is a blank, a
truth value はい / いいえ, a date its day (a time to the minute, an aware time where the person
lives, with its zone: ``localtime.shown_time``), a list its items joined by 、, a path its
file's name. :func:`shown_table` draws a table's every cell that way while the numbers stay
numbers (they sort and align as numbers; only what is drawn changes). :func:`shown_sample` says
in one cell a value a plan hands between its steps (a dry run's sample): a table by its rows, a
record whose keys are the program's by its size, never written out as JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time
from enum import Enum
from pathlib import PurePath
from typing import Any, Final
from zoneinfo import ZoneInfo

import pandas as pd
from pandas.io.formats.style import Styler

from keiri_agent.config import DEFAULT_TIMEZONE
from keiri_agent.localtime import shown_time

__all__ = ["NO", "YES", "shown_sample", "shown_styler", "shown_table", "shown_value"]

YES: Final = "はい"
NO: Final = "いいえ"
LIST_SEPARATOR: Final = "、"
_DEFAULT_ZONE: Final = ZoneInfo(DEFAULT_TIMEZONE)  # a page without its settings at hand


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _number(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value.is_integer():
        return str(int(value))
    return f"{value:.10f}".rstrip("0").rstrip(".")


def _moment(value: datetime, zone: ZoneInfo) -> str:
    if value.tzinfo is not None:
        return shown_time(value, zone, seconds=bool(value.second))
    if value.time() == time():
        return value.date().isoformat()
    return value.strftime("%Y-%m-%d %H:%M:%S" if value.second else "%Y-%m-%d %H:%M")


def shown_value(value: Any, zone: ZoneInfo = _DEFAULT_ZONE) -> str:
    """``value`` as the screen says it (see the module docstring); an aware time is shown in
    ``zone`` (the page's ``KEIRI_TIMEZONE``)."""
    if _missing(value):
        return ""
    if isinstance(value, bool):
        return YES if value else NO
    if isinstance(value, Enum):
        return shown_value(value.value, zone)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, datetime):  # pd.Timestamp too
        return _moment(value.to_pydatetime() if isinstance(value, pd.Timestamp) else value, zone)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, time):
        return value.strftime("%H:%M:%S" if value.second else "%H:%M")
    if isinstance(value, PurePath):
        return value.name
    if isinstance(value, Mapping):
        return LIST_SEPARATOR.join(f"{k}: {shown_value(v, zone)}" for k, v in value.items())
    if isinstance(value, Sequence | set | frozenset) and not isinstance(value, str | bytes):
        return LIST_SEPARATOR.join(shown_value(item, zone) for item in value)
    if hasattr(value, "tolist"):  # a NumPy scalar or array
        return shown_value(value.tolist(), zone)
    return str(value)


def shown_sample(value: Any, zone: ZoneInfo = _DEFAULT_ZONE) -> str:
    """A value a plan hands between its steps, in one cell: a list of records as a table of so
    many rows, a record (its keys are a block's names, not the person's) by its size, a list
    holding such values by its length, anything else as :func:`shown_value` says it."""
    if isinstance(value, Mapping):
        return f"{len(value)} 項目のまとまり" if value else "空のまとまり"
    if isinstance(value, list | tuple) and value:
        if all(isinstance(item, Mapping) for item in value):
            return f"{len(value)} 行の表"
        if any(isinstance(item, Mapping | list | tuple) for item in value):
            return f"{len(value)} 件の一覧"
    return shown_value(value, zone)


def shown_table(
    data: pd.DataFrame | Sequence[Mapping[str, Any]], zone: ZoneInfo = _DEFAULT_ZONE
) -> Styler | pd.DataFrame:
    """``data`` as ``st.dataframe`` should draw it: each cell in words (:func:`shown_value`),
    the numbers kept as numbers. A table whose column names repeat cannot be styled: its cells
    are then the words themselves."""
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    if not (frame.columns.is_unique and frame.index.is_unique):
        return frame.map(lambda v: shown_value(v, zone))
    return shown_styler(frame, zone)


def shown_styler(frame: pd.DataFrame, zone: ZoneInfo = _DEFAULT_ZONE) -> Styler:
    """A styled ``frame`` (its columns and rows unique) whose every cell is drawn in words; a
    caller formats some columns its own way after (amounts)."""
    return frame.style.format(lambda v: shown_value(v, zone))
