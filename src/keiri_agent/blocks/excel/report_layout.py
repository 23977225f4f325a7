"""How ``excel.write_report`` lays out its workbook: sheets of formatted tables, and images.

A sheet gets an optional title line, a bold header with a fill and an auto-filter, frozen
below the header, columns as wide as their content (full-width characters count double),
integer amount columns with separators and negatives as ``KEIRI_NEGATIVE_AMOUNTS`` says
(``documents.amount_format``: ``#,##0;"△"#,##0`` by default), codes as written (an identifier's
header: 1001, never 1,001; a 13-digit 法人番号 with every digit, not ``1.23457E+12``), total rows (合計, 小計...) in
bold, and ISO date strings as real dates (``yyyy-mm-dd``); an empty table gets the note
``（該当なし）``. Text that starts with ``=`` stays text, never a
formula; characters Excel cannot store are removed, with a warning on the sheet. Images (PNG /
JPEG) are placed at their physical size, below the table unless a cell is given.

Sheets are written row by row into a write-only workbook (``documents.excel_stream``): a table
(a :class:`Table` as ``file.read_table`` and the table blocks pass it, or records) is turned
into records ``CHUNK_ROWS`` at a time, so a ledger of hundreds of thousands of rows is never
held as records or cells as a whole. What a sheet states before its rows is decided first:
whether a column holds amounts from a pass over that column's values (as before), the column
widths from the first ``WIDTH_SAMPLE_ROWS`` rows (as before).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE, Cell
from openpyxl.drawing.image import Image
from openpyxl.styles import Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet
from PIL import Image as PILImage

from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.records import Table
from keiri_agent.documents.amount_format import (
    DIGITS_FORMAT,
    AmountFormat,
    header_label,
    is_amount_column,
    shows_exponent,
    total_row_flags,
)
from keiri_agent.documents.source import read_source
from keiri_agent.errors import cause_of, input_error

__all__ = [
    "DATE_FORMAT",
    "EMPTY_NOTE",
    "ReportSheet",
    "add_image",
    "write_sheet",
]

EMPTY_NOTE = "（該当なし）"
DATE_FORMAT = "yyyy-mm-dd"
DATETIME_FORMAT = "yyyy-mm-dd hh:mm:ss"
MIN_WIDTH, MAX_WIDTH = 6, 60
WIDTH_SAMPLE_ROWS = 2_000  # rows looked at to size a column
# Records made and written at a time: a table of any length is written in this many rows' memory.
CHUNK_ROWS = 4_096
MAX_IMAGE_BYTES = 20 * 2**20
EXCEL_DPI = 96  # Excel shows an image's pixels at 96 per inch
ROW_PIXELS = 20  # default row height (15 pt)
HEADER_FILL = PatternFill("solid", fgColor="DDEBF7")
HEADER_BORDER = Border(bottom=Side(style="thin", color="808080"))
BOLD = Font(bold=True)
TITLE_FONT = Font(bold=True, size=14)
# A write-only sheet (openpyxl's WriteOnlyWorksheet): it takes Worksheet's column_dimensions,
# freeze_panes, auto_filter and add_image, which its type stubs do not all declare.
WriteOnlySheet = Worksheet
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?")


@dataclass
class ReportSheet:
    """One sheet to write: its table (or None: images only) and how to show it."""

    given: str
    name: str
    rows: Table | list[dict[str, Any]] | None  # None: a sheet for images only
    columns: list[str]
    title: str | None
    formats: dict[str, str]
    explicit_columns: bool
    next_row: int = 1  # where the next image without a cell goes
    warnings: list[str] = field(default_factory=list)
    units: dict[str, str] = field(default_factory=dict)  # 千円...: shown in the header
    amounts: AmountFormat = field(default_factory=AmountFormat)  # separators, negatives


def write_sheet(ws: WriteOnlySheet, sheet: ReportSheet, between_chunks: Callable[[], None]) -> None:
    """Write ``sheet`` into a write-only worksheet, ``CHUNK_ROWS`` records at a time
    (``between_chunks`` runs before each: a cancellation check). What a sheet says before its
    rows (column widths, frozen panes) is decided first: amount columns from a pass over each
    column's values, widths from the first ``WIDTH_SAMPLE_ROWS`` rows."""
    rows = sheet.rows
    header = 2 if sheet.title else 1
    filled = rows is not None and len(rows) > 0
    if rows is not None and filled:
        auto = {col: _column_format(col, rows, sheet.amounts) for col in sheet.columns}
        _size_columns(ws, sheet, _records(rows, 0, WIDTH_SAMPLE_ROWS), auto)
        ws.freeze_panes = f"A{header + 1}"
    if sheet.title:
        ws.append([_styled(ws, _text(sheet.title, sheet, (1, 1)), TITLE_FONT)])
    if rows is None:  # images only
        sheet.next_row = header + 1 if sheet.title else 1
        return
    if not filled:
        row = header
        if sheet.explicit_columns:
            ws.append(_header(ws, sheet.columns, sheet.units))
            row += 1
        ws.append([EMPTY_NOTE])
        sheet.next_row = row + 2
        return
    ws.append(_header(ws, sheet.columns, sheet.units))
    for start in range(0, len(rows), CHUNK_ROWS):
        between_chunks()
        records = _records(rows, start, start + CHUNK_ROWS)
        totals = total_row_flags(records, sheet.columns)
        for offset, (record, bold) in enumerate(zip(records, totals, strict=True)):
            row = header + start + offset + 1
            ws.append(
                [
                    _cell(ws, record.get(col), sheet, col, auto[col], bold, (index, row))
                    for index, col in enumerate(sheet.columns, start=1)
                ]
            )
    last = get_column_letter(len(sheet.columns))
    ws.auto_filter.ref = f"A{header}:{last}{header + len(rows)}"
    sheet.next_row = header + len(rows) + 2


