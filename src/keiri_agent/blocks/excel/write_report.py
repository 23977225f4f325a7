"""``excel.write_report``: a new, formatted workbook from tables (and charts) for people to read.

Each entry of ``sheets`` becomes a worksheet: an optional title line, a bold header with a fill
and an auto-filter, frozen below the header, columns as wide as their content (full-width
characters count double), integer amount columns as ``#,##0`` and ISO date strings as real
dates (``yyyy-mm-dd``). An empty table still gets its sheet, with the note ``（該当なし）``.
Sheet names are made valid for Excel (31 characters, none of ``[]:*?/\\``, unique ignoring case)
and every change is reported. Text that starts with ``=`` is written as text, never as a formula.

The workbook is saved to a temporary file and renamed into place (``atomic_path``): a failure
leaves nothing behind, and an existing file is replaced only with ``overwrite: true`` (or when
it is this node's own output from the run being resumed, ``BlockContext.may_replace``).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.drawing.image import Image
from openpyxl.styles import Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.utils.cell import coordinate_from_string
from openpyxl.utils.exceptions import CellCoordinatesException
from openpyxl.worksheet.worksheet import Worksheet
from PIL import Image as PILImage

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import output_file
from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.records import column_list, input_error, records_from
from keiri_agent.documents.source import read_source
from keiri_agent.workspace import atomic_path

__all__ = [
    "AMOUNT_FORMAT",
    "DATE_FORMAT",
    "EMPTY_NOTE",
    "ExcelWriteReportBlock",
    "is_amount_column",
]

DEFAULT_OUTPUT_NAME = "report.xlsx"
EMPTY_NOTE = "（該当なし）"
AMOUNT_FORMAT = "#,##0"
DATE_FORMAT = "yyyy-mm-dd"
DATETIME_FORMAT = "yyyy-mm-dd hh:mm:ss"
MAX_SHEET_NAME = 31
MAX_ROWS = 1_048_576 - 2  # Excel's last row, less a title and a header
MIN_WIDTH, MAX_WIDTH = 6, 60
WIDTH_SAMPLE_ROWS = 2_000  # rows looked at to size a column
MAX_IMAGE_BYTES = 20 * 2**20
EXCEL_DPI = 96  # Excel shows an image's pixels at 96 per inch
ROW_PIXELS = 20  # default row height (15 pt)
HEADER_FILL = PatternFill("solid", fgColor="DDEBF7")
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")
# Integer columns named like codes or calendar parts are not amounts: no thousands separator.
_NOT_AMOUNT = re.compile(r"(id|code|no\.?|番号|コード|年|年度|月|日|№)$", re.IGNORECASE)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?")
_SHEET_HINT = "sheets は [{name: シート名, rows: レコードのリスト, title: 表題, columns: [列名...]}] の形で指定してください。"


@dataclass
class _Sheet:
    given: str
    name: str
    rows: list[dict[str, Any]] | None  # None: a sheet for images only
    columns: list[str]
    title: str | None
    formats: dict[str, str]
    explicit_columns: bool
    next_row: int = 1  # where the next image without a cell goes
    warnings: list[str] = field(default_factory=list)


class ExcelWriteReportBlock(ProcessingBlock):
    """Writes ``sheets`` (and ``images``) into a new workbook; returns ``report``."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        sheets = _sheets(inputs.get("sheets"), [])
        _images(inputs.get("images"), sheets)
        _output_suffix(inputs.get("output_path"))

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        warnings: list[str] = []
        sheets = _sheets(inputs.get("sheets"), warnings)
        images = _images(inputs.get("images"), sheets)
        target = _output_path(inputs.get("output_path"), bool(inputs.get("overwrite")), ctx)
        book = Workbook()
        if book.active is not None:
            book.remove(book.active)
        for sheet in sheets:
            ctx.check_cancelled()
            _write_sheet(book.create_sheet(sheet.name), sheet)
            warnings.extend(sheet.warnings)
        for spec in images:
            ctx.check_cancelled()
            _add_image(book[spec["sheet"].name], spec)
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target, suffix=".xlsx", prefix=ctx.claim_output(target)) as tmp:
            book.save(tmp)
        book.close()
        total = sum(len(s.rows or []) for s in sheets)
        ctx.log(f"{target.name} に {len(sheets)} シート（計 {total:,} 行）の報告書を作成しました")
        return {
            "report": {
                "output_path": str(target),
                "sheets": [
                    {"name": s.name, "rows": len(s.rows or []), "columns": s.columns}
                    for s in sheets
                ],
                "images": len(images),
                "warnings": warnings,
            }
        }


# --- inputs -----------------------------------------------------------------------------------


