"""Places listed or tabled as places, which are no people's names though they are surnames too.

石川, 長野, 福井, 松本 are prefectures or cities and surnames both, and SudachiPy tags them by
context: in 「地域別売上（石川・富山）」 it reads 石川 as a surname, and a list beside a name found
is read as a list of people (``privacy.name_context``). Where the text says it speaks of places,
they are places:

- the items of a list after a word about places (:data:`PLACE_WORDS`: 地域別, 県別, エリア, 支店,
  営業所, 拠点, 所在地...) and a colon, a bracket or a space (``県別売上: 石川、富山``,
  ``地域別（石川・富山）``), after a place's name and a colon or a bracket (``北陸（石川・富山）``),
  or before a word about places (``石川・富山・福井の3県``, ``石川と富山の支店``); unless a word
  about people stands between the word and the list (支店長, 地域担当者: a title, 担当, 者) or an
  item of the list is a person's name and no place (支店: 石川、佐藤);
- the cells of a table's column headed by such a word (``都道府県,売上`` then ``石川,1200``:
  ``privacy.headers`` reads tables), also one written down the page (``支店一覧`` then ``石川``
  and ``富山`` on lines of their own: ``privacy.page_lists``), and a header or label about people that speaks of places
  (担当地域: 長野, 担当支店) names no person.

Only a whole item or cell that is a place counts: one the dictionary knows as a place's name
(地名), with or without a suffix (石川県, 松本市, 金沢支店). 石川様, 石川 太郎 and 石川部長 are
no such item and stay names. :func:`place_spans` gives where they are; ``privacy.detect`` takes
no name found inside one, nor one that is such a place read on into a word that is no given name
(``営業所：宮崎　合計`` read as a surname and a given name).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from keiri_agent.privacy.kana_names import known_as_name
from keiri_agent.sudachi import known_as_place, tagged_place, thread_tokenizer

__all__ = ["PLACE_WORDS", "is_place", "names_a_place", "place_spans", "speaks_of_places"]

# Words that say what follows is a place, or a list of places.
PLACE_WORDS = (
    "地域",
    "地区",
    "エリア",
    "県",
    "支店",
    "支社",
    "営業所",
    "出張所",
    "拠点",
    "所在地",
    "店舗",
    "工場",
    "市",
    "方面",
    "産地",
    "出荷",
    "地方",
    "事業所",
    "ブロック",
)
# Words about people after a word about places: a title (支店長, 営業所長), 担当, 者, 員.
_PEOPLE_WORDS = ("長", "担当", "者", "員", "氏名", "名前", "様", "さん", "メンバー", "スタッフ")
# A place's suffix on an item (石川県, 松本市, 金沢支店).
_SUFFIX = re.compile(r"(?:都|道|府|県|市|区|町|村|郡|地方|支店|支社|営業所|工場|店)$")
_AFTER = 8  # letters between the word about places and its list (別売上, の件数)
# The list after a label: a colon, an opening bracket or spaces, then its items ...
_OPENERS = re.compile(r"[ 　]*(?:[:：][ 　]*|[（(【「][ 　]*|[ 　]+)")
# ... up to the closing bracket, else the line's end or a wide gap (営業所：宮崎　合計 1,200,000円)
_BRACKETS = frozenset("（(【「")
_BRACKET_END = re.compile(r"[）)】」\n]")
_END = re.compile(r"[\n。]|　| {2,}")
# Places listed before a word about places (石川・富山・福井の3県, 北海道・東北エリア, 石川と富山の支店)
_BEFORE_PLACE_WORD = re.compile(
    r"(?<![一-龥々ァ-ヶー])((?:[一-龥々]{2,4}[・、と])+[一-龥々]{2,4})"
    r"(?=(?:の|各|[0-9０-９一二三四五六七八九十]+)*(?:"
    + "|".join(map(re.escape, PLACE_WORDS))
    + "))"
)
# After a place's name, only a colon or a bracket opens a list (北陸（...）, 関東: ...).
_PLACE_OPENER = re.compile(r"(?<=[一-龥々ァ-ヶー])(?:[:：]|[（(])[ 　]*")
_BREAKS = re.compile(r"[・、，,/／|｜\t（()）と]")
_HEAD = re.compile(r"[^ぁ-ん\s]+(?=[のをはがとでにへもや])")


def is_place(item: str) -> bool:
    """Whether the dictionary knows ``item``, or it without a place's suffix, as a place."""
    return any(word and known_as_place(word) for word in (item, _SUFFIX.sub("", item)))


