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
from typing import Any, NamedTuple

from openpyxl.utils import get_column_letter

from keiri_agent.documents.cell_forms import (
    ISO_DATE,
    day_order,
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
    "Grouped",
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
# The most rows a header of groups (``grouped_header``) spans: groups, columns, sub-columns.
_GROUPED_ROWS = 3
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
    """A date cell, or text that writes one: in any form ``read_date`` reads, or with its year
    last (``13/02/2026``, ``02/03/2026``: a date whichever order its column turns out to
    write, ``day_order``)."""
    if isinstance(value, date):
        return True
    if not isinstance(value, str):
        return False
    text = value.strip()
    return read_date(text) is not None or day_order(text) is not None


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


class Grouped(NamedTuple):
    """A header of rows ``first``..``last`` (0-based) read as one (``grouped_header``), and the
    merges its blank cells stand for."""

    first: int
    last: int
    merges: list[Merge]


def grouped_header(
    rows: Sequence[Sequence[Any]], header: int | None, data_start: int
) -> Grouped | None:
    """A header of two or three rows whose upper rows name groups over blank cells, and the
    merges it stands for, or None. Its last row is the row above the data ``detect_header``
    found, that row itself, or a row higher up (``header``, ``data_start``: a row of groups
    is too narrow for a header by itself, a row of columns under groups may be taken for one,
    and so may a row of a table of text, the first full one). Every filled
    cell of its rows is a label; each label of a row above the last (two or more) is a group
    over the labels right of it under blank cells (借方 over 科目 | 金額; 科目 over 勘定 |
    補助 in a third row), stands over blanks (日付: its own column), or repeats the label
    below it, with a group in some row; every column filled below is named in one of its rows;
    and the row below holds a value or a date (data), or two groups of a row stand over the
    same names (借方 and 貸方 over 科目 | 補助: a header, whatever the rows below hold). A
    title row (``売上明細``) or ``会社名 | 山田商事`` above a header is none of these."""
    del header  # (the last row of the header is found from the data)
    scan = [list(r) for r in rows[: HEADER_SCAN_ROWS + 2]]
    for last in (data_start - 1, data_start, *range(data_start - 2, 0, -1)):
        if last < 1 or last + 1 >= len(scan):
            continue
        found = _stack(scan, last)
        if found is not None:
            return found
    return None


def _stack(scan: list[list[Any]], last: int) -> Grouped | None:
    """``grouped_header``'s header ending at row ``last`` of ``scan``, or None."""
    first = max(0, last - _GROUPED_ROWS + 1)
    width = max(len(r) for r in scan[first : last + 2])
    grid = [[*r, *[None] * (width - len(r))] for r in scan[first : last + 2]]
    below = grid[-1]
    named = grid[-2]  # each column's name so far, from the last row up
    if any(not is_blank(v) and not _is_label(v) for v in named):
        return None
    merges: list[Merge] = []
    top, repeated = last, False
    for up in reversed(grid[:-2]):
        if any(not is_blank(v) and not _is_label(v) for v in up):
            break
        groups = _groups(top - 1, last, up, named)
        if groups is None:
            break
        merges += groups
        repeated = repeated or _repeated(groups, named)
        top -= 1
        named = [u if is_blank(n) else n for u, n in zip(up, named, strict=True)]
    if top == last:
        return None
    if any(not is_blank(b) and is_blank(n) for b, n in zip(below, named, strict=True)):
        return None
    if not repeated and all(is_blank(v) or (_is_label(v) and not _is_date(v)) for v in below):
        return None
    return Grouped(top, last, merges)


def _groups(i: int, last: int, up: list[Any], low: list[Any]) -> list[Merge] | None:
    """The merges of ``grouped_header``'s row ``i`` (``up``) over the names of its rows below
    it down to ``last`` (``low``), or None where ``up`` is not a row of groups."""
    merges: list[Merge] = []
    spans = 0
    for j, value in enumerate(up):
        if is_blank(value):
            continue
        end = j
        while end + 1 < len(up) and is_blank(up[end + 1]) and not is_blank(low[end + 1]):
            end += 1
        if end > j and not is_blank(low[j]):
            merges.append((i, j, i, end))
            spans += 1
        elif is_blank(low[j]):
            merges.append((i, j, last, j))
        elif _cell_name(low[j]) != _cell_name(value):
            return None
    return merges if spans and sum(not is_blank(v) for v in up) >= 2 else None


def _repeated(merges: list[Merge], low: list[Any]) -> bool:
    """Whether two of the groups ``merges`` span stand over the same names in ``low``."""
    seen: set[tuple[str, ...]] = set()
    for r0, c0, r1, c1 in merges:
        if r0 != r1 or c1 == c0:
            continue
        names = tuple(_cell_name(low[c]) for c in range(c0, c1 + 1))
        if names in seen:
            return True
        seen.add(names)
    return False


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
