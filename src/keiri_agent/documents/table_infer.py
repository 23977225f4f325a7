"""Inference shared by the CSV and Excel table readers: header row, column names, size limits.

Japanese spreadsheets put a title ("2024年度 売上明細"), a few "key, value" lines (会社名,
期間) and blank rows above the real header, write amounts as "1,234", "¥1,234", "▲500" or in
full-width digits, and leave header cells blank or repeated. The rules here are deliberately
simple and deterministic, so a user can predict them from ``TableReadInfo``:

* header row: the first row (of the first ``HEADER_SCAN_ROWS``) that is at least half as wide
  as the widest row, at least ~80 % as wide as the rows below it, and holds at least one text
  label or is a row of numbered headings (``(1)``, ``(2)``, ``(3)`` … or ``①``, ``②``, ``③`` …
  written as text in sequence; alone, ``(1)`` is an amount and ``①`` a numbering mark, neither
  a label), and does not name a period (``期間 | 2026/2/1 | ～ | 2026/2/28``, ``自 … 至 …``:
  ``cell_period``; a title line, however many cells it fills). If that first wide row
  holds neither (all numbers or dates), the table has no header and data starts there: an
  Excel row of the numbers -1, -2, -3 shown as ``(1)``, ``(2)``, ``(3)`` by an accounting
  format is such a row (cells are read by value, never by how a format displays them);
* column names: blank → "列<n>" (n = 1-based column position in the file), repeated →
  "<name>_2", "<name>_3", ...; whitespace runs (including line breaks) become one space;
* a header of two rows whose upper row names groups over blank cells (``日付 | 借方 | | 貸方 |
  | 摘要`` over `` | 科目 | 金額 | 科目 | 金額 |``), as Excel saves a merged header to CSV or a
  book is written without merging (``grouped_header``), is read as the merges it stands for:
  ``借方_科目``, ``借方_金額``, ``日付``;
* a text label is a cell that is neither an amount (``cell_forms.read_amount``: "1,234",
  "(1,200)", "1,200-", "▲500"...), nor a lone numbering mark (``①``, ``⑴``:
  ``cell_forms.numeral_marks``), nor an ISO date ("2024-04-01"). Column types are decided
  by ``table_types`` with the same forms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict
from datetime import date, datetime
from statistics import median
from typing import Any

from openpyxl.utils import get_column_letter

from keiri_agent.documents.cell_forms import (
    ISO_DATE,
    heading_number,
    numeral_marks,
    read_amount,
    read_date,
)
from keiri_agent.documents.cell_period import period_in
from keiri_agent.documents.failures import too_large
from keiri_agent.documents.limits import TableLimits

__all__ = [
    "HEADER_SCAN_ROWS",
    "Merge",
    "TableLimits",
    "check_table_size",
    "detect_header",
    "expand_merges",
    "grouped_header",
    "is_blank",
    "joined_name",
    "make_column_names",
    "spanned_note",
]

HEADER_SCAN_ROWS = 30
# The share of a column's cells below a row that are dates for a date in that row to make it a
# row of data, not a header (a stray text cell, 繰越, may stand among the dates).
DATE_COLUMN_SHARE = 0.8
_SPACES = re.compile(r"\s+")
Merge = tuple[int, int, int, int]  # 0-based (first_row, first_col, last_row, last_col)


def is_blank(value: Any) -> bool:
    """Whether a cell counts as empty (None, NaN, or only whitespace)."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def check_table_size(
    label: str, rows: int, columns: int, limits: TableLimits, *, sheet: str | None = None
) -> None:
    """Refuse a table of ``rows`` x ``columns`` over ``limits`` (FILE_TOO_LARGE)."""
    problems = []
    if rows > limits.max_rows:
        problems.append(f"行数 {rows:,} > 上限 {limits.max_rows:,}")
    if columns > limits.max_columns:
        problems.append(f"列数 {columns:,} > 上限 {limits.max_columns:,}")
    if rows * columns > limits.max_cells:
        problems.append(f"セル数 {rows * columns:,} > 上限 {limits.max_cells:,}")
    if not problems:
        return
    if sheet is None:
        where = f"「{label}」の表は {rows:,} 行 × {columns:,} 列で"
        hint = "期間や部門で分けたファイルにするか、不要な列を削除してから渡してください。"
    else:
        span = f"A1:{get_column_letter(min(columns, 16_384))}{rows}"
        where = (
            f"「{label}」のシート「{sheet}」は使用範囲が {span}（{rows:,} 行 × {columns:,} 列）で"
        )
        hint = (
            "離れた位置に値や書式の入ったセルが残っていると使用範囲が広がります。Excel で Ctrl+End を"
            "押して最後のセルを確認し、不要な行・列を削除して保存し直してください。"
        )
    raise too_large(
        label,
        f"{where}大きすぎるため読み込めません（{'、'.join(problems)}）。",
        hint,
        rows=rows,
        columns=columns,
        sheet=sheet,
        limits=asdict(limits),
    )


