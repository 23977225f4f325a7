"""Edits on a copy of a workbook (``ExcelManager.edit``), saved atomically.

Writing never touches the input: edits are made on a loaded copy and saved to a temporary
file next to the output, which is renamed into place only when everything succeeded, so a
failure leaves neither a half-written workbook nor a changed input. Cells that are not
written keep their formulas and styles; a cell written a number Excel's General format would
show as ``1.23457E+12`` (a 13-digit 法人番号) is given the format ``0``, as the report writer
does (``amount_format.shows_exponent``).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from openpyxl import Workbook
from openpyxl.cell.cell import MergedCell
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.utils.cell import coordinate_from_string
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.documents.amount_format import DIGITS_FORMAT, shows_exponent
from keiri_agent.documents.excel_address import EXCEL_LAST_ROW, worksheet
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import input_error
from keiri_agent.workspace import atomic_path

__all__ = ["ExcelEdit", "WriteMode", "WriteSummary"]

WriteMode = Literal["append", "overwrite"]


@dataclass
class WriteSummary:
    """What an edit wrote: the output file, cells written per sheet, new sheets, warnings."""

    output: str
    cells_written: dict[str, int] = field(default_factory=dict)
    sheets_added: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class ExcelEdit:
    """Edits on a copy of a workbook; saved atomically on :meth:`save` (or context exit)."""

    def __init__(
        self,
        source: Path,
        output: Path,
        workbook: Workbook,
        *,
        temp_prefix: str | None = None,
    ) -> None:
        self.temp_prefix = temp_prefix
        self.source = source
        self.output = output
        self.workbook = workbook
        self.summary = WriteSummary(output=str(output))
        if _has_drawings(source):
            self.summary.warnings.append(
                f"{source.name} のグラフや画像は出力ブックに引き継がれません（openpyxl の制約）。"
            )

    def __enter__(self) -> ExcelEdit:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_exc_info: object) -> None:
        if exc_type is None:
            self.save()
        else:  # nothing is written when the edit failed
            self.workbook.close()

    def _ws(self, sheet: str | int | None) -> Worksheet:
        return worksheet(self.workbook, sheet, self.source.name)

    def _put(self, ws: Worksheet, row: int, col: int, value: Any) -> None:
        cell = ws.cell(row=row, column=col)
        if isinstance(cell, MergedCell):
            raise input_error(
                f"{ws.title}!{cell.coordinate} は結合セルの一部のため書き込めません。",
                "結合範囲の左上のセルに書き込むか、書き込み位置（開始セル・列）を見直してください。",
                sheet=ws.title,
                cell=cell.coordinate,
            )
        cell.value = _cell_value(value)
        if cell.number_format == "General" and shows_exponent(value):
            cell.number_format = DIGITS_FORMAT  # a 法人番号 with every digit, not 1.23457E+12
        self.summary.cells_written[ws.title] = self.summary.cells_written.get(ws.title, 0) + 1

    def set_cell(self, sheet: str | int | None, coordinate: str, value: Any) -> None:
        ws = self._ws(sheet)
        column, row = coordinate_from_string(coordinate)
        self._put(ws, row, column_index_from_string(column), value)

    def set_column(
        self, sheet: str | int | None, column: str, values: Sequence[Any], *, start_row: int = 1
    ) -> None:
        ws = self._ws(sheet)
        col = column_index_from_string(column)
        for offset, value in enumerate(values):
            self._put(ws, start_row + offset, col, value)

    def set_row(
        self, sheet: str | int | None, row: int, values: Sequence[Any], *, start_column: str = "A"
    ) -> None:
        ws = self._ws(sheet)
        first = column_index_from_string(start_column)
        for offset, value in enumerate(values):
            self._put(ws, row, first + offset, value)

    def write_records(
        self,
        sheet: str | int | None,
        records: Sequence[Mapping[str, Any]] | Table,
        *,
        start_cell: str = "A2",
        columns: Mapping[str, str] | None = None,
        mode: WriteMode = "append",
    ) -> int:
        """Write records (or a table's rows, made into records a chunk at a time) as rows.
        ``columns`` maps record keys to column letters (default: consecutive columns from
        ``start_cell`` in key order); ``append`` starts below the last used row of those
        columns, ``overwrite`` at ``start_cell``. Returns the first row written.
        """
        ws = self._ws(sheet)
        start_col_letter, start_row = coordinate_from_string(start_cell)
        mapping = dict(columns) if columns else _default_columns(records, start_col_letter)
        targets = {key: column_index_from_string(letter) for key, letter in mapping.items()}
        row = start_row
        if mode == "append":
            row = max(start_row, _last_used_row(ws, targets.values()) + 1)
        elif mode != "overwrite":
            raise input_error(
                f"書き込みモード '{mode}' は使えません。",
                "mode には append か overwrite を指定してください。",
                mode=mode,
            )
        first = row
        last = first + len(records) - 1
        if last > EXCEL_LAST_ROW:
            raise input_error(
                f"シート「{ws.title}」の {first:,} 行目から {len(records):,} 行を書くと、"
                f"Excel の最終行（{EXCEL_LAST_ROW:,} 行目）を超えます。",
                "データを期間や部門で分けて別のシートやブックに書き込むか、書き込み位置"
                "（start_cell）を見直してください。",
                sheet=ws.title,
                first_row=first,
                rows=len(records),
            )
        for record in records:
            for key, col in targets.items():
                self._put(ws, row, col, record.get(key))
            row += 1
        return first

    def append_sheet(
        self,
        name: str,
        records: Sequence[Mapping[str, Any]],
        *,
        headers: Sequence[str] | None = None,
    ) -> None:
        """Add a new sheet with a header row and one row per record."""
        if name in self.workbook.sheetnames:
            raise input_error(
                f"シート '{name}' は既に存在します。",
                "別のシート名を指定するか、既存シートへは write_records で書き込んでください。",
                sheet=name,
            )
        ws = self.workbook.create_sheet(title=name)
        keys = list(headers) if headers else list(_keys_in_order(records))
        for col, key in enumerate(keys, start=1):
            self._put(ws, 1, col, key)
        for row, record in enumerate(records, start=2):
            for col, key in enumerate(keys, start=1):
                self._put(ws, row, col, record.get(key))
        self.summary.sheets_added.append(name)

    def save(self) -> WriteSummary:
        """Save to a temporary file beside the output, then rename it into place."""
        self.output.parent.mkdir(parents=True, exist_ok=True)
        try:
            with atomic_path(
                self.output, suffix=self.output.suffix, prefix=self.temp_prefix
            ) as tmp:
                self.workbook.save(tmp)
        finally:
            self.workbook.close()
        return self.summary


def _keys_in_order(records: Sequence[Mapping[str, Any]] | Table) -> Iterator[str]:
    if isinstance(records, Table):
        yield from records.columns if len(records) else []
        return
    seen: dict[str, None] = {}
    for record in records:
        for key in record:
            seen.setdefault(key, None)
    yield from seen


def _default_columns(records: Sequence[Mapping[str, Any]] | Table, start: str) -> dict[str, str]:
    first = column_index_from_string(start)
    return {
        key: get_column_letter(first + offset) for offset, key in enumerate(_keys_in_order(records))
    }


def _last_used_row(ws: Worksheet, columns: Iterable[int]) -> int:
    cols = set(columns)
    last = 0
    for row in ws.iter_rows():
        for cell in row:
            if cell.column in cols and cell.value not in (None, ""):
                last = max(last, cell.row)
    return last


def _cell_value(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool | date | datetime):
        return value
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _has_drawings(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return any(
                name.startswith(("xl/drawings/", "xl/charts/")) for name in archive.namelist()
            )
    except zipfile.BadZipFile:
        return False
