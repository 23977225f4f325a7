"""Which of two readings of the same bytes is Japanese words: the tie-break of CP932 / EUC-JP.

``encoding`` scores each character of a reading on its own (kana, JIS level-1 kanji...). Some
bytes read as equally plausible characters both ways: EUC-JP's 山田 is CP932's ｻｳﾅﾄ, CP932's
ｶﾀｶﾅ is EUC-JP's 鏡凝, and a file whose only Japanese is one such name cannot be told by its
characters. Its words can: the reading the Japanese dictionary (Sudachi, ``keiri_agent.sudachi``)
knows as words is the text. :func:`word_fit` scores a reading per character:

- in a word of two or more characters the dictionary knows (山田, カタカナ): 1;
- in a known one-character word (林, 鏡): ``SINGLE_CHAR_FIT``: a lone kanji is a word by
  itself, but so is almost any kanji (鏡凝 is 鏡 + 凝);
- katakana the dictionary does not know (サウナト, ホクトウギケン): ``UNKNOWN_KANA_FIT``: company
  and family names in kana are often not in it, so unknown kana are doubtful, not wrong;
- kanji or other characters in an unknown word (慮蝶): ``UNKNOWN_OTHER_FIT``: real kanji text
  is made of words the dictionary has, misread bytes are not.

Only the tie is decided here (the dictionary is loaded then, not for every file); its reading
is the half-width kana made full-width (NFKC), as the dictionary holds them.
"""

from __future__ import annotations

import unicodedata

from keiri_agent.sudachi import thread_tokenizer

__all__ = ["SINGLE_CHAR_FIT", "UNKNOWN_KANA_FIT", "UNKNOWN_OTHER_FIT", "WORD_CHARS", "word_fit"]

SINGLE_CHAR_FIT = 0.75
UNKNOWN_KANA_FIT = 0.5
UNKNOWN_OTHER_FIT = -1.0
# Characters of a reading looked up (its first runs of non-ASCII text): a tie is a small file
# or a few names; a long one would have been decided by its characters.
WORD_CHARS = 2_000


def _is_katakana(text: str) -> bool:
    return all("\u30a0" <= ch <= "\u30ff" for ch in text)


def word_fit(runs: list[str]) -> float:
    """The mean fit per character (see the module docstring) of ``runs``, the non-ASCII runs
    of one reading of a file, up to ``WORD_CHARS`` characters."""
    tokenizer = thread_tokenizer()
    total = 0.0
    chars = 0
    for run in runs:
        if chars >= WORD_CHARS:
            break
        for morpheme in tokenizer.tokenize(unicodedata.normalize("NFKC", run)):
            surface: str = morpheme.surface()
            if not surface.strip():
                continue
            if not morpheme.is_oov():
                fit = 1.0 if len(surface) > 1 else SINGLE_CHAR_FIT
            elif _is_katakana(surface):
                fit = UNKNOWN_KANA_FIT
            else:
                fit = UNKNOWN_OTHER_FIT
            total += fit * len(surface)
            chars += len(surface)
    return total / chars if chars else 0.0
