"""The words a bank prints beside the payer's name in a statement line, in every kana spelling.

A bank statement's 摘要 / お取引内容 and sometimes the 振込依頼人名 field itself hold, besides the
payer's name, words of the bank's own: the kind of transaction (``ﾌﾘｺﾐ``, ``ﾃﾞﾝｼﾝ``, ``ｶﾞｲﾀﾒ``,
``ｺｳｻﾞﾌﾘｶｴ``), a fee (``ﾃｽｳﾘﾖｳ``), a channel (``ATM``, ``ｶ-ﾄﾞ``), interest and tax (``ﾘｿｸ``,
``ｾﾞｲｷﾝ``). They stand before or after the name, spaced or glued to it (``ﾌﾘｺﾐｲﾉｳｴﾏﾕﾐ``).
This table is the one list of them: personal-data masking (``privacy.names``) keeps these
words and masks only the name beside them, 入金消込 (``blocks.table.payments``) drops them
from a payer name before it is compared with the customers, and a bank statement's 摘要 gives
its payer without the party word it begins with (``documents.bank_table``:
:func:`leading_party_word`).

:data:`BANK_WORD_TABLE` holds each word in full-width katakana with small kana written large, as
banks write it, with its kanji spellings (``振込 ｺﾝﾄﾞｳ ﾘﾖｳﾀ`` in an Internet banking export) and
whether the other party's name stands next to it (:data:`PARTY_WORDS`: ﾌﾘｺﾐ, ﾃﾞﾝｼﾝ, ｷﾕｳﾖ ...);
each row is checked when this module loads. :data:`BANK_WORD` finds a run of them
(:func:`bank_word_runs`: with whether a party word is in it) in any of the spellings statements
use: half-width (``ﾃｽｳﾘﾖｳ``), full-width (``テスウリョウ``), small kana written large or not
(``ﾃｽｳﾘｮｳ``), ``-``/``ｰ``/``ー`` for the long vowel, Latin letters in either width, kanji. A run
counts only at the start of a word (not inside ``ｱﾘｿｸ`` or ``お振込み``, not after a company
form's ``ｶ)``); a kana word of :data:`GLUED_MIN_CHARS` or more, a Latin one (``ATMﾔﾏﾀﾞ``) and a
kanji one before kana (``振込ｺﾝﾄﾞｳ``) are also found glued to the name after them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "BANK_WORD",
    "BANK_WORDS",
    "BANK_WORD_TABLE",
    "GLUED_MIN_CHARS",
    "PARTY_WORDS",
    "WordRun",
    "bank_word_runs",
    "leading_party_word",
    "without_bank_words",
]

# The bank's words: (the word in kana, its kanji spellings, whether the other party's name
# stands next to it). The kana is full-width katakana, small kana written large (ヨ for ョ), ー
# for the long vowel; the kanji spellings (space-separated) are how a statement exported by
# Internet banking writes the same word (``振込 ｺﾝﾄﾞｳ ﾘﾖｳﾀ``). A party word is printed beside
# the payer's or payee's name (ﾌﾘｺﾐ ｲﾉｳｴ ﾏﾕﾐ, ｷﾕｳﾖ ﾀｶﾊｼ ｹﾝｲﾁ, ﾏﾂﾓﾄ ﾐﾖｺ ﾃｽｳﾘﾖｳ, ｺｳｻﾞﾌﾘｶｴ and
# the biller, who may be a person); the others name the bank's own entries (ﾘｿｸ, ｾﾞｲｷﾝ).
BANK_WORD_TABLE: tuple[tuple[str, str, bool], ...] = (
    ("フリコミ", "振込 振込入金", True),
    ("フリコミキン", "振込金", True),
    ("デンシン", "電信 電信振込", True),
    ("ガイタメ", "外為 外国為替", True),
    ("ソウキン", "送金", True),
    ("フリカエ", "振替", True),
    ("ニユウキン", "入金", True),
    ("キユウヨ", "給与 給料", True),
    ("シヨウヨ", "賞与", True),
    ("ATM", "", True),
    ("フリコミテスウリヨウ", "振込手数料", True),  # the fee of a transfer to the name beside it
    ("テスウリヨウ", "手数料", True),
    ("コウザフリカエ", "口座振替", True),
    ("ジドウシハライ", "自動支払", True),
    ("ジドウヒキオトシ", "自動引落 自動引落し", True),
    ("ヒキオトシ", "引落 引落し", True),
    ("フリコミサキ", "振込先", False),  # the bank, branch and account follow (privacy.patterns)
    ("カード", "", False),
    ("リソク", "利息", False),
    ("ゼイキン", "税金", False),
    ("ネンキン", "年金", False),
    ("バンク", "", False),  # (ﾈﾂﾄ)ﾊﾞﾝｸ
    ("シユツキン", "出金", False),
    ("ハライモドシ", "払戻 払戻し", False),
)
# A word this long or longer is found glued to the name after it (ﾌﾘｺﾐｲﾉｳｴﾏﾕﾐ); a shorter one
# only with a space or a sign after it (ﾘｿｸ and ｶ-ﾄﾞ may begin a name: ﾘｿｸﾞ... is not ﾘｿｸ).
GLUED_MIN_CHARS = 4

_SMALL = dict(zip("アイウエオツヤユヨワカケ", "ァィゥェォッャュョヮヵヶ", strict=True))
_DASHES = "ー－ｰ\\-‐−―"
# Half-width katakana and its marks (ﾞ ﾟ), full-width katakana, and the long-vowel signs.
_KANA = "ｦ-ﾟァ-ヶー"
_KANJI = re.compile("[一-龥々]")


def _half_width() -> dict[str, str]:
    """Full-width katakana → its half-width spelling (ガ → ｶﾞ), from NFKC's own table."""
    table: dict[str, str] = {}
    for code in range(0xFF66, 0xFF9E):
        half = chr(code)
        full = unicodedata.normalize("NFKC", half)
        table[full] = half
        for mark, combining in (("ﾞ", "\u3099"), ("ﾟ", "\u309a")):
            marked = unicodedata.normalize("NFC", full + combining)
            if len(marked) == 1:
                table[marked] = half + mark
    return table


