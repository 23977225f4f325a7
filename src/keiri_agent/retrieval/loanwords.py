"""Loanwords as users type them: hiragana (ほてる代, ろご) and English (password, login).

The documents' own words are written back by :class:`keiri_agent.retrieval.normalize.Spellings`;
a loanword the documents never use (ホテル where the manual says 宿泊費) has no document
spelling to go back to, yet typed in hiragana it means nothing to either index (the dictionary
reads ほてる代 as ほ・てる代, the semantic model sees a verb). The Sudachi dictionary knows the
loanwords of the language: :func:`katakana_loanwords` writes a hiragana span in katakana when
the dictionary knows that katakana as a loanword *and* the sentence reads clearly better with it
(Sudachi's own path cost, :data:`MIN_COST_GAIN`). Never taken for a loanword: a hiragana word
of the language (いくら, ところ, いつ: not イクラ, トコロ, イツ), the grammar right after a word
(健康診断|はいつ, 2行|あると, 経費|でも), particles and auxiliaries only (に|でも, な|の), a kanji
word's reading (ふりこみ, まえ: the dictionary's normal form is 振り込み, 前), a name or a place.
Grammar that the dictionary reads only through a joint no sentence has (ちゃっ|と: a
sound-changed form before と; されたら|ちゃっ: an auxiliary after a conditional) is a loanword it
had no better path for (されたらちゃっとに → されたらチャットに).

Two-kana loanwords (ろご, めも, かーど) are found this way too where a hiragana run begins;
inside a run two kana are a piece of something else (でんしゃだい is not でんしゃダイ).

:func:`english_reading` gives the katakana Sudachi reads a Latin word with (password →
パスワード, login → ログイン); the caller decides whether that katakana is a word it wants.

A loanword is also typed by ear: :func:`typed_forms` gives its other spellings (メール → メエル,
メイル; ファイル → フアイル), and :func:`reads_better` tells whether kana the dictionary reads as
pieces of grammar are a given word (まにゆあるについて → マニュアルについて; 気がめいる is 滅入る).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Any

from keiri_agent.sudachi import ASCII_WORD, TO_KATAKANA, thread_tokenizer

__all__ = [
    "MIN_COST_GAIN",
    "MIN_LOANWORD_KANA",
    "english_reading",
    "katakana_loanwords",
    "reads_better",
    "typed_forms",
]

# How much lower (Sudachi path cost, its own unit) the sentence must cost with the katakana word
# than as typed. Loanwords typed in hiragana gain 6,400 (ろご) to 32,000 (ぺーじ); on the
# project's 1,236 questions and 2,538 sentences of its documents, words of the language taken for
# a loanword gain 180 (でも) to 2,100 (おかしい: オカ), and up to 6,500 only where the rules below refuse
# them (2行|あると, の|お気に入り).
MIN_COST_GAIN = 4000
MIN_LOANWORD_KANA = 2  # ろご, めも: two kana are a loanword when the cost says so…
MIN_INNER_LOANWORD_KANA = 3  # …where a hiragana run begins; inside a run, two kana are a piece
MAX_LOANWORD_KANA = 12  # the longest hiragana span tried (インボイス, スマートフォン)
MIN_ENGLISH_LETTERS = 3  # id, ok… are not looked up
LOOKUPS_KEPT = 4096  # dictionary look-ups remembered per process (words of recent questions)
_NO_WORD_START = frozenset("ぁぃぅぇぉゃゅょゎっんー")  # kana that never begin a word
_NO_WORD_END = frozenset("ぁぃぅぇぉゃゅょゎー")  # …nor end before these (でんし|ゃ, えら|ー)
_HIRAGANA_RUN = re.compile(r"[\u3041-\u3096ー]+")
_INFLECTED = frozenset({"動詞", "形容詞", "助動詞"})
_PARTICLES = frozenset({"助詞", "助動詞"})
_GRAMMAR = _INFLECTED | _PARTICLES  # what kana right after a word usually are (2行|あると)
# What follows a sound-changed form (書い|て, 読ん|だ, 行っ|たら, ちゃっ|た) and the forms that end
# a clause, after which no auxiliary comes (されたら, しろ).
_AFTER_SOUND_CHANGE = frozenset("てでただちじ")  # ちゃう・じゃう: て・で run together
_CLAUSE_END_FORMS = ("仮定形", "命令形")
_LETTERS = re.compile(r"[A-Za-z]+")
_SENTENCE_END = re.compile(r"(?<=[。．.!?！？\n])")
# The vowel kana that lengthen a mora, by its vowel (メール → メエル, メイル; コード → コオド,
# コウド: え and お are also lengthened with イ and ウ, as in Japanese words: せんせい, こうど).
_LENGTHENING = {"A": "ア", "I": "イ", "U": "ウ", "E": "エイ", "O": "オウ"}
MAX_TYPED_FORMS = 64  # a word's other spellings kept (a long vowel or small kana multiplies them)
# The dictionary reads one sentence at a time, and a pasted log can be one line of any length:
# cut there (Sudachi refuses 49,149 bytes; the look-up is quadratic in the sentence).
MAX_SENTENCE_CHARS = 200


def katakana_loanwords(text: str) -> str:
    """``text`` with each hiragana span that is a loanword written in katakana (module
    docstring), left to right, the longest span first; each sentence is read on its own."""
    return "".join(_in_sentence(sentence) for sentence in _sentences(text))


def _sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end, and every :data:`MAX_SENTENCE_CHARS` characters."""
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        pieces += [
            sentence[at : at + MAX_SENTENCE_CHARS]
            for at in range(0, len(sentence), MAX_SENTENCE_CHARS)
        ]
    return pieces


