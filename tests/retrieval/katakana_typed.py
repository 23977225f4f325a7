"""The documents' katakana words as employees mistype them: a generator over the manual's own words.

The vocabulary is read from the sample manual itself (:func:`manual_vocabulary`: its katakana
nouns and the parts of its katakana compounds, Sudachi split modes C and A, and its acronyms with
the reading the dictionary gives them: VPN → ブイピーエヌ), never from a hand list. Each word of a
question that is in the vocabulary is written in one of these shapes (a
:class:`~tests.support.helpdesk_variants.Variant` per word and shape):

- ``hiragana``: the word in hiragana, ー kept (パスワード → ぱすわーど, ワンタイム → わんたいむ,
  VPN → ぶいぴーえぬ), the IME left in hiragana mode;
- ``vowel_kana``: in hiragana with each ー typed as the vowel it lengthens (めえる, ぱすわあど;
  え and お lengthened with い and う as in Japanese words, seeded: めいる, こうど);
- ``small_kana``: in hiragana with its small kana typed full size (ふあいる, ちえっく), when it
  has one;
- ``changed_kana``: in katakana, one kana of a word of four or more kana changed as a romaji
  typist changes it: its voicing mark dropped or added (パスワート, ロクイン) or its vowel
  (パスウード), never into a word the dictionary knows (カード → コード is another word: nobody
  can tell it was a typo).

Off-topic questions are written in the same shapes over their own katakana words
(``vocabulary=None``): they must stay 該当なし.
"""

from __future__ import annotations

import itertools
import random
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path

from keiri_agent.sudachi import TO_HIRAGANA, open_dictionary
from tests.support.helpdesk_variants import Variant

__all__ = [
    "KATAKANA_SHAPES",
    "TEMPLATES",
    "katakana_variants",
    "manual_texts",
    "manual_vocabulary",
    "spelled",
]

KATAKANA_SHAPES = ("hiragana", "vowel_kana", "small_kana", "changed_kana")
# Plain questions about one word of the vocabulary (its twin is the same question, the word typed
# in a shape).
TEMPLATES = ("{}について教えてください", "{}が使えない")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "helpdesk"
MIN_WORD_KANA = 3
MIN_CHANGED_KANA = 4  # a shorter word with a kana changed is as likely another word
_KATAKANA_WORD = re.compile(r"[\u30a1-\u30fa][\u30a1-\u30faー]{2,}")
_ACRONYM = re.compile(r"[A-Z]{3,}")  # two letters are more often a unit (MM, MB) or a code
_READING = re.compile(r"[\u30a1-\u30faー]+")
_SMALL = frozenset("ァィゥェォャュョヮ")
_VOWEL_KANA = {"A": "あ", "I": "い", "U": "う", "E": "え", "O": "お"}
_LONG_E_O = {"E": "い", "O": "う"}  # せんせい, こうど: the other way Japanese lengthens え, お


def manual_texts() -> list[str]:
    """The sample knowledge base's documents as text: the manual, its release notes, the Q/A."""
    return [
        (EXAMPLES / "content" / "manual.txt").read_text(encoding="utf-8"),
        (EXAMPLES / "manual" / "リリースノート.md").read_text(encoding="utf-8"),
        (EXAMPLES / "content" / "qa.tsv").read_text(encoding="utf-8"),
    ]


def manual_vocabulary(texts: Iterable[str]) -> dict[str, str]:
    """Each katakana noun of ``texts`` (whole compounds, their parts and runs of their parts:
    ワンタイムパスワード, パスワード, ワンタイム) and each acronym of three letters or more with a
    katakana reading: word → its reading (katakana)."""
    from sudachipy import SplitMode

    tokenizer = open_dictionary().tokenizer(mode=SplitMode.C)
    found: dict[str, str] = {}
    for text in texts:
        normalized = unicodedata.normalize("NFKC", text)
        for line in normalized.splitlines():
            for morpheme in tokenizer.tokenize(line):
                for word in (morpheme, *morpheme.split(SplitMode.A)):
                    surface, reading = word.surface(), word.reading_form()
                    if word.part_of_speech()[0] != "名詞" or not _READING.fullmatch(reading):
                        continue
                    if _KATAKANA_WORD.fullmatch(surface) or _ACRONYM.fullmatch(surface):
                        found[surface] = reading
                parts = [part.surface() for part in morpheme.split(SplitMode.A)]
                for first, last in itertools.combinations(range(len(parts) + 1), 2):
                    run = "".join(parts[first:last])
                    if 1 < last - first < len(parts) and _KATAKANA_WORD.fullmatch(run):
                        found[run] = run
    return found


