"""``extract_text``: the one entry point that turns a file into text for agents and blocks.

The real type of a file is read from its first bytes, not trusted from its extension: a
``.pdf`` that is a saved web page, an ``.xlsx`` that is not a ZIP or an empty download are
refused with a message that names the file and says what it really is. Size, page and
character limits come from ``limits``; what a limit cut is reported in ``warnings`` and
``truncated``, never dropped silently. Office files pass the archive checks first, and PDF and
Office files are parsed in a bounded child process, so no file can exhaust the caller's memory. Per-format readers live in ``pdf`` and ``office``;
text files are decoded by ``encoding.decode_bytes`` (UTF-8 with or without BOM, CP932, EUC-JP).
"""

from __future__ import annotations

import io
import zipfile
from functools import partial
from pathlib import Path

from keiri_agent.documents import office
from keiri_agent.documents.bounded import run_bounded
from keiri_agent.documents.failures import PASSWORD_PROTECTED, encrypted, unreadable, unsupported
from keiri_agent.documents.html import HTML_EXTENSIONS, read_html
from keiri_agent.documents.limits import MAX_FILE_BYTES, MAX_PDF_PAGES, MAX_TEXT_CHARS
from keiri_agent.documents.models import ExtractedText
from keiri_agent.documents.normalize import normalize_text
from keiri_agent.documents.pdf import PAGE_SEPARATOR, read_pdf
from keiri_agent.documents.source import read_source
from keiri_agent.documents.zipcheck import check_container
from keiri_agent.errors import FileProcessingError

__all__ = [
    "KIND_LABELS",
    "PAGE_SEPARATOR",
    "SUPPORTED_EXTENSIONS",
    "detect_kind",
    "extract_text",
]

TEXT_EXTENSIONS = (".txt", ".md", ".csv", ".tsv", ".json")
SUPPORTED_EXTENSIONS = (
    *TEXT_EXTENSIONS,
    *HTML_EXTENSIONS,
    ".pdf",
    ".docx",
    ".xlsx",
    ".xlsm",
    ".pptx",
)
UNNAMED = "（名前なし）"

# What a file really is, in words a user understands (keys are detect_kind() results).
KIND_LABELS: dict[str, str] = {
    "pdf": "PDF",
    "docx": "Word 文書（.docx）",
    "xlsx": "Excel ブック（.xlsx）",
    "pptx": "PowerPoint ファイル（.pptx）",
    "odf": "OpenDocument ファイル（.odt / .ods / .odp）",
    "zip": "ZIP アーカイブ",
    "broken_zip": "壊れた（途中で切れた）ZIP 形式のファイル",
    "office_encrypted": "パスワードで保護された Office ファイル",
    "office_legacy": "旧形式の Office ファイル（.doc / .xls / .ppt）",
    "html": "HTML（Web ページ）",
    "xml": "XML",
    "rtf": "リッチテキスト（RTF）",
    "png": "PNG 画像",
    "jpeg": "JPEG 画像",
    "gif": "GIF 画像",
    "tiff": "TIFF 画像",
    "gzip": "gzip 圧縮ファイル",
    "7z": "7z アーカイブ",
    "rar": "RAR アーカイブ",
    "text": "テキスト",
    "binary": "形式不明のバイナリ",
}
_EXPECTED: dict[str, tuple[str, ...]] = {
    ".pdf": ("pdf",),
    ".docx": ("docx",),
    ".xlsx": ("xlsx",),
    ".xlsm": ("xlsx",),
    ".pptx": ("pptx",),
    **{ext: ("text", "html", "xml") for ext in TEXT_EXTENSIONS},
    **{ext: ("html", "text", "xml") for ext in HTML_EXTENSIONS},
}
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF8", "gif"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"\x1f\x8b", "gzip"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"Rar!\x1a\x07", "rar"),
    (b"{\\rtf", "rtf"),
)
_ZIP_MARKERS = (
    ("word/document.xml", "docx"),
    ("xl/workbook.xml", "xlsx"),
    ("ppt/presentation.xml", "pptx"),
    ("mimetype", "odf"),
)