def _is_label(value: Any) -> bool:
    """A cell that can name a column: text that is neither a number nor an ISO date, nor a lone
    numbering mark (``①``, ``⑴``: a heading only in a row of them in sequence)."""
    if not isinstance(value, str) or not value.strip():
        return False
    text = value.strip()
    if len(text) == 1 and numeral_marks(text):
        return False
    return read_amount(text) is None and ISO_DATE.fullmatch(text) is None


def _is_numbered_headings(row: Sequence[Any]) -> bool:
    """``(1)``, ``(2)``, ``(3)`` … (or ``①``, ``②``, ``③`` …) in sequence across a row's filled
    text cells (at least two): the numbered column headings of Japanese forms, not a row of
    negative amounts (nor of the amounts 1, 2, 3 NFKC makes of circled numbers)."""
    cells = [v for v in row if not is_blank(v)]
    numbers = [heading_number(v) if isinstance(v, str) else None for v in cells]
    if len(numbers) < 2 or numbers[0] is None:
        return False
    return numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def _is_date(value: Any) -> bool:
    if isinstance(value, date):
        return True
    return isinstance(value, str) and read_date(value.strip()) is not None


def _dated_like_below(scan: list[list[Any]], i: int) -> bool:
    """Whether row ``i`` holds a date in a column whose cells below (the next
    rows scanned) are dates too, at least ``DATE_COLUMN_SHARE`` of them: a row of data,
    since a column's name is never a date of its own column (a header of month dates stands
    over amounts, not over dates)."""
    below = scan[i + 1 :]
    for j, value in enumerate(scan[i]):
        if not _is_date(value):
            continue
        cells = [r[j] for r in below if j < len(r) and not is_blank(r[j])]
        if cells and sum(map(_is_date, cells)) >= DATE_COLUMN_SHARE * len(cells):
            return True
    return False


def detect_header(rows: Sequence[Sequence[Any]]) -> tuple[int | None, int]:
    """Return ``(header_index, data_start)`` for the first rows of a table.

    ``header_index`` is None when the table has no header row. Raises ``ValueError`` when
    every scanned row is empty.
    """
    scan = [list(r) for r in rows[:HEADER_SCAN_ROWS]]
    counts = [sum(not is_blank(v) for v in r) for r in scan]
    widest = max(counts, default=0)
    if widest == 0:
        raise ValueError("no data")
    for i, count in enumerate(counts):
        if count == 0:
            continue
        below = [c for c in counts[i + 1 : i + 21] if c]
        body = median(below) if below else count
        wide_enough = count >= max(2, widest / 2) and count >= 0.8 * min(body, widest)
        if widest >= 2 and not wide_enough:
            continue
        if period_in([" ".join(map(_cell_name, scan[i]))]) is not None:
            continue  # 期間 | 2026/2/1 | ～ | 2026/2/28: a title line, however wide
        if _dated_like_below(scan, i):
            return None, i  # a journal export without a header (弥生's 仕訳日記帳): data
        if any(_is_label(v) for v in scan[i]) or _is_numbered_headings(scan[i]):
            return i, i + 1
        return None, i
    # Only reachable when no row is wide enough, which the widest row always is.
    raise AssertionError("unreachable")