def _letter(kana: str) -> str:
    """The romaji of one kana by its Unicode name (ワ → WA, ッ → SMALL TU)."""
    return unicodedata.name(kana.translate(TO_HIRAGANA), "").split()[-1]


def _vowel_kana(word: str, rng: random.Random) -> str:
    out: list[str] = []
    for kana in word:
        vowel = _letter(out[-1])[-1:] if kana == "ー" and out else ""
        if vowel in _VOWEL_KANA:
            kana = rng.choice([_VOWEL_KANA[vowel], _LONG_E_O.get(vowel, _VOWEL_KANA[vowel])])
        out.append(kana)
    return "".join(out)


def _full_size(kana: str) -> str:
    name = unicodedata.name(kana, "")
    return unicodedata.lookup(name.replace("SMALL ", "")) if " SMALL " in name else kana


def _changes(word: str) -> Iterator[str]:
    """``word`` with one kana changed: its voicing mark dropped or added, or its vowel."""
    for at, kana in enumerate(word):
        if word[at + 1 : at + 2] in _SMALL:  # フ of ファ, チ of チェ: one sound with the next
            continue
        plain = unicodedata.normalize("NFD", kana)[0]
        for changed in {plain, plain + "\u3099", plain + "\u309a"}:
            other = unicodedata.normalize("NFC", changed)
            if len(other) == 1 and other != kana:
                yield word[:at] + other + word[at + 1 :]
        letter = _letter(kana)
        if (
            "SMALL" not in unicodedata.name(kana, "SMALL")
            and len(letter) == 2
            and letter[-1] in _VOWEL_KANA
        ):  # KA, WA: consonant and vowel
            for vowel in _VOWEL_KANA:
                try:
                    other = unicodedata.lookup(f"KATAKANA LETTER {letter[0]}{vowel}")
                except KeyError:  # WU, YI: the IME writes the vowel alone (ワ → ウ)
                    other = unicodedata.lookup(f"KATAKANA LETTER {vowel}")
                if vowel != letter[-1]:
                    yield word[:at] + other + word[at + 1 :]


def _known(katakana: str) -> bool:
    morphemes = list(open_dictionary().tokenizer().tokenize(katakana))
    return len(morphemes) == 1 and not morphemes[0].is_oov()


def spelled(word: str, reading: str, shape: str, rng: random.Random) -> str | None:
    """``word`` (read ``reading``) written in ``shape``, or None where the shape does not apply."""
    hiragana = reading.translate(TO_HIRAGANA)
    if shape == "hiragana":
        return hiragana
    if shape == "vowel_kana":
        return _vowel_kana(hiragana, rng) if "ー" in hiragana else None
    if shape == "small_kana":
        full = "".join(kana if kana == "っ" else _full_size(kana) for kana in hiragana)
        return full if full != hiragana else None
    if shape == "changed_kana":
        if not _KATAKANA_WORD.fullmatch(word) or len(word) < MIN_CHANGED_KANA:
            return None
        typos = sorted(typo for typo in set(_changes(word)) if not _known(typo))
        return rng.choice(typos) if typos else None
    raise ValueError(shape)


def _words_of(question: str, vocabulary: dict[str, str] | None) -> dict[str, str]:
    if vocabulary is None:  # an off-topic question: its own katakana words
        return {match.group(): match.group() for match in _KATAKANA_WORD.finditer(question)}
    return {word: reading for word, reading in vocabulary.items() if word in question}


def katakana_variants(
    question: str, vocabulary: dict[str, str] | None, seed: int = 0
) -> list[Variant]:
    """Each word of ``question`` in ``vocabulary`` (None: the question's own katakana words),
    longest first and never one inside another already written, in each shape."""
    rng = random.Random(f"katakana:{seed}:{question}")
    found: list[Variant] = []
    words = _words_of(question, vocabulary)
    taken: list[str] = []
    for word in sorted(words, key=len, reverse=True):
        if any(word in longer for longer in taken):
            continue
        taken.append(word)
        for shape in KATAKANA_SHAPES:
            typed = spelled(word, words[word], shape, rng)
            if typed is not None:
                found.append(Variant(shape, question.replace(word, typed, 1)))
    return [variant for variant in found if variant.text != question]
