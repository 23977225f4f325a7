"""Writers behind ``formats.write_table``: Excel, Parquet and JSON/JSONL, and the cell rules.

Parquet and JSON writers fill a temporary path that ``write_table`` moves into place. Excel is
written row by row through ``documents.excel_stream.streamed_workbook``, which saves it
atomically itself and removes openpyxl's per-sheet temporary files when writing fails (bold
header, date-only columns formatted as dates, text cells stored as text so "=..." never becomes
a formula, time zones dropped keeping the wall-clock time since Excel has none; text with
control characters Excel cannot hold is refused, not altered); Parquet stores columns that mix numbers and text as text; JSON is
written with Python's ``json`` (exact floats, ``ensure_ascii=False``, ISO 8601 datetimes).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import Cell
from openpyxl.styles import Font
from openpyxl.utils.exceptions import IllegalCharacterError

from keiri_agent.agents.convert.models import UnsupportedFormatError
from keiri_agent.documents.excel_address import EXCEL_LAST_ROW
from keiri_agent.documents.excel_stream import streamed_workbook
from keiri_agent.errors import ErrorCode, FileProcessingError, reason_of

__all__ = [
    "EXCEL_MAX_COLUMNS",
    "EXCEL_MAX_ROWS",
    "check_unique_columns",
    "nested_as_json",
    "write_json",
    "write_parquet",
    "write_xlsx",
]

EXCEL_MAX_ROWS = EXCEL_LAST_ROW  # header included
EXCEL_MAX_COLUMNS = 16_384


def check_unique_columns(frame: pd.DataFrame, fmt: str, path: Path) -> None:
    duplicated = sorted(set(frame.columns[frame.columns.duplicated()]))
    if duplicated:
        raise FileProcessingError(
            path.name,
            f"列名が重複しているため {fmt} に書き出せません: {', '.join(duplicated)}",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="重複している列の名前を変えてから変換してください。",
            details={"columns": duplicated},
        )


def _is_nested(value: Any) -> bool:
    return isinstance(value, list | dict | tuple)


def _object_columns(frame: pd.DataFrame) -> Iterator[tuple[int, pd.Series]]:
    # By position: CSV and Excel allow repeated column names.
    for i in range(frame.shape[1]):
        series = frame.iloc[:, i]
        if pd.api.types.is_object_dtype(series):
            yield i, series


def nested_as_json(frame: pd.DataFrame) -> pd.DataFrame:
    for i, series in list(_object_columns(frame)):
        if series.map(_is_nested).any():
            frame.isetitem(i, series.map(_nested_text).to_numpy(dtype=object))
    return frame


def _dates_only(series: pd.Series) -> bool:
    """A datetime column whose values all fall on midnight (dates, not times)."""
    if not pd.api.types.is_datetime64_any_dtype(series):
        return False
    present = series.dropna()
    return bool((present.dt.normalize() == present).all())


def _nested_text(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False, default=str) if _is_nested(value) else value


def _text_or_none(value: Any) -> str | None:
    return None if _cell(value) is None else str(value)


def _cell(value: Any) -> Any:
    """A value openpyxl can store: no NaN/NaT, no numpy scalars, no time zones."""
    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.replace(tzinfo=None)  # Excel has no time zones: keep the wall-clock time
    if isinstance(value, str | int | float | bool | datetime | date):
        return value
    return str(value)


def write_xlsx(frame: pd.DataFrame, target: Path) -> None:
    """Write ``frame`` to ``target`` as a one-sheet workbook, atomically: on any failure
    nothing is left at ``target`` (an existing file is kept) and no temporary file remains."""
    rows, columns = frame.shape
    if rows + 1 > EXCEL_MAX_ROWS or columns > EXCEL_MAX_COLUMNS:
        raise FileProcessingError(
            target.name,
            f"表が大きすぎて Excel に書き出せません（{rows:,} 行 × {columns:,} 列、"
            f"Excel の上限は {EXCEL_MAX_ROWS - 1:,} 行 × {EXCEL_MAX_COLUMNS:,} 列）。",
            code=ErrorCode.FILE_TOO_LARGE,
            hint="CSV か Parquet に変換するか、期間などで分割してください。",
        )
    date_only = {i for i in range(columns) if _dates_only(frame.iloc[:, i])}
    bold = Font(bold=True)
    with streamed_workbook(target) as book:
        sheet = book.create_sheet("Sheet1")

        def cells(values: Iterator[Any] | list[Any], header: bool = False) -> list[Cell]:
            out = []
            for i, raw in enumerate(values):
                cell = WriteOnlyCell(sheet, value=_cell(raw))
                if isinstance(cell.value, str):
                    cell.data_type = "s"  # text stays text: "=..." is never a formula
                if header:
                    cell.font = bold
                elif i in date_only and cell.value is not None:
                    cell.number_format = "yyyy-mm-dd"
                out.append(cell)
            return out

        try:
            sheet.append(cells(list(frame.columns), header=True))
            for row in frame.itertuples(index=False, name=None):
                sheet.append(cells(iter(row)))
        except IllegalCharacterError as exc:
            raise UnsupportedFormatError(
                "xlsx",
                f"Excel のセルに書けない制御文字を含む値があるため、{target.name} に書き出せません。",
                hint="制御文字を取り除くか、CSV など別の形式を選んでください。",
            ) from exc


def write_parquet(frame: pd.DataFrame, tmp: Path, label: str) -> None:
    frame = nested_as_json(frame)
    for i, series in list(_object_columns(frame)):
        kinds = {type(v) for v in series.dropna()}
        if len(kinds) > 1 and not kinds <= {int, float}:
            frame.isetitem(i, series.map(_text_or_none).to_numpy(dtype=object))
    try:
        frame.to_parquet(tmp, index=False, engine="pyarrow")
    except (pyarrow.ArrowException, ValueError, TypeError) as exc:
        raise UnsupportedFormatError(
            "parquet",
            f"この表は Parquet に書き出せません（{label}: {reason_of(exc)}）。",
            hint="列ごとに数値・文字・日付のどれかにそろえるか、CSV など別の形式を選んでください。",
        ) from exc


def _json_value(value: Any) -> Any:
    if _is_nested(value):
        return value
    if isinstance(value, datetime | date):  # pd.Timestamp included; keeps its UTC offset
        return value.isoformat()
    return _cell(value)


def write_json(frame: pd.DataFrame, tmp: Path, *, lines: bool) -> None:
    for column in frame.columns:
        series = frame[column]
        if pd.api.types.is_datetime64_any_dtype(series):
            dates = _dates_only(series) and series.dt.tz is None
            text = series.dt.strftime("%Y-%m-%d") if dates else series.map(_json_value)
            frame[column] = text.astype(object).where(series.notna(), None)
    names = list(frame.columns)
    records = (
        dict(zip(names, map(_json_value, row), strict=True))
        for row in frame.itertuples(index=False, name=None)
    )
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as out:
            if lines:
                for record in records:
                    out.write(json.dumps(record, ensure_ascii=False, allow_nan=False, default=str))
                    out.write("\n")
            else:
                json.dump(
                    list(records), out, ensure_ascii=False, allow_nan=False, indent=2, default=str
                )
                out.write("\n")
    except ValueError as exc:  # inf / -inf: JSON has no spelling for them
        raise UnsupportedFormatError(
            "json",
            "無限大（inf）を含む値は JSON に書き出せません。",
            hint="無限大の値を空欄か数値に置き換えるか、CSV など別の形式を選んでください。",
        ) from exc