def grouped_header(
    rows: Sequence[Sequence[Any]], header: int | None, data_start: int
) -> tuple[int, list[Merge]] | None:
    """The first row of a two-row header whose upper row names groups over blank cells, and
    the merges it stands for, or None; its lower row is the header ``detect_header`` found,
    or the row above the data it found (``header``, ``data_start``: a row of groups is too
    narrow for a header by itself). Every filled cell of the two rows is a label, the row
    below them holds a value that is not (data), each column filled below is named in one of
    the two rows, and each label of the upper row (two or more) is a group over the labels
    right of it under blank cells (借方 over 科目 | 金額), stands over a blank (日付: its
    own column), or repeats the label below it; at least one is a group. A title row
    (``売上明細``) or ``会社名 | 山田商事`` above a header is none of these."""
    scan = [list(r) for r in rows[: HEADER_SCAN_ROWS + 2]]
    for i in sorted({data_start - 2, -1 if header is None else header - 1}):
        if i < 0 or i + 2 >= len(scan):
            continue
        width = max(len(r) for r in scan[i : i + 3])
        up, low, below = ([*r, *[None] * (width - len(r))] for r in scan[i : i + 3])
        if any(not is_blank(v) and not _is_label(v) for v in up + low) or all(
            is_blank(v) or _is_label(v) for v in below
        ):
            continue
        if any(
            not is_blank(below[j]) and is_blank(up[j]) and is_blank(low[j]) for j in range(width)
        ):
            continue
        merges = _groups(i, up, low)
        if merges is not None:
            return i, merges
    return None


def _groups(i: int, up: list[Any], low: list[Any]) -> list[Merge] | None:
    """The merges of ``grouped_header``'s rows ``i`` (``up``) and ``i + 1`` (``low``), or None
    where ``up`` is not a row of groups."""
    merges: list[Merge] = []
    spans = 0
    for j, value in enumerate(up):
        if is_blank(value):
            continue
        last = j
        while last + 1 < len(up) and is_blank(up[last + 1]) and not is_blank(low[last + 1]):
            last += 1
        if last > j and not is_blank(low[j]):
            merges.append((i, j, i, last))
            spans += 1
        elif is_blank(low[j]):
            merges.append((i, j, i + 1, j))
        elif _cell_name(low[j]) != _cell_name(value):
            return None
    return merges if spans and sum(not is_blank(v) for v in up) >= 2 else None


def expand_merges(grid: list[list[Any]], merges: list[Merge], header_end: int) -> list[list[Any]]:
    """Merged values copied into covered cells: all of them in the header, only down below."""
    rows = [list(r) for r in grid]
    for r0, c0, r1, c1 in merges:
        if r0 >= len(grid):
            continue
        value = grid[r0][c0]
        last_col = c1 if r0 <= header_end else c0
        for r in range(r0, min(r1, len(rows) - 1) + 1):
            for c in range(c0, min(last_col, len(rows[r]) - 1) + 1):
                rows[r][c] = value
    return rows


def spanned_note(first: int, last: int) -> str:
    """The note for a header of rows ``first``..``last`` (0-based) read as one."""
    return (
        f"ヘッダーが {first + 1}〜{last + 1} 行目の {last - first + 1} 行にまたがっていたため、"
        "結合して列名にしました。"
    )


def joined_name(rows: list[list[Any]], first: int, last: int, col: int) -> Any:
    """The name of column ``col`` of a header of rows ``first``..``last`` (merges expanded):
    its distinct values top down joined by ``_`` (借方_金額)."""
    parts: list[str] = []
    values: list[Any] = []
    for r in range(first, last + 1):
        value = rows[r][col] if col < len(rows[r]) else None
        if value is None:
            continue
        text = str(value).strip()
        if not parts or parts[-1] != text:
            parts.append(text)
            values.append(value)
    if not parts:
        return None
    if len(parts) == 1 and not isinstance(values[0], str):
        return values[0]  # let the namer format dates and integral floats
    # (A name only in a lower row, under a blank: 日付 under 借方 / 貸方, is that name.)
    return "_".join(parts)


def _cell_name(value: Any) -> str:
    if is_blank(value):
        return ""
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == datetime.min.time() else str(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return _SPACES.sub(" ", str(value)).strip()


def make_column_names(
    cells: Sequence[Any], positions: Sequence[int]
) -> tuple[list[str], list[str]]:
    """Unique column names for header ``cells`` at 0-based file ``positions``.

    Returns ``(names, renamed)`` where ``renamed`` lists the names that were invented or
    suffixed, for a warning.
    """
    names: list[str] = []
    renamed: list[str] = []
    used: set[str] = set()
    raw = [_cell_name(c) for c in cells]
    taken = {r for r in raw if r}
    for value, pos in zip(raw, positions, strict=True):
        base = value or f"列{pos + 1}"
        name, n = base, 2
        # Invented or suffixed names must not take a real header's name.
        while name in used or (name != value and name in taken):
            name, n = f"{base}_{n}", n + 1
        if name != value:
            renamed.append(name)
        used.add(name)
        names.append(name)
    return names, renamed