def _size_columns(
    ws: WriteOnlySheet,
    sheet: ReportSheet,
    sample: list[dict[str, Any]],
    auto: Mapping[str, str | None],
) -> None:
    """Each column as wide as its header and its values in ``sample`` (within limits)."""
    for index, col in enumerate(sheet.columns, start=1):
        width = max(
            [_width(header_label(col, sheet.units.get(col)))]
            + [
                _width(_shown(r.get(col), sheet.formats.get(col) or auto[col], sheet.amounts))
                for r in sample
            ]
        )
        ws.column_dimensions[get_column_letter(index)].width = min(
            MAX_WIDTH, max(MIN_WIDTH, width + 2)
        )


def _cell(
    ws: WriteOnlySheet,
    raw: Any,
    sheet: ReportSheet,
    column: str,
    auto: str | None,
    bold: bool,
    where: tuple[int, int],
) -> Any:
    """One data cell (at ``where``: column and row, from 1): the bare value when it needs no
    style, else a styled cell."""
    value, date_format = _value(raw, sheet, where)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    chosen = sheet.formats.get(column) or date_format or (auto if number else None)
    formula_like = isinstance(value, str) and value.startswith("=")
    if not (bold or formula_like or (chosen and value is not None)):
        return value
    cell = _styled(ws, value, BOLD if bold else None)
    if formula_like:
        cell.data_type = "s"  # data, never a formula
    if chosen and value is not None:
        cell.number_format = chosen
    return cell


def _styled(ws: WriteOnlySheet, value: Any, font: Font | None) -> Cell:
    cell = WriteOnlyCell(ws, value=value)
    if font is not None:
        cell.font = font
    return cell


def _records(rows: Table | list[dict[str, Any]], start: int, stop: int) -> list[dict[str, Any]]:
    """Rows ``start:stop`` as records (a table makes them only now)."""
    return rows.records(start, stop) if isinstance(rows, Table) else rows[start:stop]


def _header(ws: WriteOnlySheet, columns: list[str], units: Mapping[str, str]) -> list[Cell]:
    cells = []
    for name in columns:
        cell = _styled(ws, header_label(name, units.get(name)), BOLD)
        cell.fill = HEADER_FILL
        cell.border = HEADER_BORDER
        cells.append(cell)
    return cells


