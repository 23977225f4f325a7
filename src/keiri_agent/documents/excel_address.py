"""Where in a workbook: the file's type, the sheet and the cell range a caller names.

Reading (``excel.ExcelManager``) and writing (``excel_write.ExcelEdit``) address a workbook
the same way, and refuse a wrong address with the same Japanese errors.
"""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook
from openpyxl.utils import range_boundaries
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.documents.failures import unsupported
from keiri_agent.errors import input_error

__all__ = [
    "EXCEL_LAST_ROW",
    "check_excel_path",
    "first_shown",
    "range_bounds",
    "worksheet",
]

_EXCEL_SUFFIXES = (".xlsx", ".xlsm")
EXCEL_LAST_ROW = 1_048_576  # a worksheet's last row, fixed by the file format


def check_excel_path(path: Path) -> None:
    if path.suffix.lower() not in _EXCEL_SUFFIXES:
        raise unsupported(
            path.name,
            f"{path.name} は Excel ブック（.xlsx / .xlsm）ではありません。",
            ".xls や .csv の場合は Excel で .xlsx 形式として保存し直してください。",
        )


def first_shown(workbook: Workbook) -> Worksheet:
    """The sheet a workbook opens to when no sheet is named: its first visible worksheet (a
    hidden or very hidden sheet of settings or master data is not the table), else its first."""
    sheets = workbook.worksheets
    return next((ws for ws in sheets if ws.sheet_state == "visible"), sheets[0])


def worksheet(workbook: Workbook, sheet: str | int | None, file: str) -> Worksheet:
    names = workbook.sheetnames
    if sheet is None:
        ws = first_shown(workbook)
    elif isinstance(sheet, int):
        if not 0 <= sheet < len(names):
            raise input_error(
                f"{file}: シート番号 {sheet} はありません（シート数 {len(names)}）。",
                f"0 から {len(names) - 1} の番号か、シート名（{', '.join(names)}）を指定してください。",
                file=file,
                sheet=sheet,
            )
        ws = workbook.worksheets[sheet]
    elif sheet in names:
        ws = workbook[sheet]
    else:
        raise input_error(
            f"{file}: シート '{sheet}' が見つかりません。",
            f"存在するシート: {', '.join(names)}",
            file=file,
            sheet=sheet,
        )
    if not hasattr(ws, "iter_rows"):  # a chart sheet; read-only sheets are another class
        raise input_error(
            f"{file}: '{ws.title}' はワークシートではありません（グラフシートなど）。",
            "データのあるワークシートを指定してください。",
            file=file,
        )
    return ws


def range_bounds(cell_range: str) -> tuple[int, int, int, int]:
    try:
        min_col, min_row, max_col, max_row = range_boundaries(cell_range)
    except ValueError as exc:
        raise input_error(
            f"セル範囲 '{cell_range}' を解釈できません。",
            "A1:D20 のような形式で指定してください。",
            range=cell_range,
        ) from exc
    if None in (min_col, min_row, max_col, max_row):
        raise input_error(
            f"セル範囲 '{cell_range}' は行と列の両端を含む必要があります。",
            "A1:D20 のような形式で指定してください。",
            range=cell_range,
        )
    return int(min_col or 0), int(min_row or 0), int(max_col or 0), int(max_row or 0)
