"""Kana folded the way a bank writes it, so two spellings of one name compare equal.

A payer's bank writes names in the 全銀 character set: half-width katakana without small kana
(``ｼﾖｳｼﾞ`` for ショウジ), ``-`` or ``ｰ`` for the long vowel mark, upper-case Latin letters,
digits and a few symbols. :func:`fold` brings any spelling (a bank's, a customer master's
取引先名カナ, a SudachiPy reading, hiragana) to one form:

- NFKC: half-width → full-width kana (``ﾀﾞ`` → ダ), full-width Latin and digits → ASCII, and a
  voiced or semi-voiced mark written as a letter of its own joined to the kana before it
  (:func:`nfkc`: ``ﾊ゛`` and ``ハ゛`` → バ, as ``ﾊﾞ`` is);
- hiragana → katakana; small kana → large (ァ→ア, ッ→ツ, ャ→ヤ, ヵ→カ ...), as banks write them;
- ヲ→オ, ヂ→ジ, ヅ→ズ, ヰ→イ, ヱ→エ: spellings that banks and people use for the same sound;
- every dash (``-``, ``ｰ``, ``ー``, ``‐``, ``−``, ``―``...) → ``ー``, one long-vowel mark;
- Latin letters upper-cased; spaces and separators (``・``, ``.``, ``,``, ``/``, ``「」``,
  quotes) dropped; kanji and other letters kept as they are.

:func:`bank_length` counts characters as a 全銀 field does (a voiced half-width kana is two:
``ﾀﾞ``), which is how a cut at :data:`PAYER_NAME_CHARS` is recognised, or at one of the
:data:`EXPORT_CUT_CHARS` of statements exported by Internet banking and of passbook lines.
:func:`unmarked` drops the long-vowel marks, for a payer's system that left them out
(``ﾄｷﾖ`` for ``ﾄｰｷﾖｰ``, ``ｺﾎﾟﾚｼﾖﾝ`` for ``ｺｰﾎﾟﾚｰｼﾖﾝ``).
"""

from __future__ import annotations

import re
import unicodedata

from keiri_agent.sudachi import TO_KATAKANA

__all__ = [
    "EXPORT_CUT_CHARS",
    "LONG_MARK",
    "PAYER_NAME_CHARS",
    "bank_length",
    "fold",
    "has_kanji",
    "nfkc",
    "starts_cut",
    "unmarked",
    "unvoiced",
]

# Width of the 振込依頼人名 field of the 全銀協 振込入金通知 and 入出金取引明細 records, in
# half-width characters: longer names arrive cut at this length.
PAYER_NAME_CHARS = 48
# Narrower widths at which statements cut the payer name: Internet banking exports and passbook
# (通帳) lines keep 30 or 20 half-width characters of it. A name exactly this long may be cut.
EXPORT_CUT_CHARS = (30, 20)
LONG_MARK = "ー"

_SMALL = "ァィゥェォッャュョヮヵヶㇰㇱㇲㇳㇴㇵㇶㇷㇸㇹㇺㇻㇼㇽㇾㇿ"
_LARGE = "アイウエオツヤユヨワカケクシストヌハヒフヘホムラリルレロ"
_SAME_SOUND = {"ヲ": "オ", "ヂ": "ジ", "ヅ": "ズ", "ヰ": "イ", "ヱ": "エ"}
_DASHES = "-‐‑‒–—―−ｰー～〜─━"  # ─ and ━ (box drawing): typed for ー by some systems
_FOLDED = {
    **dict(zip(_SMALL, _LARGE, strict=True)),
    **_SAME_SOUND,
    **dict.fromkeys(_DASHES, LONG_MARK),
}
# One pass: a hiragana goes straight to its folded katakana (づ → ヅ → ズ, ゃ → ャ → ヤ).
_TABLE = str.maketrans(
    {**_FOLDED, **{chr(h): _FOLDED.get(chr(k), chr(k)) for h, k in TO_KATAKANA.items()}}
)
# Dropped: whitespace, separators and marks that do not spell the name; a lone voiced mark
# left by a cut (゛ U+3099/309B, ゜ U+309A/309C).
_DROPPED = re.compile(r"[\s・･.,、。/\\'\"`「」『』()（）\[\]{}&＆+＋*:;!?\u3099-\u309c]+")
# A voiced or semi-voiced mark after a kana, once NFKC made it combining: a half-width ``ﾞ``
# becomes U+3099 and is joined by NFKC itself, but the full-width ``゛`` / ``゜`` (U+309B / U+309C),
# which conversions one character at a time write (``ﾊﾞ`` → ``ハ゛``), become a space and U+3099.
_SEPARATE_MARK = re.compile(r"(\S)[ \u3000]*([\u3099\u309a])")
_KANJI = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆]")
# Voiced and semi-voiced kana → their plain kana (ガ→カ, パ→ハ, ヴ→ウ).
_UNVOICED = {
    ch: unicodedata.normalize("NFD", ch)[0]
    for ch in (chr(code) for code in range(0x30A1, 0x30FB))
    if len(unicodedata.normalize("NFD", ch)) == 2
}


def fold(text: str) -> str:
    """``text`` in the one form names are compared in (see the module docstring)."""
    normalized = nfkc(text).translate(_TABLE).upper()
    return _DROPPED.sub("", normalized)


def nfkc(text: str) -> str:
    """``text`` in NFKC, each voiced or semi-voiced mark written as a letter of its own (``゛``,
    ``゜``, the combining U+3099 / U+309A, a space before it or not) joined to the kana before it
    (``ﾊ゛ﾚﾂﾄ`` → バレツト: not ハレツト, another name); a mark no kana before it takes stays
    a lone mark, which :func:`fold` drops (``ア゛``, a mark left by a cut)."""
    return _SEPARATE_MARK.sub(_joined_mark, unicodedata.normalize("NFKC", text))


def _joined_mark(found: re.Match[str]) -> str:
    joined = unicodedata.normalize("NFC", found.group(1) + found.group(2))
    return joined if len(joined) == 1 else found.group(0)


def bank_length(text: str) -> int:
    """Length of ``text`` written in half-width 全銀 characters (``ダ`` and ``ﾀﾞ`` count 2)."""
    normalized = nfkc(text)
    return sum(2 if ch in _UNVOICED else 1 for ch in normalized)


def unmarked(folded: str) -> str:
    """A folded name without its long-vowel marks (``トーキヨー`` → ``トキヨ``)."""
    return folded.replace(LONG_MARK, "")


def starts_cut(whole: str, cut: str) -> bool:
    """Whether folded ``whole`` begins with folded ``cut``, a start the bank cut off; its last
    kana may have lost its voiced mark to the cut (``ﾀ`` of ``ﾀﾞ``)."""
    if len(whole) < len(cut):
        return False
    if not cut:
        return True
    last = whole[len(cut) - 1]
    return whole.startswith(cut[:-1]) and cut[-1] in (last, unvoiced(last))


def unvoiced(ch: str) -> str:
    """``ch`` without its voiced mark (ガ → カ); other characters unchanged."""
    return _UNVOICED.get(ch, ch)


def has_kanji(text: str) -> bool:
    """Whether ``text`` holds a kanji (its reading then comes from SudachiPy)."""
    return _KANJI.search(text) is not None