def _column_format(
    column: str, rows: Table | list[dict[str, Any]], amounts: AmountFormat
) -> str | None:
    """The amount format when every value of ``column`` is a whole number (a table's column is
    read as it is stored, without making records); ``DIGITS_FORMAT`` for another column with a
    number General would show as ``1.23457E+12`` (a 法人番号: ``shows_exponent``)."""
    values = rows.frame[column] if isinstance(rows, Table) else [r.get(column) for r in rows]
    if is_amount_column(column, values):
        return amounts.excel()
    return DIGITS_FORMAT if any(map(shows_exponent, values)) else None


def _value(raw: Any, sheet: ReportSheet, where: tuple[int, int]) -> tuple[Any, str | None]:
    """The cell value and, for dates, their number format."""
    if isinstance(raw, Mapping | list | tuple):
        return _text(json.dumps(raw, ensure_ascii=False, default=str), sheet, where), None
    value = json_cell(raw)
    if isinstance(value, float) and math.isinf(value):
        return str(value), None
    if not isinstance(value, str):
        return value, None
    text = value.strip()
    if _ISO_DATE.fullmatch(text):
        try:
            return dt.date.fromisoformat(text), DATE_FORMAT
        except ValueError:
            pass
    elif _ISO_DATETIME.fullmatch(text):
        try:
            return dt.datetime.fromisoformat(text), DATETIME_FORMAT
        except ValueError:
            pass
    return _text(value, sheet, where), None


def _text(value: str, sheet: ReportSheet, where: tuple[int, int]) -> str:
    cleaned = ILLEGAL_CHARACTERS_RE.sub("", value)
    if cleaned != value:
        column, row = where
        sheet.warnings.append(
            f"シート「{sheet.name}」の {get_column_letter(column)}{row} から Excel に書けない制御文字を取り除きました。"
        )
    return cleaned


def _shown(value: Any, number_format: str | None, amounts: AmountFormat) -> str:
    value = json_cell(value)
    if value is None:
        return ""
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and number_format not in (None, DIGITS_FORMAT)
    ):
        return amounts.text(value)
    if isinstance(value, str) and _ISO_DATETIME.fullmatch(value.strip()):
        return "0" * len("2025-01-31 12:00:00")
    return str(value)


def _width(text: str) -> int:
    """Display width: full-width (East Asian wide) characters count double."""
    return max(
        (
            sum(2 if unicodedata.east_asian_width(ch) in "WFA" else 1 for ch in line)
            for line in text.splitlines()
        ),
        default=0,
    )


def add_image(ws: WriteOnlySheet, spec: dict[str, Any]) -> None:
    path: Path = spec["path"]
    sheet: ReportSheet = spec["sheet"]
    data = read_source(path, label=path.name, max_bytes=MAX_IMAGE_BYTES)
    if not data.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")):
        raise input_error(
            f"「{path.name}」は PNG / JPEG 画像ではないため Excel に貼り付けられません。",
            "report.chart で作ったグラフなら format: png にしてください（SVG は貼り付けられません）。",
            field="images",
            path=str(path),
        )
    try:
        with PILImage.open(io.BytesIO(data)) as probe:
            probe.verify()
            dpi = probe.info.get("dpi", (EXCEL_DPI, EXCEL_DPI))[0] or EXCEL_DPI
        image = Image(io.BytesIO(data))
    except (OSError, ValueError, SyntaxError) as exc:  # PIL's errors for damaged images
        raise input_error(
            f"画像「{path.name}」が壊れているため Excel に貼り付けられません。",
            "画像を作り直してください（report.chart で作り直せます）。",
            cause=cause_of(exc),
            field="images",
            path=str(path),
        ) from exc
    # Shown at its physical size: a 150-dpi chart of 8 inches is 8 inches wide in Excel too.
    scale = EXCEL_DPI / float(dpi)
    image.width, image.height = round(image.width * scale), round(image.height * scale)
    cell = spec["cell"]
    if cell is None:
        cell = f"A{sheet.next_row}"
        sheet.next_row += math.ceil(image.height / ROW_PIXELS) + 1
    ws.add_image(image, cell)
