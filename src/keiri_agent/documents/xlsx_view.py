"""Where a worksheet shows something other than what it holds, told after its table is read.

- Hidden rows and columns hold data all the same: a person hid them from view (a filter, a
  working column), not from the books, so they are read, and ``info`` names those that held
  values (:func:`note_hidden`): the totals the user checks on screen may differ from ours.
- A workbook saved in the 1904 date system (Excel for Mac's old default) counts its day
  numbers from 1904-01-01, 1,462 days after the 1900 system. Date cells come out of openpyxl
  right; a plain number in a date column (a serial under the General format, which the table
  reader reads as a date by the 1900 system) is moved by those days (:func:`shift_mac_serials`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from openpyxl.utils import column_index_from_string
from openpyxl.utils.datetime import CALENDAR_MAC_1904, CALENDAR_WINDOWS_1900
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.documents.table_frame import TableResult

__all__ = [
    "MAC_EPOCH_DAYS",
    "Hidden",
    "hidden_rows_and_columns",
    "note_hidden",
    "shift_mac_serials",
]

# Day 0 of the 1904 date system, counted in days of the 1900 system's day 0.
MAC_EPOCH_DAYS = (CALENDAR_MAC_1904 - CALENDAR_WINDOWS_1900).days
# Rows named in a note (the count is always exact).
MAX_NAMED_ROWS = 5


@dataclass(frozen=True)
class Hidden:
    """A sheet's hidden rows (1-based) and hidden column ranges (1-based, inclusive)."""

    rows: frozenset[int]
    columns: tuple[tuple[int, int], ...]

    def column(self, index: int) -> bool:
        return any(low <= index <= high for low, high in self.columns)


def hidden_rows_and_columns(ws: Worksheet) -> Hidden:
    rows = frozenset(r for r, dim in ws.row_dimensions.items() if dim.hidden)
    columns = tuple(
        (dim.min, dim.max)
        for dim in ws.column_dimensions.values()
        if dim.hidden and dim.min is not None and dim.max is not None
    )
    return Hidden(rows, columns)


def note_hidden(result: TableResult, hidden: Hidden) -> None:
    """Name in ``result.info`` the hidden rows and columns that were read as data."""
    info = result.info
    if hidden.rows and result.positions is not None:
        rows = [int(p) for p in result.positions if int(p) in hidden.rows]
        if rows:
            named = "、".join(f"{r} 行目" for r in rows[:MAX_NAMED_ROWS])
            more = f" ほか、計 {len(rows):,} 行" if len(rows) > MAX_NAMED_ROWS else ""
            info.warnings.append(
                f"シート '{info.sheet}' の非表示の行（{named}{more}）もデータとして読みました"
                "（Excel で非表示にしても行は残っています。除くには行を削除してください）。"
            )
    columns = [
        f"「{name}」（{letter} 列）"
        for name, letter in info.column_letters.items()
        if hidden.column(column_index_from_string(letter))
    ]
    if columns:
        info.warnings.append(
            f"シート '{info.sheet}' の非表示の列 {'、'.join(columns)} もデータとして読みました。"
        )


def shift_mac_serials(result: TableResult, numbers: set[tuple[int, int]]) -> None:
    """Move the dates read from plain numbers (``numbers``: their 1-based (row, column)) of a
    1904-date-system workbook by ``MAC_EPOCH_DAYS``, with a note per column."""
    if result.positions is None:
        return
    rows = np.asarray(result.positions, dtype=np.int64)
    for name, kind in result.info.converted.items():
        if kind not in ("date", "datetime"):
            continue
        col = column_index_from_string(result.info.column_letters[name])
        moved = np.fromiter(((int(r), col) in numbers for r in rows), dtype=bool, count=len(rows))
        if not moved.any():
            continue
        series = result.df[name]
        result.df[name] = series.where(~moved, series + pd.Timedelta(days=MAC_EPOCH_DAYS))
        result.info.warnings.append(
            f"列「{name}」: ブックが 1904 年日付システム（Mac の Excel）のため、数値で書かれた"
            f"日付 {int(moved.sum()):,} 個をその日付の数え方で読みました。"
        )
