"""Generated Japanese business PDFs for the extraction benchmark.

Each page carries a known sentence (to check correctness), a wrapped paragraph of mixed
Japanese and English, and a table of numbers, set with reportlab's built-in CID fonts
(``HeiseiMin-W3`` body, ``HeiseiKakuGo-W5`` headings), so no font files are needed.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

__all__ = ["BenchmarkPdf", "generate_corpus", "known_sentence"]

BODY_FONT = "HeiseiMin-W3"
HEADING_FONT = "HeiseiKakuGo-W5"
_PARAGRAPH = (
    "当社の{month}月度の売上高は前年同月比で{growth}%増加しました。主な要因は、"
    "クラウドサービス（SaaS）の新規契約と、Enterprise プランへのアップグレードです。"
    "販売費及び一般管理費は、人件費と広告宣伝費の増加により前年を上回りました。"
    "なお、為替レートは 1 USD = {rate} 円で換算しています。"
)


@dataclass(frozen=True)
class BenchmarkPdf:
    """One generated PDF: its bytes, page count and the sentences it must contain."""

    name: str
    data: bytes
    pages: int
    sentences: tuple[str, ...]


def known_sentence(file: int, page: int) -> str:
    """The sentence on page ``page`` of file ``file`` (both 1-based)."""
    return f"【文書{file:02d}-{page:02d}】本ページは売上高と販管費の内訳を示します。"


def _table_value(file: int, page: int, row: int, col: int) -> str:
    return f"{(file * 7919 + page * 104_729 + row * 1_299_709 + col * 15_485_863) % 9_999_999:,}"


def generate_corpus(files: int = 10, pages: int = 20) -> list[BenchmarkPdf]:
    """``files`` PDFs of ``pages`` pages each."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table

    for font in (BODY_FONT, HEADING_FONT):
        if font not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(UnicodeCIDFont(font))
    heading = ParagraphStyle("h", fontName=HEADING_FONT, fontSize=14, leading=20)
    body = ParagraphStyle("b", fontName=BODY_FONT, fontSize=10, leading=15, wordWrap="CJK")

    corpus: list[BenchmarkPdf] = []
    for file in range(1, files + 1):
        story: list[object] = []
        sentences: list[str] = []
        for page in range(1, pages + 1):
            sentence = known_sentence(file, page)
            sentences.append(sentence)
            story.append(Paragraph(f"第{page}章 月次決算報告（Monthly Report）", heading))
            story.append(Paragraph(sentence, body))
            for month in range(1, 4):
                text = _PARAGRAPH.format(month=month, growth=page + month, rate=140 + file)
                story.append(Paragraph(text, body))
            story.append(Spacer(1, 8))
            rows = [["勘定科目", "Q1", "Q2", "Q3", "Q4"]]
            for row in range(12):
                rows.append(
                    [f"科目{row + 1:02d}"] + [_table_value(file, page, row, c) for c in range(4)]
                )
            table = Table(rows)
            table.setStyle(
                [
                    ("FONTNAME", (0, 0), (-1, -1), BODY_FONT),
                    ("FONTSIZE", (0, 0), (-1, -1), 9),
                    ("GRID", (0, 0), (-1, -1), 0.5, colors.grey),
                    ("ALIGN", (1, 1), (-1, -1), "RIGHT"),
                ]
            )
            story.append(table)
            sentences.append(_table_value(file, page, 11, 3))
            story.append(PageBreak())
        buffer = io.BytesIO()
        SimpleDocTemplate(buffer, pagesize=A4).build(story)
        corpus.append(
            BenchmarkPdf(f"report_{file:02d}.pdf", buffer.getvalue(), pages, tuple(sentences))
        )
    return corpus