def speaks_of_places(label: str) -> bool:
    """Whether ``label`` (a table's header, the words before a list) is about places: a word
    about places with no word about people after it (地域別売上, 担当地域; not 支店長, 地域担当者)."""
    at = max((label.rfind(word) + len(word) for word in PLACE_WORDS if word in label), default=-1)
    if at < 0:
        return False
    return not any(word in label[at:] for word in _PEOPLE_WORDS)


def names_a_place(text: str) -> bool:
    """Whether the last word of ``text`` is a place's name (北陸, 関東, 長野県)."""
    words = [m for m in thread_tokenizer().tokenize(text) if m.surface().strip()]
    if not words:
        return False
    return tagged_place(words[-1].part_of_speech())


def _items(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each item of the list in ``text[start:end]``, stripped of spaces."""
    at = start
    for piece in _BREAKS.split(text[start:end]):
        left, right = at, at + len(piece)
        at = right + 1
        while left < right and text[left] in " 　":
            left += 1
        while right > left and text[right - 1] in " 　":
            right -= 1
        if left < right:
            yield left, right


def _head(text: str, start: int, end: int) -> tuple[int, int]:
    """An item, or its words before a particle when they are a place and it is not (the last
    item of 所在地: 高松、岡崎の売上を比べてください)."""
    if is_place(text[start:end]):
        return start, end
    head = _HEAD.match(text, start, end)
    return (start, head.end()) if head is not None and is_place(head.group()) else (start, end)


def _lists(text: str) -> Iterator[tuple[int, int]]:
    """Where each list about places begins: after a word about places and a colon, a bracket
    or a space (地域別売上（, 県別: ), or after a place's name and a colon or a bracket
    (北陸（石川・富山・福井）)."""
    for word in PLACE_WORDS:
        for found in re.finditer(re.escape(word), text):
            window = text[found.end() : found.end() + _AFTER + 3]
            opener = _OPENERS.search(window)
            if opener is None or opener.start() > _AFTER:
                continue
            line_start = text.rfind("\n", 0, found.start()) + 1
            if speaks_of_places(text[line_start : found.end() + opener.start()]):
                yield _list_at(text, found.end() + opener.start(), found.end() + opener.end())
    for opener in _PLACE_OPENER.finditer(text):
        if names_a_place(text[max(0, opener.start() - _AFTER) : opener.start()]):
            yield _list_at(text, opener.start(), opener.end())
    for listed in _BEFORE_PLACE_WORD.finditer(text):
        yield listed.span(1)


def _list_at(text: str, opener: int, begin: int) -> tuple[int, int]:
    """The list opened at ``opener``, its items from ``begin``: up to the closing bracket when
    a bracket opened it, else to the line's end or a wide gap, brackets parting its items
    (拠点: 石川（金沢）、長野（松本）)."""
    ends = (_BRACKET_END if text[opener:begin].strip(" 　") in _BRACKETS else _END).search(
        text, begin
    )
    return begin, ends.start() if ends is not None else len(text)


def _list_items(text: str) -> Iterator[tuple[int, int]]:
    """Items of the lists about places (see the module docstring)."""
    for begin, end in _lists(text):
        items = [_head(text, s, e) for s, e in _items(text, begin, end)]
        words = [text[s:e] for s, e in items]
        if any(not is_place(w) and known_as_name(w) for w in words):
            continue  # 支店: 石川、佐藤: people listed by their branch
        yield from ((s, e) for (s, e), w in zip(items, words, strict=True) if is_place(w))


def place_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` lists a place as a place (see the module docstring; a table's column:
    ``privacy.headers``)."""
    return sorted(set(_list_items(text)))
