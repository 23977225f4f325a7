"""Page-aware chunking of manual text (already NFKC-normalized by the file layer).

A PDF's text arrives with its pages separated by ``PAGE_SEPARATOR``; every chunk stays within
one page so a hit can cite its page. Files without fixed pages (Markdown, text, Word) are one
"page" ``None``. Within a page, lines are packed greedily up to ``max_chars``; a Markdown
heading starts a new chunk once the current one is reasonably full, and the last line of a
chunk is repeated at the start of the next (``overlap``) so a sentence cut by a chunk border is
still found whole; a Markdown chunk that starts inside a section repeats the section's ``#`` /
``##`` heading (the release-notes version a fix belongs to). A line longer than ``max_chars`` is cut after a sentence end.

Chunk ids are stable: ``<first 16 hex of the file's SHA-256>-p<page>-c<ordinal>`` (page 0 for
files without pages), so re-ingesting an unchanged file gives the same ids.

``search_text`` is what BM25 tokenizes: PDF line wraps inside Japanese words ("正し\\nくありません")
are joined so the tokenizer sees the word whole; the stored ``text`` keeps its lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from keiri_agent.agents.helpdesk.knowledge.models import ManualChunk
from keiri_agent.documents.pdf import PAGE_SEPARATOR
from keiri_agent.errors import input_error

__all__ = [
    "DEFAULT_CHUNK_CHARS",
    "DEFAULT_OVERLAP_CHARS",
    "check_chunking",
    "chunk_id",
    "chunk_text",
    "search_text",
]

DEFAULT_CHUNK_CHARS = 600
DEFAULT_OVERLAP_CHARS = 120  # at most this much of the previous chunk's end is repeated
MIN_CHUNK_CHARS = 50
MAX_CHUNK_CHARS = 12_000  # what the tokenizer takes in one piece
MIN_HEADING_CUT_SHARE = 3  # a heading starts a new chunk once the current one is 1/3 full
_SENTENCE_END = re.compile(r"(?<=[。．！？!?])")
_JA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_WRAP = re.compile(f"(?<=[{_JA}])\n(?=[{_JA}])")


def chunk_id(file_hash: str, page: int | None, ordinal: int) -> str:
    return f"{file_hash[:16]}-p{page or 0}-c{ordinal}"


def check_chunking(max_chars: int, overlap: int) -> None:
    """Refuse chunk settings that cannot work, with a Japanese message and hint."""
    if not MIN_CHUNK_CHARS <= max_chars <= MAX_CHUNK_CHARS or not 0 <= overlap < max_chars // 2:
        raise input_error(
            f"チャンクの設定が不正です（最大 {max_chars} 文字、重なり {overlap} 文字）。",
            f"最大文字数は {MIN_CHUNK_CHARS}〜{MAX_CHUNK_CHARS:,}、重なりは 0 以上で最大文字数の"
            "半分未満にしてください（KEIRI_HELPDESK_CHUNK_CHARS / KEIRI_HELPDESK_CHUNK_OVERLAP、"
            "または --chunk-chars / --chunk-overlap）。",
            chunk_chars=max_chars,
            chunk_overlap=overlap,
        )


def search_text(text: str) -> str:
    """``text`` with line wraps between two Japanese characters removed (for tokenizing)."""
    return _WRAP.sub("", text)


def chunk_text(
    text: str,
    *,
    file_name: str,
    file_hash: str,
    paged: bool,
    max_chars: int = DEFAULT_CHUNK_CHARS,
    overlap: int = DEFAULT_OVERLAP_CHARS,
) -> list[ManualChunk]:
    """Chunks of one file's text; ``paged`` files are split at ``PAGE_SEPARATOR`` first."""
    check_chunking(max_chars, overlap)
    pages: list[tuple[int | None, str]]
    if paged:
        pages = [(number, page) for number, page in enumerate(text.split(PAGE_SEPARATOR), 1)]
    else:
        pages = [(None, text)]
    chunks: list[ManualChunk] = []
    for page, page_text in pages:
        for ordinal, piece in enumerate(_pack(_lines(page_text, max_chars), max_chars, overlap)):
            chunks.append(
                ManualChunk(
                    id=chunk_id(file_hash, page, ordinal),
                    file_name=file_name,
                    page=page,
                    ordinal=ordinal,
                    text=piece,
                )
            )
    return chunks


def _lines(text: str, max_chars: int) -> Iterator[str]:
    """Non-blank lines, each at most ``max_chars`` long (long ones cut after sentences)."""
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        while len(line) > max_chars:
            window = line[:max_chars]
            cuts = [m.start() for m in _SENTENCE_END.finditer(window) if m.start() > 0]
            cut = cuts[-1] if cuts and cuts[-1] >= max_chars // 3 else max_chars
            yield line[:cut].strip()
            line = line[cut:].strip()
        if line:
            yield line


def _heading_level(line: str) -> int:
    """Markdown heading level of ``line`` (0 when it is not a heading)."""
    level = len(line) - len(line.lstrip("#"))
    return level if level and line[level : level + 1] == " " else 0


def _pack(lines: Iterator[str], max_chars: int, overlap: int) -> Iterator[str]:
    current: list[str] = []
    size = 0
    fresh = 0  # lines in ``current`` that are not repeated from the previous chunk
    section = ""  # the latest top-level Markdown heading (# or ##): context for later chunks
    for line in lines:
        level = _heading_level(line)
        heading = level > 0 and size >= max_chars // MIN_HEADING_CUT_SHARE
        if current and fresh and (size + 1 + len(line) > max_chars or heading):
            yield "\n".join(current)
            tail = current[-1]
            carried = [tail] if 0 < len(tail) <= overlap and not heading else []
            # A chunk that starts inside a section repeats the section's heading.
            if section and not 0 < level <= 2 and section not in carried:
                carried.insert(0, section)
            current, size, fresh = carried, sum(len(x) + 1 for x in carried), 0
        if 0 < level <= 2:
            section = line if len(line) <= overlap else ""
        current.append(line)
        size += len(line) + 1
        fresh += 1
    if current and fresh:
        yield "\n".join(current)
