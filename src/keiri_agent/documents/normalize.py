"""Text normalization for the file layer and for prompts.

Three steps, used everywhere text leaves a file:

* :func:`normalize_text` makes extracted text comparable: NFKC (full-width ASCII, half-width
  katakana, Kangxi radicals), the CJK radical forms NFKC leaves alone, no control characters,
  ``\\n`` newlines. Every extractor passes its output through it.
* :func:`compress_whitespace` squeezes runs of blanks and blank lines.
* :func:`normalize_for_prompt` turns many extracted documents into one block of at most
  ``budget`` characters (seed 004 §2: about 4,000): whitespace compressed, repeated lines and
  paragraphs (the same footer in every file) kept once, and every file given a fair share of
  the budget, so one long manual cannot crowd out a short invoice.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from keiri_agent.documents.limits import PROMPT_BUDGET_CHARS
from keiri_agent.documents.models import ExtractedText

__all__ = [
    "CJK_RADICAL_FORMS",
    "DUPLICATE_DOCUMENT_TEXT",
    "EMPTY_DOCUMENT_TEXT",
    "NO_DOCUMENTS_TEXT",
    "TRUNCATION_MARKER",
    "PromptDocuments",
    "PromptFileShare",
    "compress_whitespace",
    "normalize_for_prompt",
    "normalize_text",
]

# CJK Radicals Supplement (U+2E80-U+2EFF) forms that NFKC does not map but that Japanese PDFs
# emit for ordinary kanji (fonts whose ToUnicode table points at the radical). Only forms that
# are themselves the full Japanese character are listed; the Unicode name is given for each so
# the table can be checked against ``unicodedata.name`` (tests do).
CJK_RADICAL_FORMS: dict[str, str] = {
    "\u2ea0": "民",  # CJK RADICAL CIVILIAN (国⺠ in government PDFs)
    "\u2ec1": "虎",  # CJK RADICAL TIGER
    "\u2ec4": "西",  # CJK RADICAL WEST TWO
    "\u2ec6": "角",  # CJK RADICAL SIMPLIFIED HORN
    "\u2ed1": "長",  # CJK RADICAL LONG ONE
    "\u2ed8": "青",  # CJK RADICAL BLUE
    "\u2edd": "食",  # CJK RADICAL EAT ONE
    "\u2ee3": "骨",  # CJK RADICAL BONE
    "\u2ee4": "鬼",  # CJK RADICAL GHOST
    "\u2ee8": "麦",  # CJK RADICAL SIMPLIFIED WHEAT
    "\u2ee9": "黄",  # CJK RADICAL SIMPLIFIED YELLOW
    "\u2eeb": "斉",  # CJK RADICAL J-SIMPLIFIED EVEN
    "\u2eed": "歯",  # CJK RADICAL J-SIMPLIFIED TOOTH
    "\u2eef": "竜",  # CJK RADICAL J-SIMPLIFIED DRAGON
    "\u2ef2": "亀",  # CJK RADICAL J-SIMPLIFIED TURTLE
}

NO_DOCUMENTS_TEXT = "（参考資料は提供されていません）"
EMPTY_DOCUMENT_TEXT = "（テキストを抽出できませんでした）"
DUPLICATE_DOCUMENT_TEXT = "（前出の内容と重複するため省略）"
TRUNCATION_MARKER = "…（以下省略）"
# Lines shorter than this are never dropped as duplicates: "合計", "以上" or a lone number
# repeat legitimately and carry structure.
MIN_DEDUP_LINE_CHARS = 8
# Header names longer than this are shortened so 50 headers do not eat the budget.
MAX_HEADER_NAME_CHARS = 60
# A file gets a section only if at least this much of its text (or all of it) fits.
MIN_SECTION_CHARS = 20
# A cut on a line boundary may give back at most this share of a file's allowance.
_LINE_CUT_MIN_SHARE = 0.5

_RADICAL_TABLE = str.maketrans(CJK_RADICAL_FORMS)
_NEWLINES = re.compile(r"\r\n|\r|\u2028|\u2029|\x85")
# C0/C1 controls except \t \n, DEL, zero-width and BOM characters, noncharacters that PDF
# text layers use as hyphenation marks.
_UNWANTED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u200b\u2060\ufeff\ufffe\uffff]")
_HSPACE = re.compile(r"[^\S\n]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def normalize_text(text: str) -> str:
    """Return ``text`` in NFKC with CJK radicals mapped, controls removed, ``\\n`` newlines.

    Tabs and newlines survive (tables are tab-separated); form feeds and other controls do
    not. Idempotent: ``normalize_text(normalize_text(s)) == normalize_text(s)``.
    """
    text = _NEWLINES.sub("\n", text)
    text = text.replace("\f", "\n").replace("\v", "\n")
    text = _UNWANTED.sub("", text)
    text = unicodedata.normalize("NFKC", text)
    # NFKC can produce new line separators (none today), so the radical table comes last.
    return text.translate(_RADICAL_TABLE)


def compress_whitespace(text: str) -> str:
    """Squeeze blanks: one space (or tab, for table cells) per run, at most one blank line.

    Lines are stripped at both ends; form feeds become paragraph breaks.
    """
    text = _NEWLINES.sub("\n", text).replace("\f", "\n\n").replace("\v", "\n")

    def _squeeze(match: re.Match[str]) -> str:
        return "\t" if "\t" in match.group() else " "

    lines = [_HSPACE.sub(_squeeze, line).strip() for line in text.split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


@dataclass(frozen=True)
class PromptFileShare:
    """How much of one file reached the prompt."""

    name: str
    original_chars: int
    kept_chars: int
    truncated: bool
    omitted: bool = False  # not in the prompt at all: headers alone exceeded the budget


@dataclass(frozen=True)
class PromptDocuments:
    """Documents compressed for a prompt: ``text`` never exceeds ``budget`` characters.

    ``empty`` is true when no document contributed any text; ``text`` then says so in
    Japanese rather than being blank, so the model knows nothing was attached.
    """

    text: str
    empty: bool
    budget: int
    files: list[PromptFileShare] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        return any(f.truncated or f.omitted for f in self.files)


def normalize_for_prompt(
    docs: Sequence[ExtractedText] | Sequence[tuple[str, str]],
    budget: int = PROMPT_BUDGET_CHARS,
) -> PromptDocuments:
    """Join ``docs`` into at most ``budget`` characters with one ``### name`` section each.

    ``docs`` are extraction results or ``(name, text)`` pairs. Whitespace is compressed,
    duplicate lines and paragraphs are kept only at their first occurrence (across files),
    and the budget is water-filled: files shorter than an equal share keep everything, the
    others split what is left equally and are cut on a line boundary with
    ``TRUNCATION_MARKER``. Headers, separators and markers count toward the budget.
    """
    if budget <= 0:
        raise ValueError("budget must be positive")
    named = [_name_and_text(doc) for doc in docs]
    if not named:
        return PromptDocuments(_fit(NO_DOCUMENTS_TEXT, budget), True, budget, [])
    originals = [compress_whitespace(normalize_text(text)) for _, text in named]
    if not any(originals):
        names = "、".join(name for name, _ in named)
        message = f"（参考資料 {len(named)} 件からテキストを抽出できませんでした: {names}）"
        nothing = [PromptFileShare(name, 0, 0, False) for name, _ in named]
        return PromptDocuments(_fit(message, budget), True, budget, nothing)

    bodies = _deduplicate(originals)
    for i, body in enumerate(bodies):
        if not body:
            bodies[i] = DUPLICATE_DOCUMENT_TEXT if originals[i] else EMPTY_DOCUMENT_TEXT
    headers = [f"### {_short_name(name)}\n" for name, _ in named]
    count = _sections_that_fit(headers, bodies, budget)
    omitted = len(named) - count
    tail = f"\n\n…（他 {omitted} 件のファイルは文字数の上限のため省略）" if omitted else ""
    overhead = sum(len(h) for h in headers[:count]) + 2 * max(count - 1, 0) + len(tail)
    allowances = _water_fill([len(b) for b in bodies[:count]], budget - overhead)

    sections: list[str] = []
    shares: list[PromptFileShare] = []
    spare = 0  # characters a line-boundary cut gave back, offered to the next long file
    for i in range(count):
        body, allowance = bodies[i], allowances[i]
        truncated = len(body) > allowance
        if truncated:
            kept, kept_chars = _cut(body, allowance + spare)
            spare = allowance + spare - len(kept)
        else:
            kept, kept_chars = body, len(body)
        if body in (DUPLICATE_DOCUMENT_TEXT, EMPTY_DOCUMENT_TEXT):
            kept_chars, truncated = 0, False
        sections.append(headers[i] + kept)
        shares.append(PromptFileShare(named[i][0], len(originals[i]), kept_chars, truncated))
    for i in range(count, len(named)):
        shares.append(PromptFileShare(named[i][0], len(originals[i]), 0, True, omitted=True))
    text = "\n\n".join(sections) + tail if sections else tail.strip()
    return PromptDocuments(_fit(text, budget), False, budget, shares)


def _name_and_text(doc: ExtractedText | tuple[str, str]) -> tuple[str, str]:
    if isinstance(doc, ExtractedText):
        return PurePath(doc.file).name or doc.file, doc.text
    name, text = doc
    return PurePath(name).name or name, text


def _short_name(name: str) -> str:
    name = compress_whitespace(normalize_text(name)).replace("\n", " ") or "（名前なし）"
    if len(name) <= MAX_HEADER_NAME_CHARS:
        return name
    keep = MAX_HEADER_NAME_CHARS - 1
    return name[: keep // 2] + "…" + name[-(keep - keep // 2) :]


def _deduplicate(texts: list[str]) -> list[str]:
    """Drop paragraphs and long lines already seen, in this or an earlier text."""
    seen_paragraphs: set[str] = set()
    seen_lines: set[str] = set()
    result: list[str] = []
    for text in texts:
        paragraphs: list[str] = []
        for paragraph in text.split("\n\n"):
            if not _unseen(paragraph, seen_paragraphs):
                continue
            lines = [line for line in paragraph.split("\n") if _unseen(line, seen_lines)]
            if lines:
                paragraphs.append("\n".join(lines))
        result.append("\n\n".join(paragraphs))
    return result


def _unseen(piece: str, seen: set[str]) -> bool:
    """False for a long piece already in ``seen`` (which remembers it); short pieces always pass."""
    if len(piece) < MIN_DEDUP_LINE_CHARS:
        return True
    if piece in seen:
        return False
    seen.add(piece)
    return True


def _sections_that_fit(headers: list[str], bodies: list[str], budget: int) -> int:
    """How many leading files fit with their header and ``MIN_SECTION_CHARS`` of text each."""
    minimum_body = MIN_SECTION_CHARS + len(TRUNCATION_MARKER) + 1
    total = 0
    for i, (header, body) in enumerate(zip(headers, bodies, strict=True)):
        total += len(header) + min(len(body), minimum_body) + (2 if i else 0)
        tail_reserve = 60 if i + 1 < len(headers) else 0  # room for the "他 N 件" note
        if total + tail_reserve > budget:
            return i
    return len(headers)


def _water_fill(lengths: list[int], available: int) -> list[int]:
    """Split ``available`` so short items keep everything and long ones share the rest."""
    allowances = [0] * len(lengths)
    remaining = sorted(range(len(lengths)), key=lambda i: lengths[i])
    available = max(available, 0)
    while remaining:
        share = available // len(remaining)
        index = remaining[0]
        if lengths[index] > share:
            break
        allowances[index] = lengths[index]
        available -= lengths[index]
        remaining.pop(0)
    if remaining:
        share, extra = divmod(available, len(remaining))
        for rank, index in enumerate(sorted(remaining)):
            allowances[index] = share + (1 if rank < extra else 0)
    return allowances


def _cut(body: str, allowance: int) -> tuple[str, int]:
    """Cut ``body`` to ``allowance`` characters including the marker; also return chars kept."""
    marker = "\n" + TRUNCATION_MARKER
    room = allowance - len(marker)
    if room <= 0:
        return TRUNCATION_MARKER[: max(allowance, 0)], 0
    head = body[:room]
    newline = head.rfind("\n")
    if newline >= room * _LINE_CUT_MIN_SHARE:
        head = head[:newline]
    head = head.rstrip()
    return head + marker, len(head)


def _fit(text: str, budget: int) -> str:
    # Defensive: the arithmetic above already stays within budget; never exceed it.
    return text if len(text) <= budget else text[:budget]