def _in_sentence(text: str) -> str:
    pos = 0
    while (match := _HIRAGANA_RUN.search(text, pos)) is not None:
        start = match.start()
        while start < match.end():
            end = _loanword_end(text, start, match.end(), start == match.start())
            if end is None:
                start += 1
                continue
            text = text[:start] + text[start:end].translate(TO_KATAKANA) + text[end:]
            start = end
        pos = match.end()
    return text


def english_reading(word: str) -> str | None:
    """The katakana the dictionary reads the Latin word ``word`` with (password → パスワード),
    or None (not one known word, too short, or an acronym: VPN, PDF stay as written)."""
    if len(word) < MIN_ENGLISH_LETTERS or not _LETTERS.fullmatch(word) or word.isupper():
        return None
    return _english(word.lower())


@functools.lru_cache(maxsize=LOOKUPS_KEPT)
def _english(word: str) -> str | None:
    morphemes = list(thread_tokenizer().tokenize(word))
    if len(morphemes) != 1 or morphemes[0].is_oov():
        return None
    reading: str = morphemes[0].reading_form()
    return reading if reading and not ASCII_WORD.fullmatch(reading) else None


def typed_forms(katakana: str) -> set[str]:
    """The other ways ``katakana`` is typed by someone who knows it by ear: each long vowel ー
    as the vowel kana it lengthens (メール → メエル, メイル; パスワード → パスワアド), each small
    kana full size (ファイル → フアイル, チェック → チエック; ッ stays: it is typed on purpose),
    and both together. ``katakana`` itself is not among them."""
    options: list[str] = []
    for at, kana in enumerate(katakana):
        name = unicodedata.name(kana, "")
        if kana == "ー" and at:
            vowel = unicodedata.name(katakana[at - 1], "")[-1:]
            options.append(kana + _LENGTHENING.get(vowel, ""))
        elif " SMALL " in name and kana != "ッ":
            options.append(kana + unicodedata.lookup(name.replace("SMALL ", "")))
        else:
            options.append(kana)
    forms = set(
        itertools.islice(("".join(typed) for typed in itertools.product(*options)), MAX_TYPED_FORMS)
    )
    return forms - {katakana}


def reads_better(text: str, span: range, word: str) -> bool:
    """Whether the kana of ``text`` at ``span`` are ``word`` rather than what the dictionary
    reads: it reads them as pieces, not as one word of the language (気がめいる: 滅入る), and
    their sentence reads clearly better with ``word`` (:data:`MIN_COST_GAIN`: まにゆあるについて
    is ま|に|ゆ|ある to it, マニュアルについて)."""
    at = 0
    for sentence in _sentences(text):
        if at <= span.start < at + len(sentence):
            start, stop = span.start - at, span.stop - at
            morphemes = thread_tokenizer().tokenize(sentence)
            if any(m.begin() == start and m.end() == stop for m in morphemes):
                return False
            spelled = sentence[:start] + word + sentence[stop:]
            cost: int = morphemes.get_internal_cost()
            return cost - _cost(spelled) >= MIN_COST_GAIN
        at += len(sentence)
    return False