def _sheets(raw: Any, warnings: list[str]) -> list[_Sheet]:
    if not isinstance(raw, list) or not raw:
        raise input_error("書き出す表（sheets）が指定されていません。", _SHEET_HINT, field="sheets")
    used: set[str] = set()
    sheets = []
    for index, item in enumerate(raw):
        where = f"sheets[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise input_error(f"{where} にシート名（name）がありません。", _SHEET_HINT, field=where)
        given = item["name"]
        rows = (
            None if item.get("rows") is None else records_from(item["rows"], field=f"{where}.rows")
        )
        if len(rows or []) > MAX_ROWS:
            raise input_error(
                f"シート「{given}」の表が Excel の行数の上限を超えます（{len(rows or []):,} 行）。",
                f"1 シート {MAX_ROWS:,} 行までです。期間や部門で分けて複数のシートにしてください。",
                field=f"{where}.rows",
            )
        explicit = item.get("columns") is not None
        if explicit:
            columns = column_list(item["columns"], field=f"{where}.columns")
            _require(rows or [], columns, given, f"{where}.columns")
        else:
            columns = list(dict.fromkeys(k for row in rows or [] for k in row))
        formats = item.get("number_formats") or {}
        if not isinstance(formats, Mapping) or not all(
            isinstance(v, str) for v in formats.values()
        ):
            raise input_error(
                f"{where}.number_formats は {{列名: 表示形式}} の形で指定してください。",
                '例: number_formats: {金額: "#,##0", 率: "0.0%"}',
                field=f"{where}.number_formats",
            )
        _require(
            [dict.fromkeys(columns)] if rows else [], formats, given, f"{where}.number_formats"
        )
        title = item.get("title")
        name = _sheet_name(given, index, used, warnings)
        sheets.append(
            _Sheet(
                given, name, rows, columns, str(title) if title else None, dict(formats), explicit
            )
        )
    return sheets


def _require(rows: list[dict[str, Any]], columns: Any, sheet: str, field: str) -> None:
    available = list(dict.fromkeys(k for row in rows for k in row))
    missing = [str(c) for c in columns if c not in available]
    if rows and missing:
        raise input_error(
            f"シート「{sheet}」の表に列 {', '.join(missing)} がありません（{field}）。",
            f"表にある列名を指定してください。使える列: {', '.join(available) or 'なし'}",
            field=field,
            missing=missing,
            available=available,
        )


def _sheet_name(given: str, index: int, used: set[str], warnings: list[str]) -> str:
    """``given`` made valid and unique for Excel; a warning says why it had to change."""
    reasons = []
    name = _BAD_SHEET_CHARS.sub("_", given).strip().strip("'")
    if _BAD_SHEET_CHARS.search(given):
        reasons.append("使えない文字 [ ] : * ? / \\ を含む")
    if not name:
        name = f"Sheet{index + 1}"
        reasons.append("空")
    if len(name) > MAX_SHEET_NAME:
        name = name[:MAX_SHEET_NAME]
        reasons.append(f"{MAX_SHEET_NAME} 文字を超える")
    if name.lower() == "history":  # reserved by Excel
        name += "_"
        reasons.append("Excel の予約語")
    base, n = name, 2
    while name.lower() in used:
        suffix = f"_{n}"
        name, n = base[: MAX_SHEET_NAME - len(suffix)] + suffix, n + 1
    if name != base:
        reasons.append("ほかのシートと重複する")
    used.add(name.lower())
    if name != given:
        why = "、".join(reasons) or "前後の空白や ' がある"
        warnings.append(f"シート名「{given}」は{why}ため「{name}」にしました。")
    return name


def _images(raw: Any, sheets: list[_Sheet]) -> list[dict[str, Any]]:
    if raw is None:
        return []
    hint = "images は [{sheet: シート名, path: 画像(.png)のパス, cell: 貼り付けるセル（例 H2）}] の形で指定してください。"
    if not isinstance(raw, list):
        raise input_error("images がリストではありません。", hint, field="images")
    by_name = {s.given: s for s in sheets} | {s.name: s for s in sheets}
    found = []
    for index, item in enumerate(raw):
        where = f"images[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("path"), str):
            raise input_error(f"{where} に画像のパス（path）がありません。", hint, field=where)
        sheet = by_name.get(str(item.get("sheet"))) if item.get("sheet") is not None else sheets[0]
        if sheet is None:
            raise input_error(
                f"{where} のシート「{item.get('sheet')}」は sheets にありません。",
                f"sheets のシート名（{', '.join(s.given for s in sheets)}）を指定してください。"
                "グラフだけのシートは sheets に rows を省いた {name: ...} を加えると作れます。",
                field=f"{where}.sheet",
            )
        cell = item.get("cell")
        if cell is not None:
            try:
                coordinate_from_string(str(cell).upper())
            except (CellCoordinatesException, ValueError):
                raise input_error(
                    f"{where} のセル '{cell}' はセル番地ではありません。",
                    "cell は H2 のようなセル番地で指定してください（省略時は表の下）。",
                    field=f"{where}.cell",
                ) from None
            cell = str(cell).upper()
        found.append({"sheet": sheet, "path": Path(item["path"]).expanduser(), "cell": cell})
    return found


