"""Table formats of the conversion pipeline: CSV, TSV, Excel, JSON, JSONL and Parquet.

Reading goes through the file layer wherever it can: CSV, TSV and Excel use
``documents.read_table`` (encoding detection for UTF-8/BOM/CP932/EUC-JP, delimiter sniffing,
title rows above the header, "1,234"-style numbers), JSON and JSONL are decoded with
``documents.decode_bytes`` so a CP932 or BOM-prefixed JSON file reads too, and every input
passes ``read_source``'s existence and size checks. A CSV, TSV or Excel ledger is read as the
agents read it (``agents.ledger``): total and subtotal rows left out, dates typed, amounts
written in 千円 / 百万円 multiplied into yen with 円 in their header (the unit row above the
header is not carried into the output, so numbers left in 千円 would be read 1,000 times
off), and an amount cell that is not an amount refused with its line. What the table reader
decided (encoding, header row, warnings) is kept in ``df.attrs["read_info"]``, what was done to
the table in Japanese in ``df.attrs["notes"]``, the headers made to say 円 (as written → as
read) in ``df.attrs["renamed"]``.

Writing is atomic: the file appears complete under its final name or not at all. CSV is
written as UTF-8 with a BOM so that Excel opens Japanese text correctly; TSV as plain UTF-8
(the tools that read TSV tend to choke on a BOM). Values are written verbatim, including
text that starts with "=" in CSV; in Excel every text cell is stored as text, never as a
formula. Cells holding lists or dicts (nested JSON) are written as JSON text to the flat
formats; Parquet, which has one type per column, stores columns that mix numbers and text
as text. Datetimes become ISO 8601 text in JSON ("2024-04-01" when a column has no times).

Unknown formats raise ``UnsupportedFormatError(fmt)`` (the seed's fallback trigger), as do
JSON shapes that are not tables and data Excel, Parquet or JSON cannot represent. Malformed or
missing files raise ``FileProcessingError`` from the file layer.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow

from keiri_agent.agents.convert.models import TABLE_FORMATS, UnsupportedFormatError
from keiri_agent.agents.convert.writers import (
    check_unique_columns,
    nested_as_json,
    write_json,
    write_parquet,
    write_xlsx,
)
from keiri_agent.agents.jsonlines import json_objects
from keiri_agent.agents.ledger import read_ledger
from keiri_agent.documents.cell_forms import ISO_DATE
from keiri_agent.documents.encoding import decode_bytes
from keiri_agent.documents.source import read_source
from keiri_agent.errors import ErrorCode, FileProcessingError, cause_of, reason_of
from keiri_agent.workspace import atomic_path, confine

__all__ = [
    "EXTENSIONS",
    "SUFFIXES",
    "convert_file",
    "format_of",
    "normalize_format",
    "output_path",
    "read_table",
    "write_table",
]

# File extensions read as each format (".txt" is delimited text, sniffed like CSV).
EXTENSIONS: dict[str, str] = {
    ".csv": "csv",
    ".txt": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
SUFFIXES: dict[str, str] = {fmt: f".{fmt}" for fmt in TABLE_FORMATS}
_ALIASES = {
    "excel": "xlsx",
    "xlsm": "xlsx",
    "txt": "csv",
    "tab": "tsv",
    "ndjson": "jsonl",
    "jsonlines": "jsonl",
    "pq": "parquet",
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f/\\]")
_JSON_HINT = (
    'JSON は [{"列名": 値, ...}, ...] のようなオブジェクトの配列（または列名ごとの配列）に、'
    "JSONL は 1 行に 1 つのオブジェクトにしてください。"
)


def normalize_format(fmt: str) -> str:
    """A format name or extension ("XLSX", ".csv", "excel", "ndjson") → one of TABLE_FORMATS."""
    key = str(fmt).strip().lower().lstrip(".")
    key = _ALIASES.get(key, key)
    if key not in TABLE_FORMATS:
        raise UnsupportedFormatError(str(fmt))
    return key


def format_of(path: Path) -> str:
    """The format a file's extension says it is; unknown extensions are unsupported."""
    fmt = EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise UnsupportedFormatError(
            path.suffix.lstrip(".") or path.name,
            f"ファイル '{path.name}' の形式（{path.suffix or '拡張子なし'}）は変換できません"
            "（対応形式: CSV / TSV / Excel（.xlsx）/ JSON / JSONL / Parquet）。",
        )
    return fmt


