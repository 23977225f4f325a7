"""Write the help desk's sample knowledge base (``examples/helpdesk/``) from ``content/``.

The fictional "XYZシステム" (an in-house expense, invoicing and approval system) has:

- ``manual/XYZシステム_ユーザーマニュアル.pdf`` — the user manual, 18 A4 pages rendered from
  ``content/manual.txt`` (one ``=== `` section per page; the script fails if a section
  overflows its page, so page numbers in the evaluation set stay true);
- ``manual/リリースノート.md`` — release notes (``content/release_notes.md``, UTF-8);
- ``qa.csv`` — 36 question/answer pairs from ``content/qa.tsv``, written as **CP932**
  (Shift_JIS, CRLF, what Excel on Japanese Windows saves), to prove the encoding handling.

The output is byte-for-byte reproducible (reportlab's invariant mode, fixed metadata), and
``tests/examples/test_helpdesk_kb.py`` checks that the committed files are what this writes.

    python examples/helpdesk/make_kb.py            # rewrites examples/helpdesk/
    python examples/helpdesk/make_kb.py OUT_DIR    # writes somewhere else

Needs reportlab (installed with ``pip install -e ".[dev]"``).
"""

from __future__ import annotations

import csv
import io
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MANUAL_NAME", "QA_NAME", "RELEASE_NOTES_NAME", "Page", "parse_manual", "write_kb"]

HERE = Path(__file__).resolve().parent
CONTENT = HERE / "content"
MANUAL_NAME = "XYZシステム_ユーザーマニュアル.pdf"
RELEASE_NOTES_NAME = "リリースノート.md"
QA_NAME = "qa.csv"
BODY_FONT = "HeiseiMin-W3"
HEADING_FONT = "HeiseiKakuGo-W5"
FOOTER = "XYZシステム ユーザーマニュアル 第 3.2 版"
# Characters that CP932 spells differently: WAVE DASH is FULLWIDTH TILDE on Windows.
CP932_SPELLING = str.maketrans({"〜": "～"})


@dataclass
class Page:
    """One manual page: blocks of (kind, payload) in order."""

    label: str
    blocks: list[tuple[str, object]] = field(default_factory=list)


def parse_manual(text: str) -> list[Page]:
    """``content/manual.txt`` → pages. Lines: ``# h1``, ``## h2``, ``- bullet``, ``| a | b |``
    table rows (the first row is the header), other lines are paragraphs (a blank line ends one).
    """
    pages: list[Page] = []
    paragraph: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if paragraph:
            pages[-1].blocks.append(("p", "".join(paragraph)))
            paragraph.clear()
        if table:
            pages[-1].blocks.append(("table", [row[:] for row in table]))
            table.clear()

    for line in text.splitlines():
        if line.startswith("=== "):
            if pages:
                flush()
            pages.append(Page(line[4:].strip()))
            continue
        if not pages:
            raise ValueError("manual.txt must start with a '=== ' page line")
        stripped = line.strip()
        if stripped.startswith("|"):
            if paragraph:
                flush()
            table.append([cell.strip() for cell in stripped.strip("|").split("|")])
            continue
        if table:
            flush()
        if not stripped:
            flush()
        elif stripped.startswith("## "):
            flush()
            pages[-1].blocks.append(("h2", stripped[3:]))
        elif stripped.startswith("# "):
            flush()
            pages[-1].blocks.append(("h1", stripped[2:]))
        elif stripped.startswith("- "):
            flush()
            pages[-1].blocks.append(("li", stripped[2:]))
        else:
            paragraph.append(stripped)
    flush()
    return pages


def _column_widths(header: list[str], total: float) -> list[float]:
    # The first column holds short keys (a code, a role, a chapter): give the text the rest.
    shares = {
        2: [0.26, 0.74],
        3: [0.13, 0.30, 0.57] if header[0] == "コード" else [0.12, 0.74, 0.14],
    }
    if header[0] == "帳票":
        shares[3] = [0.22, 0.50, 0.28]
    return [total * s for s in shares.get(len(header), [1 / len(header)] * len(header))]


