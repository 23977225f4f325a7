"""Lists down the page: a label on a line of its own, then one item a line.

A table of one column reaches a model as such a list (a sheet's column copied into a mail,
a note's ``支店一覧``, ``担当者:``), and so does a record written down the page (``担当者`` then
``長谷川 美咲`` then ``電話`` then ``03-...``). The label is then the items' header:
``privacy.headers`` reads the items under a personal label as that kind (``担当者一覧`` over
``石川`` and ``長野``: people), ``privacy.places`` those under a word about places as places
(``支店一覧`` over ``石川`` and ``富山``).

:func:`page_lists` gives each label line and the first cell of each line below it: after
blank lines right below the label, up to the next blank line, a Markdown heading (``## 計画``),
a line of prose (too long, or ending a sentence) or another label (as the caller tells). A label
is a noun phrase: a line ending in hiragana asks or says something (会社の住所を教えて) and
heads nothing, unless it is kana alone (ふりがな). A line's bullet
(・, -, ●, 1., ①) is no part of its item, nor are the figures after it (``石川　1,200,000円``,
``渡辺：済``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["PageList", "page_lists"]

MAX_LABEL_CHARS = 20  # a longer line is no label
MAX_ITEM_LINE_CHARS = 40  # a longer line is prose, and ends the list
# A label: no list of its own (・、, |, tabs), a colon only at its end, no sentence's end.
_LABEL = re.compile(
    r"[^\s・、，,/／|｜\t:：。！？!?「」]+(?:[ 　][^\s・、，,/／|｜\t:：。！？!?「」]+)?[:：]?"
)
_BULLET = re.compile(r"[ 　]*(?:[・･•●○■□◆◇▪\-－‐*＊]|[0-9０-９]{1,2}[.．)）]|[①-⑳])?[ 　]*")
# Where an item's first cell ends: a colon, a tab, a comma, a wide gap, figures after a space.
_CELL_END = re.compile(r"[\t:：,，|｜]|[ 　]+(?=[0-9０-９¥￥△▲+＋(（-])| {2,}")
_PROSE = re.compile(r"[。！？!?]|(?:です|ます|ください)$")
# A label is a noun phrase: it ends in a noun, not in hiragana (会社の住所を教えて, 連絡先は), unless
# it is kana alone (ふりがな).
_ASKS = re.compile(r"(?=.*[^ぁ-ゖァ-ヺー・]).*[ぁ-ゖ]")
_HEADING = "#"  # a Markdown heading (## 計画) is the text's structure, no item


@dataclass(frozen=True)
class PageList:
    """A label (without its colon) and the (start, end) of each item below it."""

    label: str
    items: list[tuple[int, int]]


def _lines(text: str, at: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each line from ``at`` (a line's start) on."""
    while at <= len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield at, end
        at = end + 1


def page_lists(text: str, is_label: Callable[[str], bool]) -> Iterator[PageList]:
    """Each line ``is_label`` takes for a label (its colon stripped), with the items below it
    up to the next such line; a label with no item below is left out."""
    if "\n" not in text:
        return
    for start, end in _lines(text, 0):
        line = text[start:end].strip(" 　")
        if not _labels(line, is_label):
            continue
        items = list(_items(text, end + 1, is_label))
        if items:
            yield PageList(line.rstrip(":："), items)


def _labels(line: str, is_label: Callable[[str], bool]) -> bool:
    return (
        0 < len(line) <= MAX_LABEL_CHARS
        and _LABEL.fullmatch(line) is not None
        and _ASKS.fullmatch(line.rstrip(":：")) is None
        and is_label(line.rstrip(":："))
    )


def _items(text: str, at: int, is_label: Callable[[str], bool]) -> Iterator[tuple[int, int]]:
    seen = False
    for start, end in _lines(text, at):
        line = text[start:end].strip(" 　")
        if not line:
            if seen:
                return
            continue
        if (
            line.startswith(_HEADING)
            or len(line) > MAX_ITEM_LINE_CHARS
            or _PROSE.search(line) is not None
            or _labels(line, is_label)
        ):
            return
        seen = True
        bullet = _BULLET.match(text, start, end)
        begin = bullet.end() if bullet is not None else start
        cell = _CELL_END.search(text, begin, end)
        stop = cell.start() if cell is not None else end
        while stop > begin and text[stop - 1] in " 　":
            stop -= 1
        if stop > begin:
            yield begin, stop