def read_table(
    path: Path, fmt: str | None = None, *, sheet: str | int | None = None
) -> pd.DataFrame:
    """Read a table file; ``fmt`` defaults to the extension's. ``sheet`` picks an Excel sheet
    by name or 0-based index (default: the first)."""
    fmt = normalize_format(fmt) if fmt is not None else format_of(path)
    if fmt in ("csv", "tsv", "xlsx"):
        ext = path.suffix.lower()
        wanted = {"csv": (".csv", ".txt"), "tsv": (".tsv", ".tab"), "xlsx": (".xlsx", ".xlsm")}
        # The file layer goes by the extension; a mislabelled file is read as ``fmt`` says.
        name = path.name if ext in wanted[fmt] else f"{path.stem}{SUFFIXES[fmt]}"
        ledger = read_ledger(path, name=name, sheet=sheet, delimiter="\t" if fmt == "tsv" else None)
        df = ledger.frame
        df.attrs["read_info"] = ledger.info.to_dict()
        df.attrs["notes"] = list(ledger.notes)
        df.attrs["renamed"] = dict(ledger.renamed)
        return df
    data = read_source(path, label=path.name)
    if fmt == "parquet":
        try:
            return pd.read_parquet(io.BytesIO(data), engine="pyarrow")
        except (pyarrow.ArrowException, OSError) as exc:
            raise FileProcessingError(
                path.name,
                f"ファイル '{path.name}' を Parquet として読めません（{reason_of(exc)}）。",
                code=ErrorCode.FILE_UNREADABLE,
                hint="Parquet 形式のファイルか、途中で切れていないか確認してください。",
                details={"cause": cause_of(exc)},
            ) from exc
    text, encoding = decode_bytes(data, file=path.name)
    records = _json_records(text, path.name) if fmt == "json" else _jsonl_records(text, path.name)
    df = _parse_iso_dates(records)
    df.attrs["read_info"] = {"file": path.name, "format": fmt, "encoding": encoding}
    return df


