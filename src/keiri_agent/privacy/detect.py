"""All personal data in a text: identifiers by form, values by their label or column header,
names by Sudachi; overlapping finds resolved to one span each.

Where finds overlap, the longer one wins (a postal code with its address over the postal code
alone), and of two equally long the structured identifier wins over a name. A number inside a
table cell under a header that names something else (金額, 注文番号, 法人番号, 品番), in a table
with a personal column or without, or after a label naming a business number (受付番号), is not
taken for an identifier, nor are its digits where the text repeats them; and a company payer as banks print it (ｶ)ｱｵﾊﾞｼﾖｳｼﾞ) for a name.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from keiri_agent.bank_words import without_bank_words
from keiri_agent.privacy.headers import (
    BANK_COMPANY,
    HEADER_WORDS,
    labelled_spans,
    table_spans,
)
from keiri_agent.privacy.kana_names import known_as_name
from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.privacy.line_people import line_people
from keiri_agent.privacy.names import find_names
from keiri_agent.privacy.patterns import AT_IN_HIDING, find_identifiers, trailing_identifier
from keiri_agent.privacy.places import place_spans

__all__ = [
    "NUMBER_KINDS",
    "Found",
    "detect",
    "digits_of",
    "find_personal",
    "maybe_personal",
    "resolve",
]

# What every find but a name needs somewhere in the text (patterns.py and headers.py): a digit
# run that could start a phone number or hold 12 digits, an at sign (or one hidden: (at), ★),
# 〒, +81, a postal code, a date right before 生, or a word that labels personal data. A text with none of them holds no
# identifier; logs are mostly such text, and these scans are far cheaper than the patterns.
_CHARS = re.compile(r"[0-9０-９@＠〒]")
_DIGITS = re.compile(
    "|".join(
        (
            r"(?<![0-9０-９])[(（]?[0０][0-9０-９]",  # TEL03-..., TEL.03-... too
            r"[0-9０-９]{4}[-‐‑‒–—―−－ー 　]{0,2}[0-9０-９]{4}[-‐‑‒–—―−－ー 　]{0,2}[0-9０-９]{4}",
            r"[0-9０-９]{3}[-‐‑‒–—―−－ー][0-9０-９]{4}",
            r"[0-9０-９]日?[ 　]*生",
            r"[@＠〒]|[+＋][8８][1１]",
            # an account after a one-character or half-width kind (普 1234567, ﾌﾂｳ 1234567)
            r"(?:[普当貯][)）]?|ﾌﾂｳ|ﾄｳｻﾞ|ﾁﾖﾁｸ|フツウ|トウザ)[ 　]*[0-9０-９]{6}",
        )
    )
)
_WORDS = tuple(
    w
    for w in (
        *HEADER_WORDS,
        "普通",
        "当座",
        "貯蓄",
        "口座",
        "支店",
        "出張所",
        "営業部",
        "本店",
        "記号",
    )
    if not w.isascii()
)
_ASCII_WORDS = tuple(w for w in HEADER_WORDS if w.isascii())
_HIDDEN_AT = re.compile(AT_IN_HIDING)  # an e-mail address with its at sign hidden
_FIRST = re.compile("[" + re.escape("".join(sorted({w[0] for w in _WORDS}))) + "]")
_ASCII_ALPHA = re.compile("[A-Za-z]")
_PRIORITY = {kind: rank for rank, kind in enumerate(PersonalKind)}  # earlier = stronger
# Identifiers that are numbers alone, which a cell under 金額, 注文番号, 法人番号 or 品番 is not
# (an e-mail address or an address there is still one).
NUMBER_KINDS = _NUMBERS = frozenset(
    (PersonalKind.MY_NUMBER, PersonalKind.CARD, PersonalKind.PHONE, PersonalKind.ACCOUNT)
)


@dataclass(frozen=True)
class Found:
    """What :func:`detect` finds in a text: its personal data, and the digits of the numbers it
    gives as business numbers (in a 会員番号 column, after 受付番号), which a job keeps as such."""

    spans: list[Span]
    business: frozenset[str] = frozenset()


def resolve(spans: Iterable[Span]) -> list[Span]:
    """Non-overlapping spans in text order: longer first, then the stronger kind."""
    ordered = sorted(spans, key=lambda s: (-(s.end - s.start), _PRIORITY[s.kind], s.start))
    starts: list[int] = []  # the taken spans, kept in text order
    taken: list[Span] = []
    for span in ordered:
        if span.end <= span.start:
            continue
        at = bisect.bisect_left(starts, span.start)
        if at > 0 and taken[at - 1].end > span.start:
            continue
        if at < len(taken) and taken[at].start < span.end:
            continue
        starts.insert(at, span.start)
        taken.insert(at, span)
    return taken


def digits_of(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isdigit())


def _own_numbers(text: str, neutral: tuple[int, int], identifiers: list[Span]) -> tuple[int, int]:
    """A business number's span up to a number of a personal kind that begins after a space in
    it (受付番号：12345678 090 1234 5678, the rest of a line under 会員番号): written after the
    business number, unlabelled, that number is judged on its own."""
    start, end = neutral
    for span in identifiers:
        if span.kind in _NUMBERS and start < span.start < end and text[span.start - 1] in " 　":
            end = span.start
    return start, len(text[start:end].rstrip(" 　")) + start


def _before_tail(neutral: tuple[int, int], tails: list[Span]) -> tuple[int, int]:
    """A business number's span up to the identifier its groups go on into, the separator
    before it left out."""
    start, end = neutral
    for tail in tails:
        if start < tail.start < end:
            end = tail.start - 1
    return start, end


def _inside(span: Span, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= span.start and span.end <= end for start, end in ranges)


def _placed(text: str, span: Span, places: list[tuple[int, int]]) -> bool:
    """Whether ``span`` is a place (``places``) read on into a word that is no given name
    (営業所：宮崎　合計 read as a surname and a given name)."""
    return any(
        start == span.start
        and end < span.end
        and not known_as_name(text[end : span.end].strip(" 　"), ("名",))
        for start, end in places
    )


def maybe_personal(text: str) -> bool:
    """Whether ``text`` may hold personal data other than a bare name (a quick test)."""
    if _CHARS.search(text) is not None and _DIGITS.search(text) is not None:
        return True
    if _HIDDEN_AT.search(text) is not None:
        return True
    if _FIRST.search(text) is not None and any(word in text for word in _WORDS):
        return True
    if _ASCII_ALPHA.search(text) is not None:
        lower = text.lower()
        return any(word in lower for word in _ASCII_WORDS)
    return False


def find_personal(text: str, *, names: bool = True) -> list[Span]:
    """The personal data in ``text``; ``names=False`` skips Sudachi (labelled and tabled names
    are still found)."""
    return detect(text, names=names).spans


def detect(text: str, *, names: bool = True) -> Found:
    """:func:`find_personal`'s spans, and the digits of the business numbers of ``text``."""
    if not text or (not names and not maybe_personal(text)):
        return Found([])
    tables = table_spans(text)
    identifiers = find_identifiers(text)
    tables.neutral = [_own_numbers(text, span, identifiers) for span in tables.neutral]
    # a card or マイナンバー whose groups go on from a business number's (受付番号：1234 5678 4111 …)
    tails = [
        tail for start, end in tables.neutral if (tail := trailing_identifier(text, start, end))
    ]
    identifiers += tails
    tables.neutral = [_before_tail(span, tails) for span in tables.neutral]
    # a number the text gives as a business number (in a 会員番号 column, after 受付番号) is that
    # number wherever else the text repeats it (a column's examples: 例:1234 5678 9018/...)
    named = frozenset(digits_of(text[start:end]) for start, end in tables.neutral) - {""}
    found = [
        s
        for s in identifiers
        if not (
            s.kind in _NUMBERS
            and (_inside(s, tables.neutral) or digits_of(text[s.start : s.end]) in named)
        )
    ]
    found.extend(labelled_spans(text))
    found.extend(line_people(text))
    found.extend(tables.personal)
    if names:
        # a company payer as banks print it (ｶ)ｱｵﾊﾞｼﾖｳｼﾞ) holds no person's name
        # (also glued to a bank's word: ﾃﾞﾝｼﾝｶ)ｱｵﾊﾞｼﾖｳｼﾞ)
        bare = without_bank_words(text)
        outside = tables.neutral + [m.span() for m in BANK_COMPANY.finditer(bare)]
        # a place listed or tabled as a place (地域別（石川・富山）) is no surname
        places = tables.places + place_spans(text)
        outside += places
        found.extend(
            s for s in find_names(text) if not _inside(s, outside) and not _placed(text, s, places)
        )
    return Found(resolve(found), named)
