"""HTML pages (a manual saved from an intranet or a help site) → plain text with structure.

Parsed with the standard library's ``html.parser`` (no network, no scripts, entities decoded):
``<script>``, ``<style>``, ``<template>``, ``<noscript>`` and ``<head>`` content is dropped;
headings become Markdown headings (``<h2>`` → ``## ``) so chunking keeps sections together,
list items become ``- `` lines, table cells are joined with `` | ``, and every block element
ends a line. The page title is kept in the metadata.
"""

from __future__ import annotations

from html.parser import HTMLParser

from keiri_agent.documents.encoding import decode_bytes
from keiri_agent.documents.models import ExtractedText
from keiri_agent.documents.normalize import normalize_text

__all__ = ["HTML_EXTENSIONS", "html_to_text", "read_html"]

HTML_EXTENSIONS = (".html", ".htm")
_SKIPPED = frozenset({"script", "style", "template", "noscript", "head", "svg"})
_BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "br",
        "ul", "ol", "table", "tr", "blockquote", "pre", "dl", "dt", "dd", "hr", "form",
        "figure", "figcaption", "address", "details", "summary",
    }
)  # fmt: skip
_HEADINGS = {f"h{level}": level for level in range(1, 7)}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.skipping = 0
        self.title: list[str] = []
        self.in_title = False
        self.cells = 0

    def _end_line(self) -> None:
        line = " ".join("".join(self.current).split())
        if line:
            self.lines.append(line)
        self.current = []
        self.cells = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIPPED:
            self.skipping += 1
            return
        if tag in _BLOCKS or tag in _HEADINGS or tag == "li":
            self._end_line()
        if tag in _HEADINGS:
            self.current.append("#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self.current.append("- ")
        elif tag in ("td", "th"):
            if self.cells:
                self.current.append(" | ")
            self.cells += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
            return
        if tag in _BLOCKS or tag in _HEADINGS or tag == "li":
            self._end_line()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if not self.skipping:
            self.current.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(text, title) of an HTML document."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    parser._end_line()
    return "\n".join(parser.lines), " ".join("".join(parser.title).split())


def read_html(data: bytes, name: str) -> ExtractedText:
    """Text of an HTML file (any Japanese encoding), NFKC-normalized like every other format."""
    html, encoding = decode_bytes(data, file=name)
    text, title = html_to_text(html)
    metadata: dict[str, object] = {"encoding": encoding}
    if title:
        metadata["title"] = normalize_text(title)
    return ExtractedText(file=name, text=normalize_text(text), format="html", metadata=metadata)