_HALF = _half_width()


def _spelling(char: str) -> str:
    """A pattern for one character of a table word in every spelling a statement uses."""
    if char == "ー":
        return f"[{_DASHES}]"
    if char.isascii():
        return f"[{re.escape(char)}{re.escape(chr(ord(char) + 0xFEE0))}]"
    options = [char, *([_SMALL[char]] if char in _SMALL else [])]
    options += [_HALF[o] for o in options if o in _HALF]
    return "(?:" + "|".join(sorted(set(options), key=len, reverse=True)) + ")"


def _checked(table: tuple[tuple[str, str, bool], ...]) -> dict[str, bool]:
    """Every spelling of the table (kana word and kanji spellings) → whether it is a party word,
    after checking each is written as this table must be (see the comment above the table)."""
    spellings: dict[str, bool] = {}
    for word, kanji, party in table:
        if not re.fullmatch("[A-Z]+|[ア-ヶー]+", word):
            raise ValueError(f"bank word {word!r}: not full-width katakana nor upper-case Latin")
        small = [ch for ch in word if ch in _SMALL.values()]
        if small:
            raise ValueError(f"bank word {word!r}: small kana {small} (banks write them large)")
        for spelling in (word, *kanji.split()):
            if spelling != word and not re.fullmatch("[一-龥々][一-龥々ぁ-ん]*", spelling):
                raise ValueError(f"bank word {word!r}: {spelling!r} is no kanji spelling")
            if spelling in spellings:
                raise ValueError(f"bank word {spelling!r} written twice")
            spellings[spelling] = party
    return spellings


def _glued(spelling: str) -> str | None:
    """The pattern of ``spelling`` glued to a name after it, or None: a long kana word or a Latin
    one before anything (ﾌﾘｺﾐｲﾉｳｴﾏﾕﾐ, ATMﾔﾏﾀﾞ), a kanji one before kana (振込ｺﾝﾄﾞｳ)."""
    pattern = "".join(map(_spelling, spelling))
    if _KANJI.match(spelling):
        return rf"{pattern}(?=[{_KANA}])"
    return pattern if len(spelling) >= GLUED_MIN_CHARS or spelling.isascii() else None


def _pattern(spellings: list[str]) -> re.Pattern[str]:
    ordered = sorted(spellings, key=len, reverse=True)  # the longest spelling wins
    glued = "|".join(g for g in map(_glued, ordered) if g is not None)
    alone = "|".join("".join(map(_spelling, w)) for w in ordered)
    # A run of words at the start of a word: glued words, then a last word that a space, a sign or
    # the end follows (a glued word may end the run before a name).
    letters = f"{_KANA}A-Za-zＡ-Ｚａ-ｚぁ-ん一-龥々"
    return re.compile(
        rf"(?<![{letters}()（）])(?:(?:{glued})*(?:{alone})(?![{letters}])|(?:{glued})+)"
    )


_PARTY: dict[str, bool] = _checked(BANK_WORD_TABLE)
BANK_WORDS: tuple[str, ...] = tuple(_PARTY)  # every spelling of the table, kana and kanji
PARTY_WORDS: tuple[str, ...] = tuple(w for w, party in _PARTY.items() if party)
BANK_WORD: re.Pattern[str] = _pattern(list(BANK_WORDS))
_LONGEST_FIRST = sorted(BANK_WORDS, key=len, reverse=True)
_ONE_WORD = re.compile("|".join(f"({''.join(map(_spelling, w))})" for w in _LONGEST_FIRST))


@dataclass(frozen=True, slots=True)
class WordRun:
    """A run of the bank's words in a text: where it stands, and whether a party word is in it."""

    start: int
    end: int
    party: bool


def bank_word_runs(text: str) -> list[WordRun]:
    """Each run of bank words in ``text`` (``ﾃﾞﾝｼﾝﾌﾘｺﾐ`` is one run of two words)."""
    runs = []
    for found in BANK_WORD.finditer(text):
        at, party = found.start(), False
        while at < found.end() and (word := _ONE_WORD.match(text, at, found.end())) is not None:
            party = party or _PARTY[_LONGEST_FIRST[(word.lastindex or 1) - 1]]
            at = word.end()
        runs.append(WordRun(found.start(), found.end(), party))
    return runs


def leading_party_word(text: str) -> str:
    """The party word ``text`` begins with, as written, or ``""``: the kind of transaction a
    statement's 摘要 puts before the payer (``振込　ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``, ``ﾃﾞﾝｼﾝ ﾔﾏﾀﾞ ﾀﾛｳ``,
    ``振込ｶ)ｱｵﾊﾞ``). One word only: a name after it that begins like a bank word stays whole."""
    run = BANK_WORD.match(text)
    word = _ONE_WORD.match(text, 0, run.end()) if run is not None else None
    if word is None or not _PARTY[_LONGEST_FIRST[(word.lastindex or 1) - 1]]:
        return ""
    return word.group()


def without_bank_words(text: str) -> str:
    """``text`` with its bank words blanked out, as long as it was (offsets hold)."""
    return BANK_WORD.sub(lambda m: " " * len(m.group()), text)