def _output_suffix(value: Any) -> None:
    if value is not None and Path(str(value)).suffix.lower() != ".xlsx":
        raise input_error(
            f"出力先 '{value}' は .xlsx ファイルではありません。",
            "output_path は report.xlsx のように .xlsx で終わる名前にしてください。",
            field="output_path",
        )


def _output_path(value: Any, overwrite: bool, ctx: BlockContext) -> Path:
    _output_suffix(value)
    target = output_file(value, ctx, DEFAULT_OUTPUT_NAME)
    if target.exists() and not overwrite and not ctx.may_replace(target):
        raise input_error(
            f"出力先 {target} は既にあります。上書きはしません。",
            "別の output_path を指定するか、置き換えてよければ overwrite: true を指定してください。",
            field="output_path",
            path=str(target),
        )
    return target


# --- writing ----------------------------------------------------------------------------------


def _write_sheet(ws: Worksheet, sheet: _Sheet) -> None:
    row = 1
    if sheet.title:
        ws.cell(row=1, column=1, value=_text(sheet.title, sheet, "A1")).font = Font(
            bold=True, size=14
        )
        row = 2
    rows = sheet.rows
    if rows is None:  # images only
        sheet.next_row = row + 1 if sheet.title else 1
        return
    if not rows:
        if sheet.explicit_columns:
            _header(ws, row, sheet.columns)
            row += 1
        ws.cell(row=row, column=1, value=EMPTY_NOTE)
        sheet.next_row = row + 2
        return
    header = row
    _header(ws, header, sheet.columns)
    auto = {col: _column_format(col, rows) for col in sheet.columns}
    for offset, record in enumerate(rows, start=1):
        for col_index, col in enumerate(sheet.columns, start=1):
            cell = ws.cell(row=header + offset, column=col_index)
            value, date_format = _value(record.get(col), sheet, cell.coordinate)
            cell.value = value
            if isinstance(value, str) and value.startswith("="):
                cell.data_type = "s"  # data, never a formula
            number = isinstance(value, int | float) and not isinstance(value, bool)
            chosen = sheet.formats.get(col) or date_format or (auto[col] if number else None)
            if chosen and value is not None:
                cell.number_format = chosen
    last = get_column_letter(len(sheet.columns))
    ws.freeze_panes = f"A{header + 1}"
    ws.auto_filter.ref = f"A{header}:{last}{header + len(rows)}"
    for col_index, col in enumerate(sheet.columns, start=1):
        width = max(
            [_width(col)]
            + [
                _width(_shown(r.get(col), sheet.formats.get(col) or auto[col]))
                for r in rows[:WIDTH_SAMPLE_ROWS]
            ]
        )
        ws.column_dimensions[get_column_letter(col_index)].width = min(
            MAX_WIDTH, max(MIN_WIDTH, width + 2)
        )
    sheet.next_row = header + len(rows) + 2


def _header(ws: Worksheet, row: int, columns: list[str]) -> None:
    edge = Side(style="thin", color="808080")
    for index, name in enumerate(columns, start=1):
        cell = ws.cell(row=row, column=index, value=name)
        cell.font = Font(bold=True)
        cell.fill = HEADER_FILL
        cell.border = Border(bottom=edge)


def is_amount_column(column: str, values: Iterable[Any]) -> bool:
    """Whether a column holds amounts (shown with thousands separators, ``#,##0``): every
    value a whole number, and a name unlike a code or a calendar part (番号, 年, 月...)."""
    numbers = [v for v in map(json_cell, values) if v is not None]
    return (
        bool(numbers)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in numbers)
        and not _NOT_AMOUNT.search(column.strip())
    )


def _column_format(column: str, rows: list[dict[str, Any]]) -> str | None:
    return AMOUNT_FORMAT if is_amount_column(column, (r.get(column) for r in rows)) else None


def _value(raw: Any, sheet: _Sheet, coordinate: str) -> tuple[Any, str | None]:
    """The cell value and, for dates, their number format."""
    if isinstance(raw, Mapping | list | tuple):
        return _text(json.dumps(raw, ensure_ascii=False, default=str), sheet, coordinate), None
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
    return _text(value, sheet, coordinate), None


def _text(value: str, sheet: _Sheet, coordinate: str) -> str:
    cleaned = ILLEGAL_CHARACTERS_RE.sub("", value)
    if cleaned != value:
        sheet.warnings.append(
            f"シート「{sheet.name}」の {coordinate} から Excel に書けない制御文字を取り除きました。"
        )
    return cleaned


def _shown(value: Any, number_format: str | None) -> str:
    value = json_cell(value)
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool) and number_format:
        return f"{value:,}"
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


def _add_image(ws: Worksheet, spec: dict[str, Any]) -> None:
    path: Path = spec["path"]
    sheet: _Sheet = spec["sheet"]
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
            f"画像「{path.name}」が壊れているため Excel に貼り付けられません（{exc}）。",
            "画像を作り直してください（report.chart で作り直せます）。",
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