def extract_text(
    source: Path | str | bytes,
    *,
    name: str | None = None,
    max_chars: int = MAX_TEXT_CHARS,
    max_pages: int = MAX_PDF_PAGES,
    max_bytes: int = MAX_FILE_BYTES,
) -> ExtractedText:
    """Extract the text of one file: a path, or its bytes.

    ``name`` is the file name shown in results and messages; its extension chooses the reader
    (the content must agree). It defaults to the path's name; bytes without a name are typed
    by their content alone.

    Supports SUPPORTED_EXTENSIONS. PDFs are read from their first ``max_pages`` pages, Excel
    from the top-left range of its first visible sheet; the text is normalized
    (``normalize_text``) and cut at ``max_chars``. Pages and slides are separated by PAGE_SEPARATOR.

    Raises FileProcessingError: FILE_TOO_LARGE over ``max_bytes`` or when parsing needs more
    than ``MAX_PARSE_MEMORY_BYTES``; ARCHIVE_UNSAFE for an Office file that breaks the archive
    limits or holds an XML entity bomb; TIMEOUT_ERROR past ``MAX_PARSE_CPU_SECONDS``; UNSUPPORTED_FORMAT for
    another extension; FILE_UNREADABLE for an empty, damaged or mislabelled file (the message
    says what it really is); FILE_ENCRYPTED for a password-protected PDF or Office file.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    path = None if isinstance(source, bytes | bytearray | memoryview) else Path(source)
    if name is None:
        name = path.name if path is not None else UNNAMED
    extension = Path(name).suffix.lower()
    # Bytes without an extension are typed by their content; anything else by its extension.
    if extension not in SUPPORTED_EXTENSIONS and (extension or path is not None):
        raise _unsupported(name, extension)
    data = read_source(source, label=name, max_bytes=max_bytes)
    if not data:
        raise unreadable(
            name,
            f"「{name}」は空のファイルです（0 バイト）。",
            "保存やダウンロードが完了しているか確認し、中身のあるファイルを渡してください。",
            detected="empty",
        )
    kind = detect_kind(data)
    if not extension:  # bytes without a name: trust the content
        extension = {"pdf": ".pdf", "docx": ".docx", "xlsx": ".xlsx", "pptx": ".pptx"}.get(
            kind, ".txt" if kind in ("text", "html", "xml") else ""
        )
        if not extension:
            raise _unsupported(name, "", kind)
    _check_kind(name, extension, kind, data)

    # Binary formats are parsed in a memory- and CPU-bounded child (see ``bounded``).
    if extension == ".pdf":
        result = run_bounded(partial(read_pdf, max_pages=max_pages), data, name, label=name)
    elif extension in (".docx", ".xlsx", ".xlsm", ".pptx"):
        reader = {".docx": office.read_docx, ".pptx": office.read_pptx}.get(
            extension, office.read_xlsx
        )
        result = run_bounded(reader, data, name, label=name)
        result.format = extension[1:]
    elif extension in HTML_EXTENSIONS:
        result = read_html(data, name)
    else:
        result = _read_text(data, name, extension)
    if path is not None:
        result.metadata["path"] = str(path)
    result.metadata["bytes"] = len(data)
    return _limit_chars(result, max_chars)


def detect_kind(data: bytes) -> str:
    """What ``data`` really is, from its first bytes: a key of ``KIND_LABELS``."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            if kind == "ole":
                locked = "EncryptedPackage".encode("utf-16-le") in data
                return "office_encrypted" if locked else "office_legacy"
            return kind
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _zip_kind(data)
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "text"  # UTF-16 with BOM
    sniff = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if sniff.startswith((b"<!doctype html", b"<html")) or b"<html" in sniff[:512]:
        return "html"
    if sniff.startswith(b"<?xml"):
        return "xml"
    return "binary" if b"\x00" in head else "text"


def _zip_kind(data: bytes) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, ValueError, OSError):
        return "broken_zip"
    for marker, kind in _ZIP_MARKERS:
        if marker in names:
            return kind
    return "zip"


def _check_kind(name: str, extension: str, kind: str, data: bytes) -> None:
    """Refuse a file whose content is not what its extension says."""
    expected = _EXPECTED[extension]
    if kind in expected:
        if kind in ("docx", "xlsx", "pptx"):
            check_container(data, name)
        return
    if kind == "office_encrypted" and extension in (".docx", ".xlsx", ".xlsm", ".pptx"):
        raise encrypted(
            name,
            PASSWORD_PROTECTED.format(name=name),
            "Office でファイルを開き、パスワードを解除して保存し直したものを渡してください。",
            detected=kind,
        )
    actual = KIND_LABELS.get(kind, kind)
    hint = _mismatch_hint(extension, kind, actual)
    raise unreadable(
        name,
        f"「{name}」は拡張子が {extension} ですが、中身は {actual} です。",
        hint,
        detected=kind,
        extension=extension,
    )


def _mismatch_hint(extension: str, kind: str, actual: str) -> str:
    if kind == "office_legacy":
        return "Office で開き、.docx / .xlsx / .pptx 形式で保存し直してください。"
    if kind == "broken_zip":
        return "ファイルが途中で切れているか壊れています。元のファイルを取得し直してください。"
    if kind == "html":
        return (
            "Web ページを保存したファイルです。ダウンロードが正しくできているか"
            "（ログイン画面やエラー画面を保存していないか）確認し、本来のファイルを取得し直してください。"
        )
    if kind == "text":
        return "テキストファイルです。CSV なら拡張子を .csv に、それ以外は .txt に変えて渡してください。"
    if kind in ("pdf", "docx", "xlsx", "pptx"):
        return f"拡張子を .{kind} に直して渡してください。"
    return f"{actual}は読み込めません。元のアプリケーションから {extension} 形式で保存し直してください。"


def _read_text(data: bytes, name: str, extension: str) -> ExtractedText:
    from keiri_agent.documents.encoding import decode_bytes

    text, encoding = decode_bytes(data, file=name)
    return ExtractedText(
        file=name,
        text=normalize_text(text),
        format=extension[1:],
        metadata={"encoding": encoding},
    )


def _limit_chars(result: ExtractedText, max_chars: int) -> ExtractedText:
    total = len(result.text)
    if total <= max_chars:
        return result
    result.text = result.text[:max_chars]
    result.truncated = True
    result.metadata["chars_total"] = total
    result.warnings.append(
        f"文字数の上限（{max_chars:,} 文字）に達したため、以降を省略しました（全 {total:,} 文字）。"
        "必要な部分だけを別ファイルにして渡してください。"
    )
    return result


def _unsupported(name: str, extension: str, kind: str | None = None) -> FileProcessingError:
    supported = " ".join(SUPPORTED_EXTENSIONS)
    what = f"拡張子 {extension} のファイル" if extension else "拡張子のないファイル"
    if kind is not None:
        what = KIND_LABELS.get(kind, kind)
    return unsupported(
        name,
        f"「{name}」（{what}）は読み込めない形式です。対応形式: {supported}",
        (
            "対応形式のいずれかで保存し直してから渡してください。"
            " .xls / .doc は Office で .xlsx / .docx として保存し直せます。"
        ),
        extension=extension,
        supported=list(SUPPORTED_EXTENSIONS),
    )
