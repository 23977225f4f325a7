"""People's names in Japanese text, by SudachiPy's parts of speech.

Sudachi's core dictionary tags surnames and given names (``名詞,固有名詞,人名,姓|名``); a name
is a run of such words, a surname and a given name joined by at most one space
(``長谷川 美咲``, ``高橋　優子``, ``ハセガワ ミサキ``). A word the dictionary does not know,
right before 様 / さん / 氏 / 殿, is a name too. A run that goes on into a common noun
(``田中工業``, ``鈴木自動車``, ``梅田ビル``) or follows 株式会社 names a company or a place, not a
person, and is left alone; a title after the name (部長, 課長...) keeps it a name.
"""

from __future__ import annotations

import threading
from typing import Any

from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.sudachi import open_dictionary

__all__ = ["HONORIFICS", "MAX_CHUNK_CHARS", "find_names"]

# Sudachi refuses inputs over 49,149 UTF-8 bytes; 12,000 characters is at most 48,000 bytes.
MAX_CHUNK_CHARS = 12_000
HONORIFICS = frozenset({"様", "さま", "さん", "氏", "殿", "くん", "君", "ちゃん", "先生"})
TITLES = frozenset(
    {
        "部長",
        "課長",
        "係長",
        "主任",
        "社長",
        "専務",
        "常務",
        "取締役",
        "会長",
        "室長",
        "所長",
        "店長",
        "支店長",
        "担当",
        "宛",
        "宛て",
        "御中",
        "各位",
    }
)
COMPANY_PREFIXES = frozenset(
    {"株式会社", "有限会社", "合同会社", "合資会社", "(株)", "㈱", "（株）"}
)
SPACES = frozenset({" ", "\u3000"})

_local = threading.local()


def _tokenizer() -> Any:
    tokenizer = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        from sudachipy import SplitMode

        tokenizer = open_dictionary().tokenizer(mode=SplitMode.C)
        _local.tokenizer = tokenizer
    return tokenizer


def _chunks(text: str) -> list[tuple[int, str]]:
    """(offset, piece) pieces of at most MAX_CHUNK_CHARS, cut after a line end where possible."""
    pieces: list[tuple[int, str]] = []
    offset = 0
    while len(text) - offset > MAX_CHUNK_CHARS:
        window = text[offset : offset + MAX_CHUNK_CHARS]
        cut = window.rfind("\n")
        cut = cut + 1 if cut >= MAX_CHUNK_CHARS // 2 else MAX_CHUNK_CHARS
        pieces.append((offset, window[:cut]))
        offset += cut
    pieces.append((offset, text[offset:]))
    return pieces


def _is_name(pos: tuple[str, ...]) -> bool:
    return pos[2] == "人名"


def _ends_organization(morpheme: Any) -> bool:
    """Whether ``morpheme``, right after a name, makes it part of a company or place name."""
    pos = morpheme.part_of_speech()
    surface = morpheme.surface()
    if surface in HONORIFICS or surface in TITLES:
        return False
    return pos[0] == "名詞" and pos[1] in ("普通名詞", "固有名詞") and not _is_name(pos)


def _spans(morphemes: list[Any], offset: int) -> list[Span]:
    spans: list[Span] = []
    index = 0
    count = len(morphemes)
    while index < count:
        morpheme = morphemes[index]
        pos = morpheme.part_of_speech()
        unknown_before_honorific = (
            morpheme.is_oov()
            and pos[0] == "名詞"
            and index + 1 < count
            and morphemes[index + 1].surface() in HONORIFICS
        )
        if not (_is_name(pos) or unknown_before_honorific):
            index += 1
            continue
        first = last = index
        index += 1
        while index < count:
            current = morphemes[index]
            if _is_name(current.part_of_speech()):
                last = index
                index += 1
            elif (
                current.surface() in SPACES
                and index + 1 < count
                and _is_name(morphemes[index + 1].part_of_speech())
            ):
                index += 1
            else:
                break
        after = morphemes[last + 1] if last + 1 < count else None
        before = morphemes[first - 1] if first > 0 else None
        if after is not None and _ends_organization(after):
            continue
        if before is not None and before.surface() in COMPANY_PREFIXES:
            continue
        start = offset + morphemes[first].begin()
        end = offset + morphemes[last].end()
        spans.append(Span(start, end, PersonalKind.PERSON))
    return spans


def find_names(text: str) -> list[Span]:
    """The spans of people's names in ``text``."""
    if not text.strip():
        return []
    tokenizer = _tokenizer()
    spans: list[Span] = []
    for offset, piece in _chunks(text):
        spans.extend(_spans(list(tokenizer.tokenize(piece)), offset))
    return spans
