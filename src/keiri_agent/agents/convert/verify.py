"""Is an output file what the request asked for? Checked by content, not only by its name.

A conversion is a success only when its files are in the requested format: CodeAct may save
``売上.csv`` when XML was asked for, or write CSV text into ``sales.xml``. :func:`check_output`
looks at the bytes (XML parses as XML, JSON as JSON, JSONL line by line, CSV/TSV as delimited
text, XLSX/DOCX/PPTX as their zip parts, Parquet/PNG/JPEG/GIF/PDF by their signatures, SVG as
XML with an ``svg`` root, YAML as a mapping or list) and at the extension, and returns the
problems in Japanese (an empty list when the file is right). The problems are what CodeAct is
told in its next observation and what the user reads when no right file was made.

A format the module has no content check for is accepted by its extension alone, and that is
said in :func:`unchecked_note`.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "CHECKED_FORMATS",
    "check_output",
    "detect_format",
    "normalize_target",
    "unchecked_note",
]

MAX_CHECK_BYTES = 64 * 1024 * 1024  # larger files are checked by their first bytes only
_ALIASES = {
    "excel": "xlsx",
    "xlsm": "xlsx",
    "ndjson": "jsonl",
    "jsonlines": "jsonl",
    "pq": "parquet",
    "jpg": "jpeg",
    "htm": "html",
    "yml": "yaml",
    "text": "txt",
    "markdown": "md",
}
# Extensions a file of each format may carry (beyond ``.<format>``).
_SUFFIXES = {
    "xlsx": {".xlsx", ".xlsm"},
    "jsonl": {".jsonl", ".ndjson"},
    "parquet": {".parquet", ".pq"},
    "jpeg": {".jpg", ".jpeg"},
    "html": {".html", ".htm"},
    "yaml": {".yaml", ".yml"},
    "tsv": {".tsv", ".tab", ".txt"},
    "csv": {".csv", ".txt"},
    "md": {".md", ".markdown"},
}
_LABELS = {"xlsx": "Excel（.xlsx）", "jpeg": "JPEG", "md": "Markdown"}


def normalize_target(fmt: str) -> str:
    """A requested format name or extension ("XML", ".csv", "Excel", "jpg") → its key."""
    key = str(fmt).strip().lower().lstrip(".")
    return _ALIASES.get(key, key)


def _label(fmt: str) -> str:
    return _LABELS.get(fmt, fmt.upper())


def _read(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(MAX_CHECK_BYTES)


def _text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    for encoding in ("utf-8-sig", "cp932", "euc-jp"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return None


def _xml_root(data: bytes) -> str | None:
    import defusedxml.ElementTree as SafeET  # type: ignore[import-untyped]

    try:
        root = SafeET.fromstring(data)
    except Exception:  # ParseError and defusedxml's refusals: not a well-formed, safe XML
        return None
    tag = str(root.tag)
    return tag.rsplit("}", 1)[-1].lower()


def _is_xml(data: bytes) -> bool:
    return _xml_root(data) is not None


def _is_svg(data: bytes) -> bool:
    return _xml_root(data) == "svg"


def _is_json(data: bytes) -> bool:
    text = _text(data)
    if text is None or not text.strip():
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict | list)


def _is_jsonl(data: bytes) -> bool:
    text = _text(data)
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return False
    try:
        return all(isinstance(json.loads(line), dict | list) for line in lines)
    except ValueError:
        return False


def _delimited(data: bytes, delimiter: str) -> bool:
    text = _text(data)
    if text is None or not text.strip():
        return False
    head = text.lstrip()[:1]
    if head in ("<", "{", "["):  # markup or JSON, not a table of delimited text
        return False
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if row]
    if not rows:
        return False
    width = len(rows[0])
    if width < 2:  # a one-column table: no other delimiter in it either
        others = {",", "\t"} - {delimiter}
        return all(len(row) == 1 and not any(d in row[0] for d in others) for row in rows)
    same = sum(len(row) == width for row in rows)
    return same >= max(1, int(len(rows) * 0.9))


def _is_csv(data: bytes) -> bool:
    return _delimited(data, ",")


def _is_tsv(data: bytes) -> bool:
    return _delimited(data, "\t")


def _zip_with(*members: str) -> Callable[[bytes], bool]:
    def check(data: bytes) -> bool:
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                names = set(archive.namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return False
        return all(member in names for member in members)

    return check


def _signature(head: bytes, tail: bytes = b"") -> Callable[[bytes], bool]:
    def check(data: bytes) -> bool:
        return data.startswith(head) and (not tail or data.rstrip(b"\r\n").endswith(tail))

    return check


def _is_yaml(data: bytes) -> bool:
    import yaml

    text = _text(data)
    if text is None:
        return False
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return isinstance(value, dict | list)


def _is_html(data: bytes) -> bool:
    text = (_text(data) or "").lower()
    return "<html" in text or "<table" in text or "<!doctype html" in text


def _is_text(data: bytes) -> bool:
    return _text(data) is not None


def _is_zip(data: bytes) -> bool:
    return zipfile.is_zipfile(io.BytesIO(data))


_CHECKS: dict[str, Callable[[bytes], bool]] = {
    "xml": _is_xml,
    "svg": _is_svg,
    "json": _is_json,
    "jsonl": _is_jsonl,
    "csv": _is_csv,
    "tsv": _is_tsv,
    "xlsx": _zip_with("[Content_Types].xml", "xl/workbook.xml"),
    "docx": _zip_with("[Content_Types].xml", "word/document.xml"),
    "pptx": _zip_with("[Content_Types].xml", "ppt/presentation.xml"),
    "zip": _is_zip,
    "parquet": _signature(b"PAR1", b"PAR1"),
    "feather": _signature(b"ARROW1"),
    "png": _signature(b"\x89PNG\r\n\x1a\n"),
    "jpeg": _signature(b"\xff\xd8\xff"),
    "gif": _signature(b"GIF8"),
    "pdf": _signature(b"%PDF-"),
    "yaml": _is_yaml,
    "html": _is_html,
    "md": _is_text,
    "txt": _is_text,
}
CHECKED_FORMATS = frozenset(_CHECKS)
# Order in which detect_format tries the formats: specific signatures before loose text ones.
_DETECT_ORDER = (
    "parquet",
    "feather",
    "png",
    "jpeg",
    "gif",
    "pdf",
    "xlsx",
    "docx",
    "pptx",
    "zip",
    "svg",
    "xml",
    "html",
    "json",
    "jsonl",
    "tsv",
    "csv",
)


def detect_format(data: bytes) -> str | None:
    """What the bytes are, as far as the checks can tell (None: none of the known formats)."""
    for fmt in _DETECT_ORDER:
        if _CHECKS[fmt](data):
            return fmt
    return None


def unchecked_note(fmt: str) -> str | None:
    """A Japanese note when ``fmt`` can only be checked by its extension, else None."""
    key = normalize_target(fmt)
    if key in _CHECKS:
        return None
    return f"{_label(key)} の内容は確認できないため、拡張子だけを確かめました。"


def check_output(path: Path, fmt: str) -> list[str]:
    """Problems of ``path`` as a file of the requested format ``fmt`` ([] when it is right)."""
    key = normalize_target(fmt)
    if not key:
        return []
    problems: list[str] = []
    suffixes = _SUFFIXES.get(key, {f".{key}"})
    if path.suffix.lower() not in suffixes:
        want = " / ".join(sorted(suffixes))
        problems.append(
            f"{path.name}: 依頼の形式は {_label(key)} ですが、拡張子が"
            f" {path.suffix or '（なし）'} です（{want} で保存してください）"
        )
    check = _CHECKS.get(key)
    if check is None:
        return problems
    data = _read(path)
    if not data:
        return [*problems, f"{path.name}: ファイルが空です"]
    if not check(data):
        found = detect_format(data)
        what = f"内容は {_label(found)} です" if found else "内容がその形式として読めません"
        problems.append(f"{path.name}: {_label(key)} として読めません（{what}）")
    return problems
