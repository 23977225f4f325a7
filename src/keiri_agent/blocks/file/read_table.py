"""``file.read_table``: a CSV/TSV/Excel table, read as a person would read it.

A thin block over :func:`keiri_agent.documents.read_table`: the file layer detects the encoding
(UTF-8, Shift_JIS...), the delimiter and the header row, skips title rows, sets total rows
aside (``totals``) and reads amounts and dates in the forms ledgers use; its errors reach the
user unchanged. ``rows`` is a :class:`~keiri_agent.documents.table_value.Table` that remembers
the file line (or sheet row) of each row, so blocks downstream name cells as the user finds
them. ``info`` reports every decision, with rows numbered from 1 as in Excel or an editor.
A file whose grand total (合計) is not the sum of its amount rows stops the block
(``read_table_totals``: an unlabelled subtotal would be summed twice downstream), unless
``total_check: warn``.
"""

from __future__ import annotations

from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.file.read_table_totals import check_totals, total_check
from keiri_agent.blocks.inputs import port_file, port_path, row_number, sheet_ref
from keiri_agent.blocks.table.records import column_list
from keiri_agent.documents import read_table

__all__ = ["ReadTableBlock"]


class ReadTableBlock(ProcessingBlock):
    """Reads ``path`` into ``rows`` (records) and ``info`` (what was decided)."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        port_path(self.spec, "path", inputs.get("path"))
        _header_row(inputs.get("header_row"))
        sheet_ref(inputs.get("sheet"))
        total_check(inputs)
        if inputs.get("columns") is not None:
            column_list(inputs["columns"], field="columns")

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        path = port_file(self.spec, "path", inputs.get("path"), ctx=ctx)
        header_row = _header_row(inputs.get("header_row"))
        check = total_check(inputs)
        wanted = inputs.get("columns")
        columns = None if wanted is None else column_list(wanted, field="columns")
        ctx.check_cancelled()
        result = read_table(
            path,
            sheet=sheet_ref(inputs.get("sheet")),
            encoding=inputs.get("encoding") or None,
            delimiter=inputs.get("delimiter") or None,
            header_row=None if header_row is None else header_row - 1,
            columns=columns,
            zone=ctx.zone,
        )
        for warning in result.info.warnings:
            ctx.log(warning, level="warning")
        differences = check_totals(result, check, ctx)
        table = result.table()
        info = result.info.to_dict()
        if differences:
            info["total_differences"] = differences  # only when there are any, as ``footer``
        if info["header_row"] is not None:
            info["header_row"] += 1  # 1-based, as in the input and in Excel
        info["columns"] = table.columns
        ctx.log(
            f"{path.name} から {len(table):,} 行 × {len(info['columns'])} 列を読み込みました"
            + (f"（文字コード {info['encoding']}）" if info.get("encoding") else "")
            + (f"（シート「{info['sheet']}」）" if info.get("sheet") else "")
        )
        return {"rows": table, "info": info, "totals": result.totals_table()}


def _header_row(value: Any) -> int | None:
    if value is None:
        return None
    return row_number(
        value,
        "header_row",
        "header_row には見出しのある行の番号（1 始まり）を指定するか、省略して自動判定にしてください。",
    )