def write_table(df: pd.DataFrame, path: Path, fmt: str) -> Path:
    """Write ``df`` (without its index) to ``path`` as ``fmt``, atomically; returns ``path``.

    CSV is UTF-8 with a BOM (Excel reads Japanese correctly), TSV plain UTF-8. On any failure
    nothing is left at ``path`` (an existing file there is kept as it was).
    """
    fmt = normalize_format(fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = df.copy()
    frame.columns = pd.Index([str(c) for c in frame.columns])
    if fmt in ("json", "jsonl", "parquet"):
        check_unique_columns(frame, fmt, path)
    if fmt == "xlsx":  # saved atomically by the workbook writer itself
        write_xlsx(nested_as_json(frame), path)
        return path
    with atomic_path(path, suffix=SUFFIXES[fmt]) as tmp:
        if fmt in ("csv", "tsv"):
            nested_as_json(frame).to_csv(
                tmp,
                index=False,
                sep="," if fmt == "csv" else "\t",
                encoding="utf-8-sig" if fmt == "csv" else "utf-8",
            )
        elif fmt == "parquet":
            write_parquet(frame, tmp, path.name)
        else:
            write_json(frame, tmp, lines=fmt == "jsonl")
    return path


def output_path(out_dir: Path, name: str, fmt: str) -> Path:
    """``out_dir/<name>.<fmt>``: directories and a table extension on ``name`` are dropped."""
    fmt = normalize_format(fmt)
    base = _CONTROL.sub("_", Path(str(name).replace("\\", "/")).name).strip()
    stem, suffix = base.rsplit(".", 1) if "." in base.strip(".") else (base, "")
    if f".{suffix.lower()}" in EXTENSIONS:
        base = stem
    base = base.strip(" .") or "output"
    return confine(out_dir, base + SUFFIXES[fmt])


def convert_file(
    path: Path,
    target: str,
    out_dir: Path,
    *,
    output_name: str | None = None,
    sheet: str | int | None = None,
    on_note: Callable[[str], None] | None = None,
) -> Path:
    """Convert one table file to ``target`` under ``out_dir``; returns the written file.

    Every direction among CSV, TSV, XLSX, JSON, JSONL and Parquet works, including the same
    format (a CP932 CSV becomes a UTF-8 CSV with a BOM, which Excel opens correctly). The output
    is ``out_dir/<output_name or input stem>.<target>``, written atomically. An unknown source
    extension or target raises ``UnsupportedFormatError``; writing over the input is refused.
    ``on_note`` is told, one by one, what the reading did to a ledger (``agents.ledger``).
    """
    source_fmt = format_of(path)
    target_fmt = normalize_format(target)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = output_path(out_dir, output_name or path.stem, target_fmt)
    if out.exists() and out.samefile(path):
        raise FileProcessingError(
            path.name,
            f"変換結果の出力先 '{out.name}' が入力ファイルと同じです。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="出力ファイル名（output_name）を入力と別の名前にしてください。",
        )
    table = read_table(path, source_fmt, sheet=sheet)
    for note in table.attrs.get("notes", ()):  # units made yen, total rows left out...
        if on_note is not None:
            on_note(note)
    return write_table(table, out, target_fmt)


def _json_error(
    label: str, exc: json.JSONDecodeError, line: int | None = None
) -> FileProcessingError:
    where = f"{line} 行目" if line is not None else f"{exc.lineno} 行目 {exc.colno} 文字目"
    return FileProcessingError(
        label,
        f"ファイル '{label}' の {where}が JSON として読めません。",
        code=ErrorCode.FILE_UNREADABLE,
        hint='カンマや引用符（"）の対応、途中で切れていないかを確認してください。',
        details={"line": line or exc.lineno, "column": exc.colno, "cause": cause_of(exc)},
    )


def _json_records(text: str, label: str) -> pd.DataFrame:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(label, exc) from exc
    if isinstance(data, list) and all(isinstance(item, dict) for item in data):
        return pd.json_normalize(data) if data else pd.DataFrame()
    if (
        isinstance(data, dict)
        and data
        and all(isinstance(v, list) for v in data.values())
        and len({len(v) for v in data.values()}) == 1
    ):
        return pd.DataFrame(data)
    if isinstance(data, list):
        shape = "オブジェクト以外の要素を含む配列"
    elif isinstance(data, dict):
        shape = "列ごとの配列の長さがそろっていないオブジェクト"
    else:
        shape = f"単独の値 {str(data)[:30]!r}"
    raise UnsupportedFormatError(
        "json", f"ファイル '{label}' の JSON は表の形ではありません（{shape}）。", hint=_JSON_HINT
    )


def _jsonl_records(text: str, label: str) -> pd.DataFrame:
    records = [
        item
        for _, item in json_objects(
            text,
            not_json=lambda number, exc: _json_error(label, exc, number),
            not_object=lambda number: UnsupportedFormatError(
                "jsonl",
                f"ファイル '{label}' の {number} 行目が JSON オブジェクトではありません。",
                hint=_JSON_HINT,
            ),
        )
    ]
    return pd.json_normalize(records) if records else pd.DataFrame()


def _parse_iso_dates(df: pd.DataFrame) -> pd.DataFrame:
    """Text columns whose every value is an ISO date/datetime become datetimes (as CSV does)."""
    for column in df.columns:
        series = df[column]
        values = series.dropna()
        if values.empty or not all(isinstance(v, str) for v in values):
            continue
        if values.str.fullmatch(ISO_DATE.pattern).all():
            try:
                df[column] = pd.to_datetime(series, format="ISO8601")
            except (ValueError, OverflowError):
                continue
    return df
