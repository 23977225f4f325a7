"""Read a CSV/TSV/text table or an Excel sheet into a pandas DataFrame, as a person would.

``read_table`` is the one way agents and blocks turn a table file into a DataFrame. It decodes
text with ``encoding.decode_bytes`` (UTF-8 with or without BOM, CP932, EUC-JP, UTF-16), sniffs
the delimiter from how consistently each candidate splits the first lines, skips title rows
above the header, expands merged header cells in Excel, names blank and repeated headers, and
converts columns that are entirely numbers ("1,234", "¥1,234", full-width digits) or ISO dates
(header rules in ``table_infer``, cell forms in ``cell_forms``). ``TableResult.info`` says what it decided, so nothing is silent.

Large CSVs (a million rows) are parsed by pandas' C engine on the decoded text; only the first
lines are inspected in Python. ``.xls`` (Excel 97-2003) is not read: the user is asked to save
the file as ``.xlsx``. A ``.xls`` that is really text (common in downloads from web systems)
is read as text with a warning.

This module decides what a file is and refuses what it cannot read; ``table_text`` reads
delimited text, ``table_xlsx`` a worksheet, and ``table_frame`` finishes either the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import tzinfo
from pathlib import Path

from keiri_agent.documents.failures import encrypted, unreadable, unsupported
from keiri_agent.documents.limits import TableLimits
from keiri_agent.documents.source import read_source
from keiri_agent.documents.table_frame import TableReadInfo, TableResult
from keiri_agent.documents.table_text import (
    DELIMITERS,
    SNIFF_RECORDS,
    read_delimited,
    sniff_delimiter,
)

__all__ = [
    "DELIMITERS",
    "SNIFF_RECORDS",
    "TableReadInfo",
    "TableResult",
    "read_table",
    "sniff_delimiter",
]

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
_SAVE_AS_XLSX = "Excel でファイルを開き、「名前を付けて保存」で「Excel ブック (*.xlsx)」を選んで保存し直してください。"


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
    columns: Sequence[str] | None = None,
    zone: tzinfo | None = None,
) -> TableResult:
    """Read a table file (CSV/TSV/TXT or XLSX/XLSM) into a DataFrame.

    ``source`` is a path or the file's bytes (``name`` then gives the file name and
    extension). ``sheet`` (name or 0-based index, default the first sheet) applies to Excel;
    ``encoding`` and ``delimiter`` to text (default: detected); ``header_row`` (0-based)
    overrides header detection; ``columns`` keeps only those columns, in that order (the others
    are not typed; a missing one is an INPUT_VALIDATION_FAILED naming those that exist); ``zone``
    the local zone (``KEIRI_TIMEZONE``) that a time written with a UTC offset is read in. Raises ``FileProcessingError``: FILE_UNREADABLE (missing,
    empty, damaged, undecodable), FILE_TOO_LARGE (over ``MAX_FILE_BYTES`` or ``limits``: rows,
    columns, cells), FILE_ENCRYPTED, UNSUPPORTED_FORMAT (.xls
    and other formats), INPUT_VALIDATION_FAILED (unknown sheet or encoding, bad header_row).
    """
    data, label = _load(source, name)
    ext = Path(label).suffix.lower()
    if data.startswith(_OLE_MAGIC):
        if _ENCRYPTED_MARKER in data:
            raise encrypted(
                label,
                f"ファイル '{label}' はパスワードで保護されているため読めません。",
                "Excel でパスワードを解除してから保存し直してください。",
            )
        raise unsupported(
            label,
            f"ファイル '{label}' は旧形式の Excel（.xls, Excel 97-2003）で、読み込めません。",
            _SAVE_AS_XLSX,
        )
    if ext in _UNSUPPORTED:
        raise unsupported(
            label,
            f"ファイル '{label}' は {_UNSUPPORTED[ext]} で、表として読み込めません。",
            _SAVE_AS_XLSX + " CSV（UTF-8）で保存しても読み込めます。",
        )
    if data.startswith(b"PK\x03\x04") and (ext in _XLSX_EXTENSIONS | {".xls", ""}):
        from keiri_agent.documents.table_xlsx import read_xlsx_table

        result = read_xlsx_table(
            data,
            label,
            sheet=sheet,
            header_row=header_row,
            limits=limits,
            columns=columns,
            zone=zone,
        )
        if ext == ".xls":
            result.info.warnings.insert(
                0, f"'{label}' は拡張子 .xls ですが中身は .xlsx 形式でした。"
            )
        return result
    if ext in _XLSX_EXTENSIONS:
        raise unreadable(
            label,
            f"ファイル '{label}' は拡張子が {ext} ですが Excel ブックではありません（破損しているか別形式です）。",
            "Excel で開けるか確認し、保存し直してから指定してください。",
        )
    if ext not in _TEXT_EXTENSIONS and ext != ".xls":
        raise unsupported(
            label,
            f"ファイル '{label}' の形式（{ext}）は表として読み込めません。",
            "CSV（.csv / .tsv / .txt）か Excel ブック（.xlsx）を指定してください。",
        )
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<!doctype html", b"<html", b"<?xml", b"<table")):
        raise unsupported(
            label,
            f"ファイル '{label}' は HTML / XML 形式で、表として読み込めません。",
            _SAVE_AS_XLSX,
        )
    result = read_delimited(
        data, label, encoding, delimiter, header_row, ext, limits, columns, zone
    )
    if ext == ".xls":
        result.info.warnings.insert(
            0, f"'{label}' は拡張子 .xls ですが中身はテキスト（区切り文字形式）でした。"
        )
    if sheet is not None:
        result.info.warnings.append(
            f"'{label}' はテキスト形式のためシート指定（{sheet}）は無視しました。"
        )
    return result
