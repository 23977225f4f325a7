"""``excel.read_data``: a sheet or a cell range of a workbook as records.

Cells are read through :class:`ExcelManager` (cached values: what Excel shows, formulas as
their results). The header row is given (1-based within the range), not guessed: this block is
for workbooks whose layout the plan knows; ``file.read_table`` guesses. Blank or repeated
header names get the file layer's names (``列3``, ``金額_2``) and a warning; a column with no
header and no value (formatting that reaches beyond the table) is left out. Dates and times
become ISO strings, whole-number floats integers. ``rows`` is a table that remembers the sheet
row of each row (errors downstream name the cell: ``D12 セル``).
"""

from __future__ import annotations

from typing import Any

from openpyxl.utils import get_column_letter

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, given
from keiri_agent.blocks.inputs import port_file, port_path, row_number, sheet_ref
from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.documents import ExcelManager
from keiri_agent.documents.excel_address import range_bounds
from keiri_agent.documents.table_infer import make_column_names
from keiri_agent.documents.table_value import Table, TableOrigin
from keiri_agent.errors import input_error

__all__ = ["ExcelReadDataBlock"]


class ExcelReadDataBlock(ProcessingBlock):
    """Reads ``path`` (one sheet or range) into ``rows`` and a ``summary``."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        port_path(self.spec, "path", inputs.get("path"))
        sheet_ref(inputs.get("sheet"))
        _header_row(given(inputs, "header_row", 1))
        _range(inputs.get("range"))

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        path = port_file(self.spec, "path", inputs.get("path"), ctx=ctx)
        sheet = sheet_ref(inputs.get("sheet"))
        header_row = _header_row(given(inputs, "header_row", 1))
        cell_range = _range(inputs.get("range"))
        skip_empty = bool(given(inputs, "skip_empty_rows", True))
        manager = ExcelManager(path)
        ctx.check_cancelled()
        grid = manager.read_rows(sheet, cell_range=cell_range)
        sheet_name = sheet if isinstance(sheet, str) else manager.sheet_names()[sheet or 0]
        where = f"{path.name} のシート「{sheet_name}」" + (
            f"（{cell_range}）" if cell_range else ""
        )
        if header_row > len(grid):
            raise input_error(
                f"{where}に見出し行 {header_row} がありません（{len(grid)} 行しかありません）。",
                "header_row には見出しのある行の番号（range を指定したときは範囲内で 1 始まり）を指定してください。",
                field="header_row",
                file=path.name,
                sheet=sheet_name,
                rows=len(grid),
            )
        header = grid[header_row - 1]
        if all(_blank(v) for v in header):
            raise input_error(
                f"{where}の見出し行 {header_row} が空です。",
                "header_row に列名が書かれた行の番号を指定してください（range を指定したときは範囲内で 1 始まり）。",
                field="header_row",
                file=path.name,
                sheet=sheet_name,
            )
        first_col, first_row = range_bounds(cell_range)[:2] if cell_range else (1, 1)
        numbered = [
            (first_row + header_row + offset, row)
            for offset, row in enumerate(grid[header_row:])
            if not (skip_empty and all(_blank(v) for v in row))
        ]
        body = [row for _n, row in numbered]
        names, renamed = make_column_names(header, range(len(header)))
        keep = [
            j
            for j, cell in enumerate(header)
            if not _blank(cell) or any(j < len(row) and not _blank(row[j]) for row in body)
        ]
        records = [
            {names[j]: json_cell(row[j]) if j < len(row) else None for j in keep} for row in body
        ]
        columns = [names[j] for j in keep]
        # Each row remembers its sheet row, so a block downstream names a cell as Excel shows it.
        origin = TableOrigin(
            path.name,
            "row",
            sheet_name,
            {names[j]: get_column_letter(first_col + j) for j in keep},
        )
        rows = Table(
            Table.from_records(records, columns=columns).frame,
            origin=origin,
            positions=[n for n, _row in numbered],
        )
        warnings = []
        shown = [name for name in renamed if name in columns]
        if shown:
            warnings.append(
                f"見出しが空または重複していた列に次の名前を付けました: {', '.join(shown)}"
            )
        ctx.log(f"{where}から {len(rows)} 行 × {len(columns)} 列を読み込みました")
        return {
            "rows": rows,
            "summary": {
                "path": str(path),
                "sheet": sheet_name,
                "range": cell_range,
                "header_row": header_row,
                "rows": len(rows),
                "columns": columns,
                "warnings": warnings,
            },
        }


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _header_row(value: Any) -> int:
    return row_number(
        value,
        "header_row",
        "header_row には見出しのある行の番号（1 始まり、range を指定したときは範囲内）を指定してください。",
    )


def _range(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        return value.strip().upper().replace("$", "")
    raise input_error(
        f"range '{value}' はセル範囲ではありません。",
        "range は A1:D20 のような形式で指定してください（省略時はシート全体）。",
        field="range",
    )
