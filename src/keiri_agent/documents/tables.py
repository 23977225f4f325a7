"""Read a CSV/TSV/text table or an Excel sheet into a pandas DataFrame, as a person would.

``read_table`` is the one way agents and blocks turn a table file into a DataFrame. It decodes
text with ``encoding.decode_bytes`` (UTF-8 with or without BOM, CP932, EUC-JP, UTF-16), sniffs
the delimiter from how consistently each candidate splits the first lines, skips title rows
above the header, expands merged header cells in Excel, names blank and repeated headers, and
converts columns that are entirely numbers ("1,234", "¥1,234", full-width digits) or ISO dates
(rules in ``table_infer``). ``TableResult.info`` says what it decided, so nothing is silent.

Large CSVs (a million rows) are parsed by pandas' C engine on the decoded text; only the first
lines are inspected in Python. ``.xls`` (Excel 97-2003) is not read: the user is asked to save
the file as ``.xlsx``. A ``.xls`` that is really text (common in downloads from web systems)
is read as text with a warning.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from keiri_agent.documents.encoding import decode_bytes
from keiri_agent.documents.limits import TableLimits
from keiri_agent.documents.source import read_source
from keiri_agent.documents.table_infer import (
    check_table_size,
    convert_column,
    detect_header,
    make_column_names,
)
from keiri_agent.errors import ErrorCode, FileProcessingError

__all__ = [
    "DELIMITERS",
    "SNIFF_RECORDS",
    "TableReadInfo",
    "TableResult",
    "read_table",
    "sniff_delimiter",
]

DELIMITERS: tuple[str, ...] = (",", "\t", ";", "|")
# Records read in Python to choose the delimiter and find the header; pandas reads the rest.
SNIFF_RECORDS = 50
UNNAMED = "<bytes>"
TOO_LARGE_HINT = "期間や部門で分割したファイルにしてください。"

_TEXT_EXTENSIONS = {".csv", ".tsv", ".txt", ".tab", ".dat", ""}
_XLSX_EXTENSIONS = {".xlsx", ".xlsm"}
_UNSUPPORTED = {
    ".xlsb": "Excel バイナリブック（.xlsb）",
    ".ods": "OpenDocument スプレッドシート（.ods）",
    ".numbers": "Numbers ファイル",
    ".pdf": "PDF",
}
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_MARKER = "EncryptedPackage".encode("utf-16-le")
_PANDAS_LINE = re.compile(r"line (\d+)")
_SAVE_AS_XLSX = "Excel でファイルを開き、「名前を付けて保存」で「Excel ブック (*.xlsx)」を選んで保存し直してください。"


@dataclass
class TableReadInfo:
    """What ``read_table`` decided, for the UI, logs and LLM prompts.

    ``header_row`` is the 0-based row index (file line / sheet row - 1) of the header, None
    when the table has no header; ``skipped_title_rows`` holds the text of the non-blank rows
    above it; ``converted`` maps column names to "number" or "datetime".
    """

    file: str
    format: str  # "csv" (any delimited text) | "xlsx"
    encoding: str | None = None
    delimiter: str | None = None
    sheet: str | None = None
    sheets: list[str] = field(default_factory=list)
    header_row: int | None = None
    rows: int = 0
    columns: list[str] = field(default_factory=list)
    skipped_title_rows: list[str] = field(default_factory=list)
    converted: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TableResult:
    """A table read by :func:`read_table`: the DataFrame and how it was read."""

    df: pd.DataFrame
    info: TableReadInfo


def _error(
    file: str, message: str, code: ErrorCode, hint: str, **details: Any
) -> FileProcessingError:
    return FileProcessingError(file, message, code=code, hint=hint, details=details)


def _load(source: Path | str | bytes, name: str | None) -> tuple[bytes, str]:
    if isinstance(source, bytes | bytearray | memoryview):
        label = name or UNNAMED
    else:
        label = name or Path(source).name
    data = read_source(source, label=label, too_large_hint=TOO_LARGE_HINT)
    return data, label


def read_table(
    source: Path | str | bytes,
    *,
    name: str | None = None,
    sheet: str | int | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    header_row: int | None = None,
    limits: TableLimits = TableLimits(),  # noqa: B008 -- frozen, shared safely
) -> TableResult:
    """Read a table file (CSV/TSV/TXT or XLSX/XLSM) into a DataFrame.

    ``source`` is a path or the file's bytes (``name`` then gives the file name and
    extension). ``sheet`` (name or 0-based index, default the first sheet) applies to Excel;
    ``encoding`` and ``delimiter`` to text (default: detected); ``header_row`` (0-based)
    overrides header detection. Raises ``FileProcessingError``: FILE_UNREADABLE (missing,
    empty, damaged, undecodable), FILE_TOO_LARGE (over ``MAX_FILE_BYTES`` or ``limits``: rows,
    columns, cells), FILE_ENCRYPTED, UNSUPPORTED_FORMAT (.xls
    and other formats), INPUT_VALIDATION_FAILED (unknown sheet or encoding, bad header_row).
    """
    data, label = _load(source, name)
    ext = Path(label).suffix.lower()
    if data.startswith(_OLE_MAGIC):
        if _ENCRYPTED_MARKER in data:
            raise _error(
                label,
                f"ファイル '{label}' はパスワードで保護されているため読めません。",
                ErrorCode.FILE_ENCRYPTED,
                "Excel でパスワードを解除してから保存し直してください。",
            )
        raise _error(
            label,
            f"ファイル '{label}' は旧形式の Excel（.xls, Excel 97-2003）で、読み込めません。",
            ErrorCode.UNSUPPORTED_FORMAT,
            _SAVE_AS_XLSX,
        )
    if ext in _UNSUPPORTED:
        raise _error(
            label,
            f"ファイル '{label}' は {_UNSUPPORTED[ext]} で、表として読み込めません。",
            ErrorCode.UNSUPPORTED_FORMAT,
            _SAVE_AS_XLSX + " CSV（UTF-8）で保存しても読み込めます。",
        )
    if data.startswith(b"PK\x03\x04") and (ext in _XLSX_EXTENSIONS | {".xls", ""}):
        from keiri_agent.documents.table_xlsx import read_xlsx_table

        result = read_xlsx_table(data, label, sheet=sheet, header_row=header_row, limits=limits)
        if ext == ".xls":
            result.info.warnings.insert(
                0, f"'{label}' は拡張子 .xls ですが中身は .xlsx 形式でした。"
            )
        return result
    if ext in _XLSX_EXTENSIONS:
        raise _error(
            label,
            f"ファイル '{label}' は拡張子が {ext} ですが Excel ブックではありません（破損しているか別形式です）。",
            ErrorCode.FILE_UNREADABLE,
            "Excel で開けるか確認し、保存し直してから指定してください。",
        )
    if ext not in _TEXT_EXTENSIONS and ext != ".xls":
        raise _error(
            label,
            f"ファイル '{label}' の形式（{ext}）は表として読み込めません。",
            ErrorCode.UNSUPPORTED_FORMAT,
            "CSV（.csv / .tsv / .txt）か Excel ブック（.xlsx）を指定してください。",
        )
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<!doctype html", b"<html", b"<?xml", b"<table")):
        raise _error(
            label,
            f"ファイル '{label}' は HTML / XML 形式で、表として読み込めません。",
            ErrorCode.UNSUPPORTED_FORMAT,
            _SAVE_AS_XLSX,
        )
    result = _read_delimited(data, label, encoding, delimiter, header_row, ext, limits)
    if ext == ".xls":
        result.info.warnings.insert(
            0, f"'{label}' は拡張子 .xls ですが中身はテキスト（区切り文字形式）でした。"
        )
    if sheet is not None:
        result.info.warnings.append(
            f"'{label}' はテキスト形式のためシート指定（{sheet}）は無視しました。"
        )
    return result


def _records(text: str, delimiter: str, limit: int) -> Iterator[tuple[int, int, list[str]]]:
    """Yield ``(start, end, cells)`` character offsets of the first ``limit`` CSV records."""
    buffer = io.StringIO(text, newline="")
    offset = 0

    def lines() -> Iterator[str]:
        nonlocal offset
        for line in buffer:
            offset += len(line)
            yield line

    reader = csv.reader(lines(), delimiter=delimiter)
    start = 0
    for n, cells in enumerate(reader):
        if n >= limit:
            return
        yield start, offset, cells
        start = offset


def sniff_delimiter(text: str, *, prefer: str | None = None) -> str:
    """Choose among ``DELIMITERS`` the one that splits the first records most consistently.

    Score: the share of non-blank records that have the most common field count (> 1),
    then that count. ``prefer`` (from the extension) wins when it is consistent enough.
    """
    scores: dict[str, tuple[float, int]] = {}
    for delim in DELIMITERS:
        try:
            counts = [len(c) for _s, _e, c in _records(text, delim, SNIFF_RECORDS) if c]
        except csv.Error:
            continue
        if not counts:
            continue
        common = Counter(counts).most_common()
        freq, width = max((f, w) for w, f in common)
        scores[delim] = (freq / len(counts), width) if width > 1 else (0.0, 1)
    if prefer in scores and scores[prefer][0] >= 0.8:
        return prefer
    best = max(DELIMITERS, key=lambda d: scores.get(d, (0.0, 0)))
    if scores.get(best, (0.0, 0))[0] == 0.0:
        return prefer or ","  # a single-column table
    return best


def _read_delimited(
    data: bytes,
    label: str,
    encoding: str | None,
    delimiter: str | None,
    header_row: int | None,
    ext: str,
    limits: TableLimits,
) -> TableResult:
    text, used_encoding = decode_bytes(data, file=label, encoding=encoding)
    if not text.strip():
        raise _error(
            label,
            f"ファイル '{label}' は空です（データがありません）。",
            ErrorCode.FILE_UNREADABLE,
            "データの入ったファイルを指定してください。",
        )
    if delimiter is not None and len(delimiter) != 1:
        raise _error(
            label,
            f"区切り文字 {delimiter!r} は使えません（1 文字で指定してください）。",
            ErrorCode.INPUT_VALIDATION_FAILED,
            '"," や "\\t"（タブ）など 1 文字を指定するか、指定を外して自動判定にしてください。',
            delimiter=delimiter,
        )
    prefer = "\t" if ext in (".tsv", ".tab") else None
    delim = delimiter or sniff_delimiter(text, prefer=prefer)
    limit = max(SNIFF_RECORDS, (header_row or 0) + SNIFF_RECORDS)
    try:
        sample = list(_records(text, delim, limit))
    except csv.Error as exc:
        raise _error(
            label,
            f"ファイル '{label}' を区切り文字形式として読めません: {exc}",
            ErrorCode.FILE_UNREADABLE,
            '引用符（"）の対応や区切り文字を確認してください。',
        ) from exc
    rows = [cells for _s, _e, cells in sample]
    header, data_start = choose_header(rows, header_row, label)
    start_offset = sample[data_start][0] if data_start < len(sample) else len(text)
    widths = [len(r) for r in rows[header if header is not None else data_start :]]
    ncols = max(widths, default=1)
    body = text[start_offset:]
    # Lines bound the records from above (a quoted line break makes one record two lines).
    check_table_size(label, body.count("\n") + 1, ncols, limits)
    try:
        frame = pd.read_csv(
            io.StringIO(body),
            sep=delim,
            header=None,
            names=list(range(ncols)),
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            skip_blank_lines=True,
            engine="c",
        )
    except pd.errors.ParserError as exc:
        line_no = text.count("\n", 0, start_offset)
        found = _PANDAS_LINE.search(str(exc))
        where = f"{line_no + int(found.group(1))} 行目" if found else "途中の行"
        raise _error(
            label,
            f"ファイル '{label}' の {where}の列数がヘッダー（{ncols} 列）より多く、表として読めません。",
            ErrorCode.FILE_UNREADABLE,
            'その行の区切り文字や引用符（"）を確認してください。値にカンマを含む場合は "1,234" のように引用符で囲みます。',
            pandas_error=str(exc),
        ) from exc
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame(columns=list(range(ncols)), dtype=str)
    header_cells = rows[header] if header is not None else []
    info = TableReadInfo(file=label, format="csv", encoding=used_encoding, delimiter=delim)
    if header is not None:
        wider = [
            n + 1
            for n in range(data_start, len(rows))
            if any(cell.strip() for cell in rows[n][len(header_cells) :])
        ]
        if wider:
            lines = "、".join(f"{n} 行目" for n in wider[:5]) + (" ほか" if len(wider) > 5 else "")
            info.warnings.append(
                f"{lines}はヘッダー（{len(header_cells)} 列）より値が多いため、名前のない列として"
                "読みました。値にカンマを含む場合は引用符で囲まれているか確認してください。"
            )
    return finish_table(
        frame, header_cells, header, rows[: header if header is not None else data_start], info
    )


def choose_header(
    rows: list[list[Any]], header_row: int | None, label: str
) -> tuple[int | None, int]:
    if header_row is not None:
        if (
            header_row < 0
            or header_row >= len(rows)
            or not any(str(v or "").strip() for v in rows[header_row])
        ):
            raise _error(
                label,
                f"'{label}' の {header_row + 1} 行目（header_row={header_row}）にヘッダーがありません。",
                ErrorCode.INPUT_VALIDATION_FAILED,
                "header_row には列名が書かれた行の番号（0 始まり）を指定するか、指定を外して自動判定にしてください。",
                header_row=header_row,
                rows=len(rows),
            )
        return header_row, header_row + 1
    try:
        return detect_header(rows)
    except ValueError:
        raise _error(
            label,
            f"'{label}' にデータがありません（空の行だけです）。",
            ErrorCode.FILE_UNREADABLE,
            "データの入ったファイルやシートを指定してください。",
        ) from None


def finish_table(
    frame: pd.DataFrame,
    header_cells: list[Any],
    header: int | None,
    above: list[list[Any]],
    info: TableReadInfo,
) -> TableResult:
    """Name columns, drop empty rows and unnamed empty columns, convert types, fill ``info``."""
    ncols = frame.shape[1]
    cells = list(header_cells) + [None] * (ncols - len(header_cells))
    named = [str(c).strip() != "" and c is not None for c in cells]
    filled = frame.notna().to_numpy()
    keep = [j for j in range(ncols) if named[j] or filled[:, j].any()]
    rows_with_values = pd.Series(filled[:, keep].any(axis=1), index=frame.index)
    frame = frame.iloc[:, keep].loc[rows_with_values].reset_index(drop=True)
    names, renamed = make_column_names([cells[j] for j in keep], keep)
    # Built column by column, then assembled once: assigning into a wide frame copies it
    # every time (100,000 columns took minutes).
    columns: dict[str, pd.Series] = {}
    for j, col in enumerate(names):
        converted, kind = convert_column(frame.iloc[:, j])
        columns[col] = converted
        if kind is not None:
            info.converted[col] = kind
    frame = pd.DataFrame(columns, index=frame.index) if columns else frame.set_axis(names, axis=1)
    info.header_row = header
    info.rows = len(frame)
    info.columns = names
    info.skipped_title_rows = [
        " ".join(str(v).strip() for v in row if v is not None and str(v).strip())
        for row in above
        if any(v is not None and str(v).strip() for v in row)
    ]
    if info.skipped_title_rows:
        titles = " / ".join(info.skipped_title_rows)
        info.warnings.append(
            f"ヘッダーより上の {len(info.skipped_title_rows)} 行をタイトル行として読み飛ばしました: {titles}"
        )
    if renamed:
        info.warnings.append(
            f"列名が空または重複していたため、次の名前を付けました: {', '.join(renamed)}"
        )
    return TableResult(frame, info)
