"""``excel.write``: write records into a copy of a workbook (seed 002 §5, ``write_excel``).

The source workbook is only read: :meth:`ExcelManager.edit` loads it and saves the result
atomically to another file (by default ``<stem>_output.xlsx`` in the node's work directory),
so a failure leaves neither a half-written output nor a changed input.

Columns come from ``output_config.column_mapping`` (record key → column letter or header
text); without one, records are matched to the header row when every key is a header there,
and written to consecutive columns from ``start_cell`` otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import output_file, port_file, port_path
from keiri_agent.blocks.table.records import Table, columns_of, records_from
from keiri_agent.documents.excel import ExcelManager
from keiri_agent.errors import input_error

__all__ = ["CONFIG_KEYS", "ExcelWriteBlock"]

CONFIG_KEYS = ("sheet", "start_cell", "column_mapping", "header_row", "mode", "output_path")
DEFAULT_START_CELL = "A1"
MODES = ("append", "overwrite")
_CELL_RE = re.compile(r"[A-Za-z]{1,3}[1-9][0-9]*")
_LETTERS_RE = re.compile(r"[A-Za-z]{1,3}")
_MAX_COLUMN = 16_384  # XFD, the last column Excel has


class ExcelWriteBlock(ProcessingBlock):
    """Writes ``data`` into a sheet of a copy of ``workbook``; returns ``write_summary``."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        port_path(self.spec, "workbook", inputs.get("workbook"))
        _records(inputs.get("data"))
        _config(inputs.get("output_config"))

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = _records(inputs.get("data"))
        config = _config(inputs.get("output_config"))
        manager = ExcelManager(port_file(self.spec, "workbook", inputs.get("workbook"), ctx=ctx))
        output = _output_path(manager.path, config.get("output_path"), ctx)
        ctx.check_cancelled()
        warnings: list[str] = []
        # On an exception inside the block the edit is discarded (nothing is written).
        with manager.edit(output, temp_prefix=ctx.claim_output(output)) as edit:
            ws = _worksheet(edit.workbook, config.get("sheet"), manager.path.name)
            columns = _columns(ws, records, config, warnings)
            first_row = edit.write_records(
                ws.title,
                records,
                start_cell=config["start_cell"],
                columns=columns,
                mode=config["mode"],
            )
        if not records:
            warnings.append("書き込むデータが 0 件だったため、元のブックをそのまま複製しました。")
        warnings.extend(edit.summary.warnings)
        ctx.log(f"{output.name} のシート「{ws.title}」に {len(records)} 行を書き込みました")
        return {
            "write_summary": {
                "output_path": str(output),
                "sheet": ws.title,
                "rows_written": len(records),
                "mode": config["mode"],
                "first_row": first_row,
                "columns": columns,
                "warnings": warnings,
            }
        }


def _records(data: Any) -> Table | list[dict[str, Any]]:
    """A table as it is (its records are made a chunk at a time while written), else records."""
    return data if isinstance(data, Table) else records_from(data, field="data")