def _loanword_end(text: str, start: int, run_end: int, run_start: bool) -> int | None:
    """Where the loanword starting at ``start`` ends (the longest), or None. A two-kana
    loanword only begins a hiragana run (ろごを; でんしゃだい is not でんしゃダイ)."""
    if text[start] in _NO_WORD_START:
        return None
    morphemes: list[Any] | None = None  # read once a loanword is possible at all
    typed_cost: int | None = None
    shortest = MIN_LOANWORD_KANA if run_start else MIN_INNER_LOANWORD_KANA
    for end in range(min(run_end, start + MAX_LOANWORD_KANA), start + shortest - 1, -1):
        if end < len(text) and text[end] in _NO_WORD_END:
            continue
        hiragana = text[start:end]
        katakana = hiragana.translate(TO_KATAKANA)
        if not _is_loanword(katakana):
            continue
        if morphemes is None:
            morphemes = list(thread_tokenizer().tokenize(text))
            if _after_a_word(text, start, morphemes):
                return None
        known = _known_as(hiragana)
        if known == katakana:  # the dictionary's own hiragana spelling (めーる, ぐるーぷ)
            return end
        if known is not None:  # a word of the language (いくら, ところ, いつ)
            continue
        if _only_grammar(morphemes, start, end):
            continue
        if typed_cost is None:
            typed_cost = _cost(text)
        if typed_cost - _cost(text[:start] + katakana + text[end:]) >= MIN_COST_GAIN:
            return end
    return None


def _after_a_word(text: str, start: int, morphemes: list[Any]) -> bool:
    """Whether the kana at ``start`` directly follows a word written in kanji, katakana or
    letters and the dictionary reads them as that word's grammar: a particle, an auxiliary, a
    verb or an adjective (健康診断|はいつ, 2行|あると, 経費|でも)."""
    if start == 0 or _HIRAGANA_RUN.fullmatch(text[start - 1]) or not text[start - 1].strip():
        return False
    for morpheme in morphemes:
        if morpheme.begin() == start:
            return morpheme.part_of_speech()[0] in _GRAMMAR
    return False


def _only_grammar(morphemes: list[Any], start: int, end: int) -> bool:
    """Whether the sentence reads ``start:end`` as particles and auxiliaries only, ending where
    one ends (に|でも, な|の); a particle never holds ー (かー|ど, たく|しー are loanwords), and an
    auxiliary follows an inflected word (ちゃっ|と at the start is チャット)."""
    inside = [m for m in morphemes if m.begin() < end and m.end() > start]
    before = [m for m in morphemes if m.end() == start]
    after = [m for m in morphemes if m.begin() == end]
    attached = inside and (
        inside[0].part_of_speech()[0] == "助詞"
        or (before and before[0].part_of_speech()[0] in _INFLECTED)
    )
    return (
        bool(attached)
        and inside[0].begin() == start
        and inside[-1].end() == end
        and all(m.part_of_speech()[0] in _PARTICLES and "ー" not in m.surface() for m in inside)
        and not _misconnected([*before[:1], *inside, *after[:1]])
    )


def _misconnected(morphemes: list[Any]) -> bool:
    """Whether the dictionary's reading joins two of ``morphemes`` as no sentence does: a
    sound-changed form (促音便 ちゃっ, 撥音便 ん) not followed by て・た (ちゃっ|と), or an
    auxiliary after a conditional or imperative form (されたら|ちゃっ): the kana are then a
    word the dictionary read as grammar for want of a better path, not grammar."""
    for first, second in itertools.pairwise(morphemes):
        form = first.part_of_speech()[5]
        if "音便" in form and second.surface()[:1] not in _AFTER_SOUND_CHANGE:
            return True
        if form.startswith(_CLAUSE_END_FORMS) and second.part_of_speech()[0] == "助動詞":
            return True
    return False


@functools.lru_cache(maxsize=LOOKUPS_KEPT)
def _is_loanword(katakana: str) -> bool:
    """One common noun of the dictionary, written in katakana as its own normal form (ホテル,
    ロゴ; not フリコミ → 振り込み, not a place or a person: イタ, バイイ)."""
    morphemes = list(thread_tokenizer().tokenize(katakana))
    if len(morphemes) != 1 or morphemes[0].is_oov():
        return False
    morpheme = morphemes[0]
    pos: tuple[str, ...] = morpheme.part_of_speech()
    normal: str = morpheme.normalized_form()
    return pos[:2] == ("名詞", "普通名詞") and normal == katakana


@functools.lru_cache(maxsize=LOOKUPS_KEPT)
def _known_as(hiragana: str) -> str | None:
    """The normal form of ``hiragana`` when it alone is one uninflected word of the dictionary
    (いくら → 幾ら, めーる → メール), else None (a verb's form is decided by the sentence: ほてる
    is 火照る alone, ホテル before 代)."""
    morphemes = list(thread_tokenizer().tokenize(hiragana))
    if len(morphemes) != 1 or morphemes[0].is_oov():
        return None
    morpheme = morphemes[0]
    if morpheme.part_of_speech()[0] in _INFLECTED:
        return None
    normal: str = morpheme.normalized_form()
    return normal


def _cost(text: str) -> int:
    cost: int = thread_tokenizer().tokenize(text).get_internal_cost()
    return cost
