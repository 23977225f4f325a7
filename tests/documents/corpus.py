"""Generators for the files the file-layer tests read: real PDFs, Office files and text files.

Everything is generated, nothing is checked in: Japanese PDFs with reportlab's built-in CID
fonts (no font files), Word/PowerPoint/Excel files with their own libraries, and text files in
the encodings Japanese offices send. ``build_corpus`` writes the whole set once into a
directory (tests call it from a session-scoped fixture) and returns the paths together with
the sentences each file is known to contain.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "KANGXI_NORMALIZED",
    "KANGXI_SENTENCE",
    "Corpus",
    "build_corpus",
    "docx_bytes",
    "encrypted_pdf_bytes",
    "japanese_pdf_bytes",
    "page_sentence",
    "pptx_bytes",
    "xlsx_bytes",
]

CID_FONT = "HeiseiMin-W3"
# Written with Kangxi radicals (U+2F47 ⽇, U+2F08 ⼈, U+2F1D ⼝) and CJK radical forms (U+2ED1 ⻑,
# U+2EC4 ⻄), as some PDF producers do; extraction must return the ordinary kanji.
KANGXI_SENTENCE = "⽇本の⼈⼝と⻑期の⻄⽇本の統計"
KANGXI_NORMALIZED = "日本の人口と長期の西日本の統計"
TEXT_CONTENT = "請求書番号: INV-2024-001\n取引先: 株式会社サンプル商事\n金額: 1,234,567円（税込）\n"


def page_sentence(page: int) -> str:
    """The sentence written on page ``page`` (1-based) of every generated Japanese PDF."""
    return f"第{page}ページ: 経費精算の手順と承認フローについて説明します。"


def japanese_pdf_bytes(pages: int, *, blank_pages: tuple[int, ...] = ()) -> bytes:
    """A Japanese PDF: each page has ``page_sentence``, mixed English, and a number table.

    Pages listed in ``blank_pages`` (1-based) only carry a drawn rectangle, like a scan.
    """
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    _register_font()
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for page in range(1, pages + 1):
        if page in blank_pages:
            pdf.rect(100, 400, 300, 200, fill=1)
        else:
            pdf.setFont(CID_FONT, 12)
            pdf.drawString(50, 790, page_sentence(page))
            pdf.drawString(50, 770, f"Mixed text: Invoice No. {page:04d} 請求書 ＡＢＣ ｶﾀｶﾅ")
            for row in range(5):
                y = 740 - 18 * row
                cells = [f"科目{row + 1}", f"{(page * 1000 + row) * 123:,}", f"{row * 7.5:.1f}%"]
                for col, cell in enumerate(cells):
                    pdf.drawString(60 + 150 * col, y, cell)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def kangxi_pdf_bytes() -> bytes:
    from reportlab.pdfgen import canvas

    _register_font()
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.setFont(CID_FONT, 14)
    pdf.drawString(50, 780, KANGXI_SENTENCE)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def encrypted_pdf_bytes(password: str = "pw") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(japanese_pdf_bytes(2))))
    writer.encrypt(password)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def docx_bytes() -> bytes:
    """Heading, paragraph, a table with a merged title cell, then a closing paragraph."""
    import docx

    document = docx.Document()
    document.add_heading("経費精算規程", level=1)
    document.add_paragraph("第1条 この規程は経費精算の手続きを定める。")
    table = document.add_table(rows=3, cols=3)
    title = table.cell(0, 0).merge(table.cell(0, 2))
    title.text = "交通費の上限"
    for row, values in enumerate([("区分", "上限", "備考"), ("国内出張", "30,000円", "日帰り")]):
        for col, value in enumerate(values):
            table.cell(row + 1, col).text = value
    document.add_paragraph("第2条 領収書の原本を添付すること。")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_bytes() -> bytes:
    """Two slides: a title slide with notes, and a slide with a table."""
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    first.shapes.title.text = "月次決算の進め方"
    first.placeholders[1].text = "締め日は毎月5営業日目です"
    first.notes_slide.notes_text_frame.text = "発表者メモ: 遅延時は経理部長に報告"
    second = presentation.slides.add_slide(presentation.slide_layouts[5])
    second.shapes.title.text = "部門別予算"
    shape = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1))
    for row, values in enumerate([("部門", "予算"), ("営業部", "12,000,000")]):
        for col, value in enumerate(values):
            shape.table.cell(row, col).text = value
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def xlsx_bytes(*, cached_total: int | None = 3500) -> bytes:
    """A ledger: merged title row, blank row, header, rows, two formulas, a second sheet.

    openpyxl cannot store calculated values, so the first formula's cached value is patched
    into the sheet XML the way Excel saves it (``cached_total``); the second has none.
    """
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "売上"
    sheet["B2"] = "2024年度 売上明細"
    sheet.merge_cells("B2:E2")
    sheet.append([])
    sheet.append([None, "日付", "取引先", "金額", "備考"])
    sheet.append([None, "2024-04-01", "株式会社サンプル", 1500, "初回"])
    sheet.append([None, "2024-04-15", "テスト商事", 2000, None])
    sheet["D7"] = "=SUM(D5:D6)"
    sheet["E7"] = "=D7*1.1"
    book.create_sheet("メモ")["A1"] = "読まれないシート"
    buffer = io.BytesIO()
    book.save(buffer)
    if cached_total is None:
        return buffer.getvalue()
    return _patch_zip(
        buffer.getvalue(),
        "xl/worksheets/sheet1.xml",
        b"<f>SUM(D5:D6)</f><v></v>",
        f"<f>SUM(D5:D6)</f><v>{cached_total}</v>".encode(),
    )


@dataclass(frozen=True)
class Corpus:
    """Paths of the generated files (see ``build_corpus``)."""

    pdf_3: Path
    pdf_25: Path
    pdf_scan: Path  # 3 pages, page 2 without text
    pdf_kangxi: Path
    pdf_encrypted: Path
    pdf_truncated: Path
    html_as_pdf: Path
    text_as_xlsx: Path
    xlsx_as_docx: Path
    empty_txt: Path
    docx: Path
    pptx: Path
    xlsx: Path
    big_txt: Path
    utf8_bom_txt: Path
    cp932_csv: Path
    euc_jp_txt: Path
    unknown_ext: Path


def build_corpus(directory: Path) -> Corpus:
    """Write every test file into ``directory`` and return their paths."""
    full_pdf = japanese_pdf_bytes(3)
    big_line = "経理部の月次報告テキストです。売上と費用の内訳を記載します。\n"  # 31 chars
    files: dict[str, tuple[str, bytes]] = {
        "pdf_3": ("報告書.pdf", full_pdf),
        "pdf_25": ("長い資料.pdf", japanese_pdf_bytes(25)),
        "pdf_scan": ("スキャン.pdf", japanese_pdf_bytes(3, blank_pages=(2,))),
        "pdf_kangxi": ("統計.pdf", kangxi_pdf_bytes()),
        "pdf_encrypted": ("秘密.pdf", encrypted_pdf_bytes()),
        "pdf_truncated": ("途中まで.pdf", full_pdf[: len(full_pdf) // 2]),
        "html_as_pdf": (
            "ダウンロード.pdf",
            b"<!DOCTYPE html>\n<html><head><title>Login</title></head><body>Session expired"
            b"</body></html>\n",
        ),
        "text_as_xlsx": ("売上.xlsx", "日付,金額\n2024-04-01,1000\n".encode()),
        "xlsx_as_docx": ("規程.docx", xlsx_bytes()),
        "empty_txt": ("空.txt", b""),
        "docx": ("規程.docx", docx_bytes()),
        "pptx": ("説明資料.pptx", pptx_bytes()),
        "xlsx": ("売上明細.xlsx", xlsx_bytes()),
        "big_txt": ("大きい.txt", (big_line * 4000).encode()),
        "utf8_bom_txt": ("bom付き.txt", b"\xef\xbb\xbf" + TEXT_CONTENT.encode()),
        "cp932_csv": ("取引.csv", TEXT_CONTENT.encode("cp932")),
        "euc_jp_txt": ("古い.txt", TEXT_CONTENT.encode("euc-jp")),
        "unknown_ext": ("設計図.dwg", b"AC1032 binary drawing"),
    }
    paths: dict[str, Path] = {}
    for key, (name, data) in files.items():
        folder = directory / key  # one folder per file: two fixtures share a display name
        folder.mkdir()
        paths[key] = folder / name
        paths[key].write_bytes(data)
    return Corpus(**paths)


def _register_font() -> None:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    if CID_FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(CID_FONT))


def _patch_zip(data: bytes, member: str, old: bytes, new: bytes) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == member:
                assert old in content, f"{old!r} not in {member}"
                content = content.replace(old, new)
            target.writestr(info, content)
    return buffer.getvalue()
