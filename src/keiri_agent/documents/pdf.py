"""PDF text extraction with pypdfium2 (PDFium), the fastest correct reader we measured.

``benchmarks/extraction.py`` compares pypdf, pdfminer.six and pypdfium2 on generated Japanese
PDFs; pypdfium2 won by a wide margin (numbers in ``benchmarks/README.md``), so it is the only
PDF library the product imports. Pages beyond the limit are not parsed at all; pages without a
text layer (scans) are reported, never silently skipped.

PDFium is not thread-safe, not even across different documents (pypdfium2's docs), and a
stream inside a small PDF can decompress to gigabytes in it. So ``extract_text`` calls
``read_pdf`` only in a bounded child process (``bounded.run_bounded``), one document per
process: plan nodes in threads never share PDFium, and the child's memory limit bounds it.
"""

from __future__ import annotations

import pypdfium2 as pdfium

from keiri_agent.documents.failures import PASSWORD_PROTECTED, encrypted, unreadable
from keiri_agent.documents.limits import MAX_PDF_PAGES
from keiri_agent.documents.models import ExtractedText
from keiri_agent.documents.normalize import normalize_text

__all__ = ["PAGE_SEPARATOR", "read_pdf"]

# Pages (and PPTX slides) are joined with a form feed: one character, never produced by
# normalize_text, so ``text.split(PAGE_SEPARATOR)`` gives the pages back.
PAGE_SEPARATOR = "\f"
# PDFium's FPDF_GetLastError codes (fpdfview.h).
_FPDF_ERR_FORMAT = 3
_FPDF_ERR_PASSWORD = 4
_FPDF_ERR_SECURITY = 5
# A complete PDF ends with %%EOF; readers look for it in the last 1 KiB, we allow some slack.
_EOF_WINDOW = 2048


def read_pdf(data: bytes, name: str, *, max_pages: int = MAX_PDF_PAGES) -> ExtractedText:
    """Extract the text layer of the first ``max_pages`` pages of the PDF in ``data``.

    Raises FileProcessingError: FILE_ENCRYPTED for a password-protected file, FILE_UNREADABLE
    for a damaged or truncated one.
    """
    if max_pages < 1:
        raise ValueError("max_pages must be at least 1")
    total, pages, image_only, failed = _read_pages(data, name, max_pages)
    read = len(pages)
    warnings: list[str] = []
    if total > read:
        warnings.append(
            f"先頭 {read} ページのみ読み込みました（全 {total} ページ）。"
            "残りのページが必要な場合は、PDF を分割して渡してください。"
        )
    if image_only:
        warnings.append(f"画像のみのページ（OCR 未対応）: {_page_list(image_only)}")
    if failed:
        warnings.append(f"読み取れなかったページ: {_page_list(failed)}")
    if len(image_only) + len(failed) == read:  # also a PDF without pages
        warnings.append(
            f"「{name}」からはテキストを取り出せませんでした。スキャンした PDF の場合は、"
            "OCR でテキスト付き PDF にしてから渡してください。"
        )
    return ExtractedText(
        file=name,
        text=PAGE_SEPARATOR.join(pages),
        format="pdf",
        units_read=read,
        units_total=total,
        unit="page",
        truncated=total > read,
        warnings=warnings,
        metadata={"pages": total, "image_only_pages": image_only},
    )


def _read_pages(
    data: bytes, name: str, max_pages: int
) -> tuple[int, list[str], list[int], list[int]]:
    """(page count, texts of the pages read, image-only pages, failed pages); under the lock."""
    document = _open(data, name)
    try:
        total = len(document)
        pages: list[str] = []
        image_only: list[int] = []
        failed: list[int] = []
        for index in range(min(total, max_pages)):
            try:
                text = _page_text(document, index)
            except pdfium.PdfiumError:
                failed.append(index + 1)
                text = ""
            else:
                if not text.strip():
                    image_only.append(index + 1)
            pages.append(text)
        return total, pages, image_only, failed
    finally:
        document.close()


def _open(data: bytes, name: str) -> pdfium.PdfDocument:
    if b"%%EOF" not in data[-_EOF_WINDOW:]:
        raise unreadable(
            name,
            f"「{name}」は PDF の途中で切れています（ファイル末尾の %%EOF がありません）。",
            "ダウンロードやコピーが途中で止まった可能性があります。元のファイルを取得し直してください。",
            detected="truncated_pdf",
        )
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code in (_FPDF_ERR_PASSWORD, _FPDF_ERR_SECURITY):
            raise encrypted(
                name,
                PASSWORD_PROTECTED.format(name=name),
                "PDF のパスワード（閲覧制限）を解除して保存し直したファイルを渡してください。",
                pdfium_error=code,
            ) from exc
        raise unreadable(
            name,
            (
                f"「{name}」は PDF として壊れているため読み込めません"
                f"（{'形式エラー' if code == _FPDF_ERR_FORMAT else exc}）。"
            ),
            "PDF ビューアで開けるか確認し、開ける場合は「PDF として印刷」などで保存し直してください。",
            pdfium_error=code,
        ) from exc


def _page_text(document: pdfium.PdfDocument, index: int) -> str:
    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            return normalize_text(textpage.get_text_range())
        finally:
            textpage.close()
    finally:
        page.close()


def _page_list(pages: list[int], limit: int = 30) -> str:
    shown = ", ".join(f"p.{n}" for n in pages[:limit])
    return shown + (f" ほか {len(pages) - limit} ページ" if len(pages) > limit else "")
