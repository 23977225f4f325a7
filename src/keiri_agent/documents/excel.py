"""ExcelManager (seed 002 §2): read sheets and ranges to records, write into a copy.

Reading uses cached values (what Excel shows), in a memory-bounded child process. Writing
(``edit``) goes through ``excel_write.ExcelEdit``: a copy, saved atomically, the input never
touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openpyxl import Workbook

from keiri_agent.documents.bounded import run_bounded
from keiri_agent.documents.excel_address import check_excel_path, range_bounds, worksheet
from keiri_agent.documents.excel_write import ExcelEdit, WriteSummary
from keiri_agent.documents.failures import file_not_found
from keiri_agent.documents.limits import TableLimits
from keiri_agent.documents.ooxml import XML_ERRORS, open_workbook, xml_error
from keiri_agent.documents.table_infer import check_table_size, make_column_names
from keiri_agent.documents.xlsx_formulas import check_computed, recording, sheet_part
from keiri_agent.errors import input_error

__all__ = ["ExcelEdit", "ExcelManager", "WriteSummary"]


class ExcelManager:
    """One workbook on disk: read it, or edit a copy of it with :meth:`edit`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        check_excel_path(self.path)
        if not self.path.is_file():
            raise file_not_found(self.path.name, self.path)

    def _load(self, *, values: bool) -> Workbook:
        return open_workbook(
            self.path,
            self.path.name,
            read_only=values,
            data_only=values,
            keep_vba=self.path.suffix.lower() == ".xlsm" and not values,
        )

    def sheet_names(self) -> list[str]:
        return run_bounded(self._sheet_names, label=self.path.name)

    def _sheet_names(self) -> list[str]:
        workbook = self._load(values=True)
        try:
            return list(workbook.sheetnames)
        finally:
            workbook.close()

    def read_rows(
        self,
        sheet: str | int | None = None,
        *,
        cell_range: str | None = None,
        limits: TableLimits = TableLimits(),  # noqa: B008 -- frozen, shared safely
    ) -> list[list[Any]]:
        """Cell values (cached results for formulas) of a sheet or an ``A1:D20`` range.

        A formula in it saved without its result is refused with its cell named
        (``xlsx_formulas.check_computed``), not read as a blank.

        Read in a bounded child (``bounded.run_bounded``); a sheet or range over ``limits``
        is refused (FILE_TOO_LARGE) instead of being padded out to its saved dimensions.
        """
        return run_bounded(self._read_rows, sheet, cell_range, limits, label=self.path.name)

    def _read_rows(
        self, sheet: str | int | None, cell_range: str | None, limits: TableLimits
    ) -> list[list[Any]]:
        workbook = self._load(values=True)
        try:
            ws = worksheet(workbook, sheet, self.path.name)
            bounds = range_bounds(cell_range) if cell_range else None
            with recording() as formulas:  # a read-only sheet is parsed as its rows are read
                result = self._sheet_rows(ws, bounds, limits)
            part = sheet_part(self.path, ws.title)
            check_computed(formulas, part, self.path.name, ws.title, bounds)
            return result
        except XML_ERRORS as exc:  # read-only sheets are parsed while they are iterated
            raise xml_error(self.path.name, exc) from exc
        finally:
            workbook.close()

    def _sheet_rows(
        self, ws: Any, bounds: tuple[int, int, int, int] | None, limits: TableLimits
    ) -> list[list[Any]]:
        """The rows of ``ws`` (the range ``bounds`` when given), padded to one width."""
        if bounds:
            min_col, min_row, max_col, max_row = bounds
            check_table_size(self.path.name, max_row, max_col - min_col + 1, limits, sheet=ws.title)
            rows = ws.iter_rows(
                min_row=min_row,
                max_row=max_row,
                min_col=min_col,
                max_col=max_col,
                values_only=True,
            )
        else:
            # The saved dimension may claim A1:XFD1048576; rows then end at their last cell.
            read_only_sheet: Any = ws  # openpyxl's ReadOnlyWorksheet, typed as Worksheet
            read_only_sheet.reset_dimensions()
            rows = ws.iter_rows(values_only=True)
        result: list[list[Any]] = []
        width = 0
        for row in rows:
            width = max(width, len(row))
            check_table_size(self.path.name, len(result) + 1, width, limits, sheet=ws.title)
            result.append(list(row))
        return [row + [None] * (width - len(row)) for row in result]

    def read_records(
        self,
        sheet: str | int | None = None,
        *,
        cell_range: str | None = None,
        header_row: int = 1,
    ) -> list[dict[str, Any]]:
        """Rows below ``header_row`` (1-based, within the range) as dicts keyed by header.

        Fully empty rows are left out; blank or repeated header names become ``列N`` /
        ``name_2`` so no value is lost.
        """
        rows = self.read_rows(sheet, cell_range=cell_range)
        if header_row < 1 or header_row > len(rows):
            raise input_error(
                f"{self.path.name}: 見出し行 {header_row} が範囲外です（{len(rows)} 行）。",
                "header_row にはシート（または範囲）内の 1 始まりの行番号を指定してください。",
                file=self.path.name,
                header_row=header_row,
            )
        header = rows[header_row - 1]
        headers, _renamed = make_column_names(header, range(len(header)))
        records = []
        for row in rows[header_row:]:
            if all(value is None or value == "" for value in row):
                continue
            records.append(dict(zip(headers, row, strict=False)))
        return records

    def edit(self, output: Path | str, *, temp_prefix: str | None = None) -> ExcelEdit:
        """Start editing a copy of this workbook that will be saved as ``output`` (through a
        temporary file named ``temp_prefix*`` when given)."""
        out = Path(output)
        check_excel_path(out)
        if out.resolve() == self.path.resolve():
            raise input_error(
                f"入力ファイル {self.path.name} を上書きすることはできません。",
                "出力先には入力とは別のファイル名を指定してください（入力は変更しません）。",
                file=self.path.name,
            )
        return ExcelEdit(self.path, out, self._load(values=False), temp_prefix=temp_prefix)
