"""``excel.write_report``: a new, formatted workbook from tables (and charts) for people to read.

Each entry of ``sheets`` becomes a worksheet: an optional title line, a bold header with a fill
and an auto-filter, frozen below the header, columns as wide as their content (full-width
characters count double), integer amount columns with separators and negatives as the setting
``KEIRI_NEGATIVE_AMOUNTS`` says (``△660`` by default), total rows in bold, and ISO date strings
as real dates (``yyyy-mm-dd``). An empty table still gets its sheet, with the note ``（該当なし）``.
Sheet names are made valid for Excel (31 characters, none of ``[]:*?/\\``, unique ignoring case)
and every change is reported. Text that starts with ``=`` is written as text, never as a formula.
The layout itself is :mod:`keiri_agent.blocks.excel.report_layout`'s.

The workbook is written row by row (``documents.excel_stream``: openpyxl's write-only mode; a
table is made into records a chunk at a time), saved to a temporary file and renamed into place
(``atomic_path``): a failure leaves nothing behind, and an existing file is replaced only with ``overwrite: true`` (or when
it is this node's own output from the run being resumed, ``BlockContext.may_replace``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openpyxl.utils.cell import coordinate_from_string
from openpyxl.utils.exceptions import CellCoordinatesException

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.excel.report_layout import ReportSheet, add_image, write_sheet
from keiri_agent.blocks.inputs import output_file
from keiri_agent.blocks.table.records import Table, column_list, columns_of, records_from
from keiri_agent.documents.amount_format import AmountFormat
from keiri_agent.documents.excel_address import EXCEL_LAST_ROW
from keiri_agent.documents.excel_stream import streamed_workbook
from keiri_agent.errors import input_error

__all__ = ["ExcelWriteReportBlock"]

DEFAULT_OUTPUT_NAME = "report.xlsx"
MAX_SHEET_NAME = 31
MAX_ROWS = EXCEL_LAST_ROW - 2  # less a title and a header
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")
_SHEET_HINT = "sheets は [{name: シート名, rows: レコードのリスト, title: 表題, columns: [列名...]}] の形で指定してください。"


class ExcelWriteReportBlock(ProcessingBlock):
    """Writes ``sheets`` (and ``images``) into a new workbook; returns ``report``."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        sheets = _sheets(inputs.get("sheets"), [])
        _images(inputs.get("images"), sheets)
        _output_suffix(inputs.get("output_path"))

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        warnings: list[str] = []
        sheets = _sheets(inputs.get("sheets"), warnings)
        amounts = AmountFormat.of(ctx.settings)
        for sheet in sheets:
            sheet.amounts = amounts
        images = _images(inputs.get("images"), sheets)
        target = _output_path(inputs.get("output_path"), bool(inputs.get("overwrite")), ctx)
        with streamed_workbook(target, prefix=ctx.claim_output(target)) as book:
            written = {}
            for sheet in sheets:
                ctx.check_cancelled()
                written[sheet.name] = book.create_sheet(sheet.name)
                write_sheet(written[sheet.name], sheet, ctx.check_cancelled)
                warnings.extend(sheet.warnings)
            for spec in images:
                ctx.check_cancelled()
                # Read where the run may read (the path input of a generated plan, or a var).
                spec["path"] = ctx.access.read(spec["path"], spec["field"])
                add_image(written[spec["sheet"].name], spec)
        total = sum(_count(s.rows) for s in sheets)
        ctx.log(f"{target.name} に {len(sheets)} シート（計 {total:,} 行）の報告書を作成しました")
        return {
            "report": {
                "output_path": str(target),
                "sheets": [
                    {"name": s.name, "rows": _count(s.rows), "columns": s.columns} for s in sheets
                ],
                "images": len(images),
                "warnings": warnings,
            }
        }


# --- inputs -----------------------------------------------------------------------------------


def _sheets(raw: Any, warnings: list[str]) -> list[ReportSheet]:
    if not isinstance(raw, list) or not raw:
        raise input_error("書き出す表（sheets）が指定されていません。", _SHEET_HINT, field="sheets")
    used: set[str] = set()
    sheets = []
    for index, item in enumerate(raw):
        where = f"sheets[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise input_error(f"{where} にシート名（name）がありません。", _SHEET_HINT, field=where)
        given = item["name"]
        source = item.get("rows")
        # A table stays one (its records are made while it is written); anything else is read
        # as records.
        rows: Table | list[dict[str, Any]] | None = (
            source
            if source is None or isinstance(source, Table)
            else records_from(source, field=f"{where}.rows")
        )
        units = dict(source.units) if isinstance(source, Table) else {}
        if _count(rows) > MAX_ROWS:
            raise input_error(
                f"シート「{given}」の表が Excel の行数の上限を超えます（{_count(rows):,} 行）。",
                f"1 シート {MAX_ROWS:,} 行までです。期間や部門で分けて複数のシートにしてください。",
                field=f"{where}.rows",
            )
        explicit = item.get("columns") is not None
        available = _columns(rows)
        if explicit:
            columns = column_list(item["columns"], field=f"{where}.columns")
            _require(available, columns, given, f"{where}.columns")
        else:
            columns = available or []
        formats = item.get("number_formats") or {}
        if not isinstance(formats, Mapping) or not all(
            isinstance(v, str) for v in formats.values()
        ):
            raise input_error(
                f"{where}.number_formats は {{列名: 表示形式}} の形で指定してください。",
                '例: number_formats: {金額: "#,##0", 率: "0.0%"}',
                field=f"{where}.number_formats",
            )
        _require(None if available is None else columns, formats, given, f"{where}.number_formats")
        title = item.get("title")
        name = _sheet_name(given, index, used, warnings)
        sheets.append(
            ReportSheet(
                given,
                name,
                rows,
                columns,
                str(title) if title else None,
                dict(formats),
                explicit,
                units={c: u for c, u in units.items() if c in columns},
            )
        )
    return sheets


def _count(rows: Table | list[dict[str, Any]] | None) -> int:
    return 0 if rows is None else len(rows)


def _columns(rows: Table | list[dict[str, Any]] | None) -> list[str] | None:
    """The columns of a table with rows (None without: nothing is required of it)."""
    if not rows:
        return None
    return rows.columns if isinstance(rows, Table) else columns_of(rows)


def _require(available: list[str] | None, columns: Any, sheet: str, field: str) -> None:
    """Every one of ``columns`` among ``available`` (None: an empty table, nothing to check)."""
    if available is None:
        return
    missing = [str(c) for c in columns if c not in available]
    if missing:
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


def _images(raw: Any, sheets: list[ReportSheet]) -> list[dict[str, Any]]:
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
        found.append({"sheet": sheet, "path": item["path"], "field": f"{where}.path", "cell": cell})
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