def render_manual(pages: list[Page]) -> bytes:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table
    from reportlab.platypus.tables import TableStyle

    for font in (BODY_FONT, HEADING_FONT):
        if font not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(UnicodeCIDFont(font))
    h1 = ParagraphStyle("h1", fontName=HEADING_FONT, fontSize=15, leading=22, spaceAfter=6)
    h2 = ParagraphStyle("h2", fontName=HEADING_FONT, fontSize=11, leading=16, spaceBefore=6)
    body = ParagraphStyle("b", fontName=BODY_FONT, fontSize=9.5, leading=14, wordWrap="CJK")
    bullet = ParagraphStyle("li", parent=body, leftIndent=10, bulletIndent=2)
    cell = ParagraphStyle("td", fontName=BODY_FONT, fontSize=8.5, leading=11.5, wordWrap="CJK")
    head_cell = ParagraphStyle("th", parent=cell, fontName=HEADING_FONT)

    buffer = io.BytesIO()
    doc = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=16 * mm,
        bottomMargin=18 * mm,
        title="XYZシステム ユーザーマニュアル 第3.2版",
        author="株式会社エックスワイゼット 情報システム部",
        subject="XYZシステムの操作手順とエラーコード",
        creator="keiri-agent examples/helpdesk/make_kb.py",
        invariant=1,
    )

    def footer(canvas: Any, document: Any) -> None:
        canvas.saveState()
        canvas.setFont(BODY_FONT, 8)
        canvas.drawCentredString(A4[0] / 2, 10 * mm, f"{FOOTER}　- {document.page} -")
        canvas.restoreState()

    story: list[object] = []
    for number, page in enumerate(pages):
        if number:
            story.append(PageBreak())
        for kind, payload in page.blocks:
            if kind == "h1":
                story.append(Paragraph(str(payload), h1))
            elif kind == "h2":
                story.append(Paragraph(str(payload), h2))
            elif kind == "li":
                story.append(Paragraph(str(payload), bullet, bulletText="・"))
            elif kind == "p":
                story.append(Paragraph(str(payload), body))
                story.append(Spacer(1, 3))
            else:
                rows = payload
                assert isinstance(rows, list)
                styled = [
                    [Paragraph(text, head_cell if r == 0 else cell) for text in row]
                    for r, row in enumerate(rows)
                ]
                table = Table(styled, colWidths=_column_widths(rows[0], doc.width), repeatRows=1)
                table.setStyle(
                    TableStyle(
                        [
                            ("GRID", (0, 0), (-1, -1), 0.4, colors.grey),
                            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8eef7")),
                            ("VALIGN", (0, 0), (-1, -1), "TOP"),
                        ]
                    )
                )
                story.extend([Spacer(1, 2), table, Spacer(1, 4)])
    doc.build(story, onFirstPage=footer, onLaterPages=footer)
    if doc.page != len(pages):
        raise SystemExit(
            f"the manual has {doc.page} pages for {len(pages)} sections: a section overflows"
            " its page (shorten it in content/manual.txt)"
        )
    return buffer.getvalue()


def qa_csv_bytes(tsv: str) -> bytes:
    """The Q/A pairs as a CP932 CSV with CRLF line ends (Excel's "CSV (コンマ区切り)")."""
    rows = list(csv.reader(io.StringIO(tsv), delimiter="\t"))
    if rows[0] != ["Q", "A"] or any(len(row) != 2 or not all(row) for row in rows[1:]):
        raise SystemExit("content/qa.tsv must have the header Q<TAB>A and two cells per row")
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue().translate(CP932_SPELLING).encode("cp932")


def write_kb(target: Path) -> list[Path]:
    """Write the three files under ``target``; returns their paths."""
    manual_dir = target / "manual"
    manual_dir.mkdir(parents=True, exist_ok=True)
    pages = parse_manual((CONTENT / "manual.txt").read_text(encoding="utf-8"))
    outputs = {
        manual_dir / MANUAL_NAME: render_manual(pages),
        manual_dir / RELEASE_NOTES_NAME: (CONTENT / "release_notes.md").read_bytes(),
        target / QA_NAME: qa_csv_bytes((CONTENT / "qa.tsv").read_text(encoding="utf-8")),
    }
    for path, data in outputs.items():
        path.write_bytes(data)
    return list(outputs)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for written in write_kb(out):
        print(written)