def _config(raw: Any) -> dict[str, Any]:
    """``output_config`` checked, with start_cell / mode / header_row defaults filled in."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise input_error(
            "output_config がオブジェクトではありません。",
            "output_config は {sheet: ..., start_cell: ..., mode: ...} の形で指定してください。",
            field="output_config",
        )
    unknown = sorted(str(k) for k in raw if k not in CONFIG_KEYS)
    if unknown:
        raise input_error(
            f"output_config に使えない設定があります: {', '.join(unknown)}",
            f"使える設定は {', '.join(CONFIG_KEYS)} です（綴りを確認してください）。",
            field="output_config",
            unknown=unknown,
        )
    config = {"start_cell": DEFAULT_START_CELL, "mode": "append", "header_row": 1, **raw}
    if not isinstance(config["start_cell"], str) or not _CELL_RE.fullmatch(config["start_cell"]):
        raise input_error(
            f"start_cell '{config['start_cell']}' はセル番地ではありません。",
            "start_cell は A1、B3 のようなセル番地で指定してください。",
            field="output_config.start_cell",
        )
    config["start_cell"] = config["start_cell"].upper()
    if config["mode"] not in MODES:
        raise input_error(
            f"mode '{config['mode']}' は使えません。",
            "mode には append（追記）か overwrite（上書き）を指定してください。",
            field="output_config.mode",
        )
    header_row = config["header_row"]
    if isinstance(header_row, bool) or not isinstance(header_row, int) or header_row < 1:
        raise input_error(
            f"header_row '{header_row}' は 1 以上の行番号ではありません。",
            "header_row には見出しのある行の番号（1 始まり）を指定してください。",
            field="output_config.header_row",
        )
    mapping = config.get("column_mapping")
    if mapping is not None and (
        not isinstance(mapping, Mapping)
        or not all(isinstance(v, str) and v.strip() for v in mapping.values())
    ):
        raise input_error(
            "column_mapping は {レコードのキー: 列記号または見出し名} の形で指定してください。",
            '例: column_mapping: {amount: "C", vendor: "取引先"}',
            field="output_config.column_mapping",
        )
    return config


def _output_path(source: Path, given: Any, ctx: BlockContext) -> Path:
    # Relative outputs stay inside this run's files rather than wherever the process started.
    default = f"{source.stem}_output{source.suffix.lower()}"
    return output_file(given, ctx, default, "output_config.output_path")


def _worksheet(workbook: Workbook, sheet: Any, file: str) -> Worksheet:
    names = list(workbook.sheetnames)
    if sheet is None:
        chosen = workbook.worksheets[0]
    elif isinstance(sheet, int) and not isinstance(sheet, bool) and 0 <= sheet < len(names):
        chosen = workbook.worksheets[sheet]
    elif isinstance(sheet, str) and sheet in names:
        chosen = workbook[sheet]
    else:
        raise input_error(
            f"{file} にシート '{sheet}' がありません。",
            f"sheet には存在するシート名（{', '.join(names)}）か 0 始まりの番号を指定してください。",
            field="output_config.sheet",
            sheets=names,
        )
    if not isinstance(chosen, Worksheet):  # a chart sheet
        raise input_error(
            f"{file} の '{chosen.title}' はワークシートではありません。",
            "データを書き込めるワークシートを指定してください。",
            field="output_config.sheet",
        )
    return chosen


def _headers(ws: Worksheet, row: int) -> dict[str, str]:
    """Header text → column letter for the header row (first occurrence wins)."""
    found: dict[str, str] = {}
    for cells in ws.iter_rows(min_row=row, max_row=row):
        for cell in cells:
            if cell.value not in (None, "") and cell.column is not None:
                found.setdefault(str(cell.value).strip(), get_column_letter(cell.column))
    return found


def _columns(
    ws: Worksheet,
    records: Table | list[dict[str, Any]],
    config: Mapping[str, Any],
    warnings: list[str],
) -> dict[str, str]:
    """Record key → column letter, from column_mapping, the header row or start_cell."""
    headers = _headers(ws, config["header_row"])
    if isinstance(records, Table):
        keys = records.columns if len(records) else []
    else:
        keys = columns_of(records)
    mapping: Mapping[str, str] | None = config.get("column_mapping")
    if not mapping:
        if keys and headers and all(str(key) in headers for key in keys):
            return {key: headers[str(key)] for key in keys}
        first = column_index_from_string(re.sub(r"\d", "", config["start_cell"]))
        return {key: get_column_letter(first + offset) for offset, key in enumerate(keys)}
    columns: dict[str, str] = {}
    unknown: list[str] = []
    for key, target in mapping.items():
        text = target.strip()
        if text in headers:  # a header wins over a letter-like name such as "ID"
            columns[key] = headers[text]
        elif _LETTERS_RE.fullmatch(text) and column_index_from_string(text.upper()) <= _MAX_COLUMN:
            columns[key] = text.upper()
        else:
            unknown.append(text)
    if unknown:
        shown = ", ".join(headers) or "なし"
        raise input_error(
            f"column_mapping の列 {', '.join(unknown)} がシート「{ws.title}」の"
            f" {config['header_row']} 行目の見出しにも列記号にも当たりません。",
            f"列記号（A、B…）か、見出し行にある名前を指定してください（見出し: {shown}）。",
            field="output_config.column_mapping",
            unknown=unknown,
            headers=list(headers),
        )
    absent = [key for key in columns if records and key not in keys]
    if absent:
        warnings.append(
            f"column_mapping のキー {', '.join(absent)} はどのレコードにもないため、空欄で書き込みました。"
        )
    return columns
