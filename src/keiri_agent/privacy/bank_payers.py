"""The other party's name beside a bank's word in a statement line (ﾌﾘｺﾐ ｲﾉｳｴ ﾏﾕﾐ).

A bank prints the payer or payee of a transfer, a salary or an ATM deposit next to its own word
for the transaction (``keiri_agent.bank_words``: ﾌﾘｺﾐ, ﾃﾞﾝｼﾝ, ｶﾞｲﾀﾒ, ｿｳｷﾝ, ｷﾕｳﾖ, ATM ...),
before it, after it or glued to it, in kana. By the 全銀協 rules a company's name carries its
法人略語 (ｶ) ﾕ) ﾄﾞ) ... or ``(ｶ``) there; a name in kana without one is a person or a sole
proprietor (whose trade name often is the person's name), and is masked whole: a surname the
dictionary does not know (ｺﾝﾄﾞｳ, ｺﾞﾄｳ) leaks otherwise. The bank's word itself stays. Not taken:
a name with a company form or written with parentheses, one word the dictionary knows as a
common noun only (ﾃﾞﾝｷ), a name in Latin letters (NTTﾌｧｲﾅﾝｽ), and what stands next to a word
of the bank's own entries (ﾘｿｸ, ｾﾞｲｷﾝ), which only the name finder of ``privacy.names`` reads.
A biller without its form after ｺｳｻﾞﾌﾘｶｴ (``ﾄｳｷﾖｳｶﾞｽ``) is masked too: it may be a person, and
the amounts and dates the analysis needs stay.
"""

from __future__ import annotations

import re
import unicodedata

from keiri_agent.bank_words import bank_word_runs
from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.sudachi import open_dictionary

__all__ = ["MAX_NAME_WORDS", "party_names"]

MAX_NAME_WORDS = 3  # a surname, a given name, a middle or a second surname: no more in one name
_KANA = "ｦ-ﾟァ-ヶー"
_WORDS = rf"[{_KANA}]{{2,}}(?:[ 　][{_KANA}]{{2,}}){{0,{MAX_NAME_WORDS - 1}}}"
_AFTER = re.compile(rf"[ 　*＊:：・]?({_WORDS})")
_BEFORE = re.compile(rf"(?<![{_KANA}])({_WORDS})[ 　*＊:：・]?$")
_FORM_SIGNS = frozenset("()（）")


def _common_noun(word: str) -> bool:
    """Whether the dictionary knows ``word`` (one word) as a common noun and never as a name."""
    entries = open_dictionary().lookup(unicodedata.normalize("NFKC", word))
    return bool(entries) and all(m.part_of_speech()[1] == "普通名詞" for m in entries)


def _party(text: str, bare: str, start: int, end: int) -> Span | None:
    """The name at bare[start:end], unless a company form or parentheses touch it."""
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    if before in _FORM_SIGNS or after in _FORM_SIGNS:
        return None
    name = bare[start:end]
    if len(name.split()) == 1 and _common_noun(name):
        return None
    return Span(start, end, PersonalKind.PERSON)


def party_names(text: str, bare: str) -> list[Span]:
    """Names next to a party word of the bank's in ``text``; ``bare`` is ``text`` with the bank's
    words blanked out (``bank_words.without_bank_words``)."""
    spans: list[Span] = []
    for run in bank_word_runs(text):
        if not run.party:
            continue
        following = _AFTER.match(bare, run.end)
        if following is not None:
            found = _party(text, bare, *following.span(1))
            spans.extend([found] if found else [])
        preceding = _BEFORE.search(bare, max(0, run.start - 40), run.start)
        if preceding is not None:
            found = _party(text, bare, *preceding.span(1))
            spans.extend([found] if found else [])
    return spans
