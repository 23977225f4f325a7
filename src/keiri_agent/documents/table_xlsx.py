"""The Excel half of ``read_table``: one worksheet of an .xlsx/.xlsm into a DataFrame.

Merged cells are the hard part of Japanese sheets. A title merged across the table is one
value, so the title row counts as one cell when the header is searched for. A header that
spans two rows ("部門" merged vertically, "売上" merged over "上期"/"下期") becomes one row of
names joined with "_" ("部門", "売上_上期", "売上_下期"); every merged header value goes into
each column it covers. Below the header only vertical merges are expanded (a category written
once for several rows is repeated on each row); a value merged across columns stays in its
first column. Cached values are read (``data_only``), as Excel shows them: a number to Excel's
15 significant digits (a formula's 1100*0.1 is stored as 110.00000000000001; Excel shows
110). A number format that shows a column's numbers divided by 1,000 (``#,##0,``: 1,234,567
shown as 1,235 under a header ``金額（千円）``) does not change the value read, the number the
cell holds; its unit is then told from the header's and the format's (``display_scale``,
``table_frame``). A header cell that is a date under a format without a day (``m"月"``,
``yyyy"年"m"月"``, ``ggge"年"m"月"``: the months of a 月次推移表 typed as 2025/4/1) names its
month: ``2025年4月``, not ``2025-04-01``. A number under a percent format (``0%``: 0.12
shown as 12%) is read as the percentage it shows, written out exactly (``12%``; 0.1234 →
``12.34%``), so a column of rates reads alike whether a cell was formatted or typed as text
``12%``, and a plain number among them (``0.12`` or ``12`` under General) is told apart
(``table_types``). A code under an identifier's header (口座番号, 部門コード:
``table_types.is_id_header``) that a zero-padding format (``0000000``) shows with leading
zeros is read as shown too: ``0012345``, as a CSV of the sheet holds it, with a note
(``info.notes``). Only the cells that hold values are read, and a range of values over the
table limits (a stray value at XFD1048576) is refused with the range it spans, so a few-KB
workbook cannot ask for gigabytes; a formatted empty cell far from the table does not count.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from datetime import datetime, tzinfo
from decimal import Decimal
from typing import Any

import pandas as pd
from openpyxl.utils.datetime import CALENDAR_MAC_1904
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.documents.bounded import run_bounded
from keiri_agent.documents.excel_address import first_shown
from keiri_agent.documents.failures import invalid_input, unreadable
from keiri_agent.documents.ooxml import open_workbook
from keiri_agent.documents.table_frame import (
    TableReadInfo,
    TableResult,
    choose_header,
    finish_table,
)
from keiri_agent.documents.table_infer import (
    Merge,
    TableLimits,
    check_table_size,
    expand_merges,
    grouped_header,
    is_blank,
    joined_name,
    spanned_note,
)
from keiri_agent.documents.table_types import is_id_header
from keiri_agent.documents.xlsx_formulas import check_computed, recording, sheet_part
from keiri_agent.documents.xlsx_view import (
    hidden_rows_and_columns,
    note_hidden,
    shift_mac_serials,
)
from keiri_agent.documents.zipcheck import check_container

__all__ = ["EXCEL_DIGITS", "MAX_HEADER_ROWS", "display_scale", "read_xlsx_table"]

# A header merged over more rows than this is treated as a one-row header.
MAX_HEADER_ROWS = 3

# Excel keeps 15 significant digits of a number; the file stores the double's 17.
EXCEL_DIGITS = 15
# The parts of a number format that show text, not digits: "quoted", \x, _x (a space as wide
# as x), *x (fill), [Red] / [$-ja-JP] / [>=1000].
_FORMAT_TEXT = re.compile(r'"[^"]*"|\\.|_.|\*.|\[[^\]]*\]')
# A format of zeros only (``0000000``): a code shown with its leading zeros.
_ZEROS = re.compile(r"0{2,}")
# Commas after the last digit placeholder: each divides the number shown by 1,000.
_SCALING_COMMAS = re.compile(r"[0#?](,+)[^0#?]*$")


def read_xlsx_table(
    data: bytes,
    label: str,
    *,
    sheet: str | int | None,
    header_row: int | None,
    limits: TableLimits = TableLimits(),  # noqa: B008 -- frozen, shared safely
    columns: Sequence[str] | None = None,
    zone: tzinfo | None = None,
) -> TableResult:
    """Read one sheet (default: the first) of the workbook in ``data`` (``columns``: only
    those, see ``table_frame.finish_table``).

    The workbook is checked like an archive, then parsed in a memory- and CPU-bounded child
    (``bounded.run_bounded``); a sheet whose used range is over ``limits`` is refused.
    """
    check_container(data, label)
    return run_bounded(
        _read_sheet, data, label, sheet, header_row, limits, columns, zone, label=label
    )


def _read_sheet(
    data: bytes,
    label: str,
    sheet: str | int | None,
    header_row: int | None,
    limits: TableLimits,
    columns: Sequence[str] | None,
    zone: tzinfo | None,
) -> TableResult:
    with recording() as formulas:  # every sheet is parsed as the workbook loads
        workbook = open_workbook(data, label, read_only=False, data_only=True)
    try:
        ws = _pick_sheet(workbook, sheet, label)
        check_computed(formulas, sheet_part(data, ws.title), label, ws.title)
        # The range of the cells that hold values: a formatted empty cell far away (a stray
        # border at XFD1048576) widens Excel's used range, not the table.
        last_row = last_col = 0
        for (row, col), cell in ws._cells.items():
            if not is_blank(cell.value):
                last_row, last_col = max(last_row, row), max(last_col, col)
        check_table_size(label, last_row, last_col, limits, sheet=ws.title)
        grid: list[list[Any]] = [[None] * last_col for _ in range(last_row)]
        mac = workbook.epoch == CALENDAR_MAC_1904
        serials: set[tuple[int, int]] = set()  # numbers (not date cells) of a 1904 book
        hidden = hidden_rows_and_columns(ws)
        formats: dict[int, set[str]] = {}  # the number formats of each column's numbers
        padded: dict[tuple[int, int], str] = {}  # numbers shown with leading zeros, 0-based
        months: set[tuple[int, int]] = set()  # dates shown without a day (m"月"), 0-based
        # Only the cells that exist: iter_rows would create every cell of the used range.
        for (row, col), cell in ws._cells.items():
            if is_blank(cell.value):
                continue
            value = _as_shown(cell.value)
            if isinstance(value, int | float) and _shows_percent(value, cell.number_format):
                value = _percent_text(value)
            grid[row - 1][col - 1] = value
            if isinstance(value, int | float) and not isinstance(value, bool):
                formats.setdefault(col - 1, set()).add(cell.number_format)
                shown = _zero_padded(value, cell.number_format)
                if shown is not None:
                    padded[(row - 1, col - 1)] = shown
                if mac:
                    serials.add((row, col))
            elif isinstance(value, datetime) and _shows_month(cell.number_format):
                months.add((row - 1, col - 1))
        merges: list[Merge] = [
            (r.min_row - 1, r.min_col - 1, r.max_row - 1, r.max_col - 1)
            for r in ws.merged_cells.ranges
        ]
        info = TableReadInfo(
            file=label, format="xlsx", sheet=ws.title, sheets=list(workbook.sheetnames)
        )
        titles = [each.title for each in workbook.worksheets]
        if sheet is None and titles.index(ws.title) > 0:
            skipped = "、".join(f"'{title}'" for title in titles[: titles.index(ws.title)])
            info.warnings.append(
                f"非表示のシート {skipped} を飛ばし、最初の表示されているシート '{ws.title}' を"
                "読みました（非表示のシートを読むにはシート名を指定してください）。"
            )
    finally:
        workbook.close()
    if not any(v is not None for row in grid for v in row):
        others = [s for s in info.sheets if s != info.sheet]
        raise unreadable(
            label,
            f"'{label}' のシート '{info.sheet}' にデータがありません。",
            (
                f"データのあるシートを指定してください（ほかのシート: {'、'.join(others)}）。"
                if others
                else "データの入ったファイルを指定してください。"
            ),
            sheet=info.sheet,
            sheets=info.sheets,
        )
    detection = _detection_grid(grid, merges)
    header, data_start = choose_header(detection, header_row, label)
    grouped = None if header_row is not None else grouped_header(detection, header, data_start)
    if grouped is not None:  # a header of groups written without merging them
        header, merges = grouped.first, merges + grouped.merges
    header_end = _header_end(grid, merges, header) if header is not None else None
    if grouped is not None and header_end is not None:
        header_end = max(header_end, grouped.last)
    if header is not None and header_end is not None:
        for row, col in months:
            value = grid[row][col]
            if header <= row <= header_end and isinstance(value, datetime):
                grid[row][col] = f"{value.year}年{value.month}月"
    full = expand_merges(grid, merges, header_end if header_end is not None else -1)
    ncols = max((len(r) for r in grid), default=0)
    names: list[Any] = []
    if header is not None and header_end is not None:
        names = [joined_name(full, header, header_end, j) for j in range(ncols)]
        data_start = header_end + 1
        if header_end > header:
            info.warnings.append(spanned_note(header, header_end))
    _codes_as_shown(full, names, data_start, padded, info)
    frame = pd.DataFrame(full[data_start:], columns=list(range(ncols)), dtype=object)
    above = grid[: header if header is not None else data_start]
    positions = range(data_start + 1, data_start + 1 + len(frame))  # sheet rows, from 1
    scales = _scaled_columns(formats)
    # A header of several rows, each as written (merges expanded), to know it again when a
    # paged sheet repeats it (``table_layout``).
    header_rows = (
        full[header : header_end + 1] if header is not None and header_end is not None else []
    )
    result = finish_table(
        frame, names, header, above, info, positions, columns, zone, scales, header_rows
    )
    note_hidden(result, hidden)
    if serials:
        shift_mac_serials(result, serials)
    return result


def display_scale(number_format: str) -> int:
    """How many times a number format divides the number it shows by 1,000 (``#,##0,``: 1,
    ``#,##0,,"百万円"``: 2, ``#,##0``: 0), read from its first (positive) section."""
    section = _FORMAT_TEXT.sub("", number_format).split(";")[0]
    match = _SCALING_COMMAS.search(section)
    return len(match[1]) if match else 0


def _zero_padded(value: float, number_format: str) -> str | None:
    """The digits a whole number shows under a zero-padding format (``0000000``: 12345 shown
    as ``0012345``) when they begin with a zero the value does not hold; else None."""
    width = _padded_width(number_format)
    if not width or value < 0 or not float(value).is_integer():
        return None
    digits = str(int(value))
    return digits.zfill(width) if len(digits) < width else None


@functools.lru_cache(maxsize=256)  # a sheet has few formats and many cells
def _padded_width(number_format: str) -> int:
    """The digits a zero-padding format (``0000000``) shows; 0 for any other format."""
    section = _FORMAT_TEXT.sub("", number_format).split(";")[0]
    return len(section) if _ZEROS.fullmatch(section) else 0


def _codes_as_shown(
    full: list[list[Any]],
    names: Sequence[Any],
    data_start: int,
    padded: dict[tuple[int, int], str],
    info: TableReadInfo,
) -> None:
    """An identifier column (``is_id_header``: 口座番号, 部門コード) whose numbers a
    zero-padding format shows with leading zeros is read as the codes it shows, every number
    of it as its digits (text, as a CSV of the sheet holds them), with a note."""
    columns: dict[int, int] = {}
    for row, col in padded:
        if row >= data_start and col < len(names) and is_id_header(str(names[col])):
            columns[col] = columns.get(col, 0) + 1
    for col, count in columns.items():
        first: tuple[Any, str] | None = None
        for row in range(data_start, len(full)):
            value = full[row][col]
            if isinstance(value, int | float) and not isinstance(value, bool):
                full[row][col] = padded.get((row, col), _as_text(value))
                if first is None and (row, col) in padded:
                    first = (value, full[row][col])
        held, shown = first if first is not None else ("", "")
        info.notes.append(
            f"列「{names[col]}」: 表示形式で先頭に 0 を付けて表示されている番号 {count:,} 個を、"
            f"表示のとおりの文字として読みました（{held} → {shown}）"
        )


def _as_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _shows_month(number_format: str) -> bool:
    """Whether a date format shows a month but no day, weekday or time (``m"月"``,
    ``yyyy/mm``, ``[$-ja-JP]ggge"年"m"月"``)."""
    section = _FORMAT_TEXT.sub("", number_format).split(";")[0].lower()
    return "m" in section and not any(c in section for c in "dahs")


def _shows_percent(value: float, number_format: str) -> bool:
    """Whether ``value`` (a number) is shown as a percentage by its format (``0%``, ``0.0%``)."""
    if isinstance(value, bool) or "%" not in number_format:
        return False
    return "%" in _FORMAT_TEXT.sub("", number_format).split(";")[0]


def _percent_text(value: float) -> str:
    """The percentage a fraction is, written exactly (0.1 → ``10%``, 0.1234 → ``12.34%``)."""
    percent = (Decimal(repr(value)) * 100).normalize()
    return f"{percent:f}%"


def _scaled_columns(formats: dict[int, set[str]]) -> dict[int, tuple[int, str]]:
    """The columns whose numbers are all shown divided by 1,000 (or 1,000,000): ``{column:
    (scale, one of its formats)}``; a column whose formats disagree is shown as its cells
    say, one by one, and is left out."""
    scaled = {}
    for col, found in formats.items():
        scales = {display_scale(f) for f in found}
        if len(scales) == 1 and (scale := scales.pop()) > 0:
            scaled[col] = (scale, min(found))
    return scaled


def _as_shown(value: Any) -> Any:
    """A float as Excel shows it (``EXCEL_DIGITS``), an integral one as an int; else as is."""
    if isinstance(value, float) and math.isfinite(value):
        shown = float(f"{value:.{EXCEL_DIGITS}g}")
        return int(shown) if shown.is_integer() and abs(shown) < 2**53 else shown
    return value


def _pick_sheet(workbook: Workbook, sheet: str | int | None, label: str) -> Worksheet:
    sheets = workbook.worksheets
    names = [ws.title for ws in sheets]
    if sheet is None and sheets:
        return first_shown(workbook)
    if isinstance(sheet, int) and 0 <= sheet < len(sheets):
        return sheets[sheet]
    if isinstance(sheet, str) and sheet in names:
        return sheets[names.index(sheet)]
    raise invalid_input(
        label,
        f"'{label}' にシート {sheet!r} がありません（シート: {'、'.join(names) or 'なし'}）。",
        "シート名（または 0 から数えた番号）を確認して指定してください。",
        sheet=sheet,
        sheets=names,
    )


def _detection_grid(grid: list[list[Any]], merges: list[Merge]) -> list[list[Any]]:
    """Rows for header detection: merges expanded, but a row of one repeated value is one cell."""
    rows = [list(r) for r in grid]
    for r0, c0, r1, c1 in merges:
        value = grid[r0][c0] if r0 < len(grid) and c0 < len(grid[r0]) else None
        for r in range(r0, min(r1, len(rows) - 1) + 1):
            for c in range(c0, min(c1, len(rows[r]) - 1) + 1):
                rows[r][c] = value
    for row in rows:
        filled = [v for v in row if v is not None]
        if len(filled) > 1 and len(set(map(str, filled))) == 1:
            first = next(j for j, v in enumerate(row) if v is not None)
            row[:] = [v if j == first else None for j, v in enumerate(row)]
    return rows


def _header_end(grid: list[list[Any]], merges: list[Merge], header: int) -> int:
    """The last row of a header that starts at ``header`` (multi-row when merges say so): a
    merge down from one of its rows reaches it, or a row of text under merges across (借方
    over 科目 | 金額; 科目 over 勘定 | 補助 in a third row), up to ``MAX_HEADER_ROWS``."""
    end = row = header
    last = header + MAX_HEADER_ROWS - 1
    while row <= end:
        horizontal: list[Merge] = []
        for merge in merges:
            r0, c0, r1, c1 = merge
            if r0 != row:
                continue
            if r1 > r0:
                end = max(end, min(r1, last))
            if c1 > c0:
                horizontal.append(merge)
        nxt = row + 1
        if end == row and horizontal and nxt < len(grid) and nxt <= last:
            below = [
                _merged_value(grid, merges, nxt, c)
                for _r0, c0, _r1, c1 in horizontal
                for c in range(c0, c1 + 1)
            ]
            if all(isinstance(v, str) for v in below):
                end = nxt
        row += 1
    return end


def _merged_value(grid: list[list[Any]], merges: list[Merge], row: int, col: int) -> Any:
    """The value a cell shows: its own, or that of the merge covering it (None past the last
    column that holds a value, where a merge may still reach)."""
    for r0, c0, r1, c1 in merges:
        if r0 <= row <= r1 and c0 <= col <= c1:
            row, col = r0, c0
            break
    cells = grid[row]
    return cells[col] if col < len(cells) else None
