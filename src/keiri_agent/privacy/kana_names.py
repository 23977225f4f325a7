"""Names in kana that SudachiPy's tags miss: what the dictionary knows of a word in either
kana, and a name split over two cells of a row without a header.

Sudachi tags a word by its context: ケンタ様 is a shop's nickname (ケンタ) before 様, さくら様 a
flower, サトウ beside a tab sugar (砂糖). Its lexicon knows more than the tag says: けんた is a
given name in hiragana, サクラ one in katakana, サトウ a surname. Here a word is looked up in
both kana (:func:`known_as_name`), and a word in katakana that the dictionary knows in hiragana
is a Japanese word written as names are written (:func:`native_in_katakana`: リク → りく 陸);
loanwords (ユーザー, バイト) and companies (ニトリ) have no hiragana spelling. ``privacy.names``
uses these beside an honorific and across the cells of a row (:func:`split_over_cells`).
"""

from __future__ import annotations

import re
from typing import Any

from keiri_agent.sudachi import TO_HIRAGANA, TO_KATAKANA, open_dictionary

__all__ = [
    "CELL_BREAKS",
    "KANA",
    "KATAKANA",
    "NAME_CHARS",
    "kana_name_alone",
    "known_as_name",
    "native_in_katakana",
    "split_over_cells",
]

KANA = re.compile(r"[ぁ-んァ-ヶー]+")
KATAKANA = re.compile(r"[ァ-ヶ]+")  # no ー: a long vowel marks a loanword (ユーザー)
NAME_CHARS = re.compile(r"[一-龥々ぁ-んァ-ヶー]+")


def known_as_name(surface: str, parts: tuple[str, ...] = ("姓", "名")) -> bool:
    """Whether the dictionary knows ``surface``, or the same word in the other kana, as a
    surname or given name (``parts``) among its entries."""
    dictionary = open_dictionary()
    spellings = {surface}
    if KANA.fullmatch(surface) is not None:
        spellings |= {surface.translate(TO_HIRAGANA), surface.translate(TO_KATAKANA)}
    return any(
        _name_part(m.part_of_speech(), parts) for w in spellings for m in dictionary.lookup(w)
    )


def kana_name_alone(surface: str) -> bool:
    """Whether a word in kana, alone before 様 / さん, is a person's name: the dictionary knows
    it as a surname or given name in this spelling (マツダ, ミサキ) or in the other kana (けんた,
    さくら), or it is a Japanese word in katakana (リク). A company named after a surname
    (トヨタ → とよた 豊田, クボタ → くぼた 久保田) is masked too: written alone before 様 it cannot
    be told from the person (タケダ様 is as often Mr 武田 as the company), and a company's name
    taken for a person's costs less than a person's name sent out (as ``Toyota様`` in romaji)."""
    return known_as_name(surface) or native_in_katakana(surface)


def _name_part(pos: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    return pos[2] == "人名" and pos[3] in parts


def native_in_katakana(surface: str) -> bool:
    """Whether ``surface`` is a Japanese word written in katakana (リク → りく 陸, ヒナ → ひな,
    ツバサ → つばさ): before 様 / さん such a word is a given name, as Japanese words are
    written in katakana mostly in names; loanwords (ユーザー, バイト, ゲスト) and companies
    (ニトリ, ヤクルト) have no hiragana spelling in the dictionary."""
    if KATAKANA.fullmatch(surface) is None:
        return False
    return bool(open_dictionary().lookup(surface.translate(TO_HIRAGANA)))


# What cuts a row into cells as text carries it (CSV, TSV, Markdown).
CELL_BREAKS = frozenset({",", "，", "\t", "|", "｜"})


def split_over_cells(morphemes: list[Any], index: int) -> bool:
    """Whether the word at ``index`` is one half of a name split over two cells of a row
    without a header (ハセガワ,ミサキ / ヤマダ⇥リク): a surname, a cell break, a given name."""
    if (
        index + 2 < len(morphemes)
        and morphemes[index + 1].surface() in CELL_BREAKS
        and _surname_word(morphemes[index])
        and _given_word(morphemes[index + 2])
    ):
        return True
    if index >= 2 and morphemes[index - 1].surface() in CELL_BREAKS:
        return _given_word(morphemes[index]) and _surname_word(morphemes[index - 2])
    return False


def _surname_word(morpheme: Any) -> bool:
    """A surname: tagged so, or known as one in either kana (サトウ, read 砂糖 beside a tab)."""
    pos = morpheme.part_of_speech()
    surface = morpheme.surface()
    return (pos[2] == "人名" and pos[3] == "姓") or (
        pos[0] == "名詞" and len(surface) >= 2 and known_as_name(surface, ("姓",))
    )


def _given_word(morpheme: Any) -> bool:
    """A given name as its cell holds it, in the cell after a surname's: tagged so, or a word
    the dictionary does not know or knows as a name in either kana, or a word in katakana
    without a long vowel (ミサキ, ソウタ, ハルト)."""
    surface = morpheme.surface()
    if NAME_CHARS.fullmatch(surface) is None or len(surface) < 2:
        return False
    pos = morpheme.part_of_speech()
    if pos[2] == "人名" and pos[3] == "名":
        return True
    return pos[0] == "名詞" and (
        morpheme.is_oov()
        or KATAKANA.fullmatch(surface) is not None  # ハルト: names have no ー, loanwords do
        or known_as_name(surface)
    )
