"""ExcelManager (seed 002 §2): read sheets and ranges to records, write into a copy.

Reading uses cached values (what Excel shows). Writing never touches the input: edits are made
on a loaded copy and saved to a temporary file next to the output, which is renamed into place
only when everything succeeded, so a failure leaves neither a half-written workbook nor a
changed input. Cells that are not written keep their formulas and styles.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from openpyxl import Workbook
from openpyxl.cell.cell import MergedCell
from openpyxl.utils import column_index_from_string, get_column_letter, range_boundaries
from openpyxl.utils.cell import coordinate_from_string
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.documents.bounded import run_bounded
from keiri_agent.documents.limits import TableLimits
from keiri_agent.documents.ooxml import XML_ERRORS, open_workbook, xml_error
from keiri_agent.documents.table_infer import check_table_size, make_column_names
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError
from keiri_agent.workspace import atomic_path

__all__ = ["ExcelEdit", "ExcelManager", "WriteSummary"]

WriteMode = Literal["append", "overwrite"]
_EXCEL_SUFFIXES = (".xlsx", ".xlsm")


@dataclass
class WriteSummary:
    """What an edit wrote: the output file, cells written per sheet, new sheets, warnings."""

    output: str
    cells_written: dict[str, int] = field(default_factory=dict)
    sheets_added: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _input_error(message: str, hint: str, **details: Any) -> BlockError:
    return BlockError(message, code=ErrorCode.INPUT_VALIDATION_FAILED, hint=hint, details=details)


def _check_excel_path(path: Path) -> None:
    if path.suffix.lower() not in _EXCEL_SUFFIXES:
        raise FileProcessingError(
            path.name,
            f"{path.name} は Excel ブック（.xlsx / .xlsm）ではありません。",
            code=ErrorCode.UNSUPPORTED_FORMAT,
            hint=".xls や .csv の場合は Excel で .xlsx 形式として保存し直してください。",
        )


class ExcelManager:
    """One workbook on disk: read it, or edit a copy of it with :meth:`edit`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        _check_excel_path(self.path)
        if not self.path.is_file():
            raise FileProcessingError(
                self.path.name,
                f"Excel ファイル {self.path} が見つかりません。",
                hint="ファイルのパスを確認してください。",
            )

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

        Read in a bounded child (``bounded.run_bounded``); a sheet or range over ``limits``
        is refused (FILE_TOO_LARGE) instead of being padded out to its saved dimensions.
        """
        return run_bounded(self._read_rows, sheet, cell_range, limits, label=self.path.name)

    def _read_rows(
        self, sheet: str | int | None, cell_range: str | None, limits: TableLimits
    ) -> list[list[Any]]:
        workbook = self._load(values=True)
        try:
            ws = _sheet(workbook, sheet, self.path.name)
            if cell_range:
                min_col, min_row, max_col, max_row = _bounds(cell_range)
                check_table_size(
                    self.path.name, max_row, max_col - min_col + 1, limits, sheet=ws.title
                )
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
        except XML_ERRORS as exc:  # read-only sheets are parsed while they are iterated
            raise xml_error(self.path.name, exc) from exc
        finally:
            workbook.close()

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
            raise _input_error(
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
        _check_excel_path(out)
        if out.resolve() == self.path.resolve():
            raise _input_error(
                f"入力ファイル {self.path.name} を上書きすることはできません。",
                "出力先には入力とは別のファイル名を指定してください（入力は変更しません）。",
                file=self.path.name,
            )
        return ExcelEdit(self, out, self._load(values=False), temp_prefix=temp_prefix)


class ExcelEdit:
    """Edits on a copy of a workbook; saved atomically on :meth:`save` (or context exit)."""

    def __init__(
        self,
        source: ExcelManager,
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
        if _has_drawings(source.path):
            self.summary.warnings.append(
                f"{source.path.name} のグラフや画像は出力ブックに引き継がれません（openpyxl の制約）。"
            )

    def __enter__(self) -> ExcelEdit:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.save()
        else:  # nothing is written when the edit failed
            self.workbook.close()

    def _ws(self, sheet: str | int | None) -> Worksheet:
        return _sheet(self.workbook, sheet, self.source.path.name)

    def _put(self, ws: Worksheet, row: int, col: int, value: Any) -> None:
        cell = ws.cell(row=row, column=col)
        if isinstance(cell, MergedCell):
            raise _input_error(
                f"{ws.title}!{cell.coordinate} は結合セルの一部のため書き込めません。",
                "結合範囲の左上のセルに書き込むか、書き込み位置（開始セル・列）を見直してください。",
                sheet=ws.title,
                cell=cell.coordinate,
            )
        cell.value = _cell_value(value)
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
        records: Sequence[Mapping[str, Any]],
        *,
        start_cell: str = "A2",
        columns: Mapping[str, str] | None = None,
        mode: WriteMode = "append",
    ) -> int:
        """Write records as rows. ``columns`` maps record keys to column letters (default:
        consecutive columns from ``start_cell`` in key order); ``append`` starts below the last
        used row of those columns, ``overwrite`` at ``start_cell``. Returns the first row written.
        """
        ws = self._ws(sheet)
        start_col_letter, start_row = coordinate_from_string(start_cell)
        mapping = dict(columns) if columns else _default_columns(records, start_col_letter)
        targets = {key: column_index_from_string(letter) for key, letter in mapping.items()}
        row = start_row
        if mode == "append":
            row = max(start_row, _last_used_row(ws, targets.values()) + 1)
        elif mode != "overwrite":
            raise _input_error(
                f"書き込みモード '{mode}' は使えません。",
                "mode には append か overwrite を指定してください。",
                mode=mode,
            )
        first = row
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
            raise _input_error(
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


def _sheet(workbook: Workbook, sheet: str | int | None, file: str) -> Worksheet:
    names = workbook.sheetnames
    if sheet is None:
        ws = workbook.worksheets[0]
    elif isinstance(sheet, int):
        if not 0 <= sheet < len(names):
            raise _input_error(
                f"{file}: シート番号 {sheet} はありません（シート数 {len(names)}）。",
                f"0 から {len(names) - 1} の番号か、シート名（{', '.join(names)}）を指定してください。",
                file=file,
                sheet=sheet,
            )
        ws = workbook.worksheets[sheet]
    elif sheet in names:
        ws = workbook[sheet]
    else:
        raise _input_error(
            f"{file}: シート '{sheet}' が見つかりません。",
            f"存在するシート: {', '.join(names)}",
            file=file,
            sheet=sheet,
        )
    if not hasattr(ws, "iter_rows"):  # a chart sheet; read-only sheets are another class
        raise _input_error(
            f"{file}: '{ws.title}' はワークシートではありません（グラフシートなど）。",
            "データのあるワークシートを指定してください。",
            file=file,
        )
    return ws


def _bounds(cell_range: str) -> tuple[int, int, int, int]:
    try:
        min_col, min_row, max_col, max_row = range_boundaries(cell_range)
    except ValueError as exc:
        raise _input_error(
            f"セル範囲 '{cell_range}' を解釈できません。",
            "A1:D20 のような形式で指定してください。",
            range=cell_range,
        ) from exc
    if None in (min_col, min_row, max_col, max_row):
        raise _input_error(
            f"セル範囲 '{cell_range}' は行と列の両端を含む必要があります。",
            "A1:D20 のような形式で指定してください。",
            range=cell_range,
        )
    return int(min_col or 0), int(min_row or 0), int(max_col or 0), int(max_row or 0)


def _keys_in_order(records: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    seen: dict[str, None] = {}
    for record in records:
        for key in record:
            seen.setdefault(key, None)
    yield from seen


def _default_columns(records: Sequence[Mapping[str, Any]], start: str) -> dict[str, str]:
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
