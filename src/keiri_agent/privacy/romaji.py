"""People's names written in roman letters: ``Misaki Hasegawa``, ``HASEGAWA Misaki``,
``Sato様``, ``Mr. Tanaka``, ``長谷川 Misaki``.

A capital letter does not make a name (Amazon, Google, NTT, Web Services are not people). Here a
word is read back into katakana as Hepburn or 訓令 romaji (Hasegawa → ハセガワ; a long vowel
people leave out is tried too: Saito → サイト, サイトウ) and looked up in Sudachi's dictionary,
which knows surnames and given names (``人名,姓`` / ``人名,名``, in katakana or hiragana). Words that are no romaji
(Google, Microsoft, NTT, Services) are never names, except after Mr. / Ms. A name is:

- two words of romaji, one of them a name in the dictionary or both unknown to it (Sano Yuto),
  that do not go on into another word (``Sumitomo Mitsui Banking``, ``Hasegawa Accounting``
  are companies); two words the dictionary knows as other words (Tokyo Marine) are no name;
- one word of romaji before 様 / さん / 殿 / 氏 / 先生 or their romaji (Kato-san, Goto san,
  Ito-sama), unless the dictionary knows it only as something else and that is a place
  (Amazon → アマゾン, Hitachi → ひたち) or a loanword it knows in katakana only (Adobe →
  アドベ): a word it does not know at all (Fujitsu) is taken for a name, and so is a company
  named like a person (Toyota, 豊田; Kojima → コジマ, which the dictionary knows as a shop
  only) and a surname the dictionary reads as a native word (Goto → ごと, Oka → おか);
- one word that the dictionary knows as a name, one space from a name found in Japanese
  script (長谷川 Misaki: :func:`with_romaji_part`); beside other Japanese text it is a word
  (Rate列, Kanji);
- a word after Mr. / Ms. / Mrs. / Dr. (with or without the dot and the space).

An acronym of up to three capitals (AI, IT, OK) is no name beside Japanese text.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.sudachi import TO_HIRAGANA, known_as_place, open_dictionary

__all__ = [
    "MAX_READINGS",
    "company_word",
    "find_romaji_names",
    "half_width_letters",
    "name_word",
    "readings",
    "with_romaji_part",
]

MAX_READINGS = 64  # katakana readings tried per word (long vowels double them)

_VOWELS = {"a": "ア", "i": "イ", "u": "ウ", "e": "エ", "o": "オ"}
_ROWS = {
    "k": "カキクケコ",
    "g": "ガギグゲゴ",
    "s": "サシスセソ",
    "z": "ザジズゼゾ",
    "t": "タチツテト",
    "d": "ダヂヅデド",
    "n": "ナニヌネノ",
    "h": "ハヒフヘホ",
    "b": "バビブベボ",
    "p": "パピプペポ",
    "m": "マミムメモ",
    "r": "ラリルレロ",
}
_YOON = {"a": "ャ", "u": "ュ", "o": "ョ", "e": "ェ"}


def _syllables() -> dict[str, str]:
    table: dict[str, str] = dict(_VOWELS)
    for consonant, row in _ROWS.items():
        for vowel, kana in zip("aiueo", row, strict=True):
            table[consonant + vowel] = kana
        i_kana = row[1]
        for vowel, small in _YOON.items():
            if vowel != "e":
                table[f"{consonant}y{vowel}"] = i_kana + small
    table.update({"ya": "ヤ", "yu": "ユ", "yo": "ヨ", "wa": "ワ", "wo": "オ", "fu": "フ"})
    table.update({"shi": "シ", "chi": "チ", "tsu": "ツ", "ji": "ジ"})
    for vowel, small in _YOON.items():
        table[f"sh{vowel}"] = "シ" + small
        table[f"ch{vowel}"] = "チ" + small
        table[f"j{vowel}"] = "ジ" + small
    return table


_SYLLABLES = _syllables()
# Only a surname or given name counts: 人名,一般 tags ジャパン, マリネ and ソニー too.
_LONGEST = max(map(len, _SYLLABLES))


def _parse(word: str) -> list[list[str]] | None:
    """The word as katakana syllables, each with its spellings (a long vowel may be left out),
    or None when it is no romaji."""
    parts: list[list[str]] = []
    at = 0
    while at < len(word):
        ch = word[at]
        rest = word[at + 1 : at + 2]
        if ch == "n" and (not rest or rest not in "aiueoy"):
            parts.append(["ン"])
            at += 1 + (
                rest in ("'", "n") and word[at + 2 : at + 3] not in ("a", "i", "u", "e", "o")
            )
            continue
        if ch == "m" and rest and rest in "bmp":
            parts.append(["ン"])
            at += 1
            continue
        if (ch == rest and ch not in "aiueon") or (ch == "t" and rest == "c"):
            parts.append(["ッ"])  # a doubled consonant (Hattori, Matcha)
            at += 1
            continue
        if ch == "h" and parts and word[at - 1] == "o" and (not rest or rest not in "aiueoy"):
            parts[-1] = [parts[-1][0] + "ウ", parts[-1][0] + "オ"]  # Ohno, Satoh
            at += 1
            continue
        for length in range(min(_LONGEST, len(word) - at), 0, -1):
            kana = _SYLLABLES.get(word[at : at + length])
            if kana is not None:
                break
        else:
            return None
        vowel = word[at + length - 1]
        spellings = [kana]
        if vowel == "o" and word[at + length : at + length + 1] not in ("o", "u"):
            spellings += [kana + "ウ", kana + "オ"]  # Saito → サイトウ, Ota → オオタ
        elif vowel == "u" and word[at + length : at + length + 1] != "u":
            spellings.append(kana + "ウ")  # Yuko → ユウコ
        parts.append(spellings)
        at += length
    return parts


def readings(word: str) -> list[str]:
    """The katakana a word of romaji may stand for (none when it is no romaji)."""
    parts = _parse(word.lower())
    if not parts:
        return []
    return ["".join(p) for p in itertools.islice(itertools.product(*parts), MAX_READINGS)]


@lru_cache(maxsize=4096)
def name_word(word: str) -> bool | None:
    """True when a reading of ``word`` is a surname or given name in the dictionary, False
    when it is no romaji or the dictionary knows it only as other words, None when the
    dictionary does not know it."""
    found = False
    dictionary = open_dictionary()
    for reading in readings(word):
        # the dictionary knows many names under their hiragana only (はやし, しみず, こんどう)
        for spelling in (reading, reading.translate(TO_HIRAGANA)):
            for morpheme in dictionary.lookup(spelling):
                pos = morpheme.part_of_speech()
                if pos[2] == "人名" and pos[3] in ("姓", "名"):
                    return True
                found = True
    return False if found or not readings(word) else None


@lru_cache(maxsize=4096)
def company_word(word: str) -> bool:
    """Whether ``word``, known to the dictionary as no name, reads as a company's or a place's
    name: a place's name (Amazon → アマゾン, Hitachi → ひたち) or a word it knows in katakana
    only, a loanword (Adobe → アドベ). A native word written in romaji (Goto → ごと, Oka →
    おか) is not: before 様 / さん such a word is a surname (後藤, 岡)."""
    if not readings(word):
        return True  # no romaji (Google, Services): no Japanese name
    dictionary = open_dictionary()
    for reading in readings(word):
        for spelling in (reading, reading.translate(TO_HIRAGANA)):
            # a place's name, not an organisation's: many are named after their founder
            # (Hirano → ヒラノ, Kojima → コジマ are surnames first), and not 人名 一般 (AOKI)
            if known_as_place(spelling):
                return True
    if any(dictionary.lookup(r.translate(TO_HIRAGANA)) for r in readings(word)):
        return False  # a native word
    return any(
        m.part_of_speech()[1] == "普通名詞" for r in readings(word) for m in dictionary.lookup(r)
    )


# Full-width letters as a Japanese keyboard types them, read one for one (offsets hold).
_HALF_WIDTH = {
    code: code - 0xFEE0
    for code in (
        *range(ord("Ａ"), ord("Ｚ") + 1),
        *range(ord("ａ"), ord("ｚ") + 1),
        *map(ord, "．－"),
    )
}


def half_width_letters(text: str) -> str:
    """``text`` with full-width letters (Ｍｉｓａｋｉ) in half width, as long as ``text``."""
    return text.translate(_HALF_WIDTH)


_WORD = r"(?:[A-Z][a-z]+|[A-Z]{2,})"
# Words of a run are parted by spaces, a comma, or an underscore as in a file name
# (連絡先_Kobayashi_Yumi_源泉徴収票.pdf; an underscore after a letter is a code's: foo_Bar).
_RUN = re.compile(
    rf"(?<![A-Za-z0-9@.\-])(?<![A-Za-z0-9]_){_WORD}(?:[ 　]+{_WORD}|,[ 　]*{_WORD}|_{_WORD})*"
    r"(?![A-Za-z0-9@])"
)
# Honorifics in roman letters as mails write them: Kato-san, Goto san, Ito-sama, Ueda-sensei.
_ROMAJI_HONORIFICS = r"(?:san|sama|sensei|dono|kun|chan|shi)(?![A-Za-z])"
_HONOURED = re.compile(
    rf"(?<![A-Za-z0-9@._\-])({_WORD})(?:[ 　]*(?=様|さま|さん|殿|氏|先生|くん|君)"
    rf"|(?=[-‐ ](?i:{_ROMAJI_HONORIFICS})))"
    rf"|(?<![A-Za-z])(?:Mr|Ms|Mrs|Miss|Dr|MR|MS|MRS|DR)(?:\.[ 　]*|[ 　]+)({_WORD})(?![A-Za-z])"
)
_AFTER_NAME = re.compile(rf"[ 　]({_WORD})(?![A-Za-z0-9.@])")
_BEFORE_NAME = re.compile(rf"(?<![A-Za-z0-9@._\-])({_WORD})[ 　]$")


def _acronym(word: str) -> bool:
    return word.isupper() and len(word) <= 3


def _pairs(text: str) -> list[Span]:
    spans: list[Span] = []
    for run in _RUN.finditer(text):
        words = [(m.start(), m.end()) for m in re.finditer(r"[A-Za-z]+", run.group())]
        if len(words) < 2:
            continue
        base = run.start()
        texts = [run.group()[s:e] for s, e in words]
        romaji = [bool(readings(w)) and not _acronym(w) for w in texts]
        for first in range(len(words) - 1):
            pair = texts[first : first + 2]
            if not (romaji[first] and romaji[first + 1]):
                continue
            if first + 2 < len(words) and not romaji[first + 2]:
                continue  # Hasegawa Accounting Office: a company's name
            known = (name_word(pair[0]), name_word(pair[1]))
            glue = run.group()[words[first][1] : words[first + 1][0]]
            if glue == "_" and known != (True, True):
                continue  # an underscore also joins a code's words (KEIRI_TIMEZONE, Timezone_Keiri)
            if True in known or known == (None, None):
                spans.append(
                    Span(base + words[first][0], base + words[first + 1][1], PersonalKind.PERSON)
                )
    return spans


def find_romaji_names(text: str) -> list[Span]:
    """The spans of names in roman letters in ``text``, its letters in half width
    (:func:`half_width_letters`)."""
    if re.search("[A-Za-z]{2}", text) is None:
        return []
    spans = _pairs(text)
    for match in _HONOURED.finditer(text):
        if match.group(2):  # after Mr. / Ms.: a person whatever the word
            spans.append(Span(*match.span(2), PersonalKind.PERSON))
        elif name_word(match.group(1)) is not False or not company_word(match.group(1)):
            spans.append(Span(*match.span(1), PersonalKind.PERSON))
    return spans


def _name_part(word: str) -> bool:
    return not _acronym(word) and name_word(word) is True


def with_romaji_part(text: str, span: Span) -> Span:
    """``span``, a name found in Japanese script, with the word of romaji that is its other
    half right beside it (長谷川 Misaki, Misaki 長谷川); ``text`` with its letters in half width
    (:func:`half_width_letters`)."""
    start, end = span.start, span.end
    after = _AFTER_NAME.match(text, end)
    if after is not None and _name_part(after.group(1)):
        end = after.end()
    before = _BEFORE_NAME.search(text, max(0, start - 24), start)
    if before is not None and _name_part(before.group(1)):
        start = before.start()
    return span if (start, end) == (span.start, span.end) else Span(start, end, span.kind)
