"""The kana readings of a name written in kanji, from SudachiPy, read once per process.

A customer master often has only 取引先名 in kanji; the bank writes the payer in kana. The
reading SudachiPy gives (``reading_form`` of each word, split mode C so that compounds such as
``日本電気`` keep their own reading) comes first. Proper names have other readings that the
dictionary knows (``白鳥``: ハクチョウ as a word, シラトリ or シロトリ as a family name;
``河野``: コウノ / カワノ): the words of split mode A that are nouns give their other
proper-noun readings from ``Dictionary.lookup`` as alternates, at most
:data:`MAX_OPTIONS_PER_WORD` per word and :data:`MAX_READINGS` per name. Latin letters and
digits keep their own spelling (banks write ``ABC``), their kana reading is an alternate
(``エービーシー``). Readings are folded (:func:`..fold.fold`).

:func:`is_place` says whether kana spell a place name the dictionary knows (``オオサカ``,
``シンジユク`` for シンジュク: a bank writes small kana large) or a municipality's reading
(:mod:`.municipalities`: ``ハママツ``), which is how the end of a
company's name is told from a branch glued to it (``ｱｵﾊﾞｼﾖｳｼﾞｵｵｻｶｼﾃﾝ``, :mod:`.keys`), when
:func:`is_branch_place` says no company is named with it too (サクラ, フジ, ニホン are).

SudachiPy is opened by :mod:`keiri_agent.sudachi` (one dictionary per process, a missing one is
a ConfigurationError); each thread reads with its own tokenizers (``thread_tokenizer``, modes C
and A), shared with the thread's other readers of Japanese. :func:`readings` remembers :data:`MAX_CACHED_NAMES` names, so a customer
master of 10,000 names is read once per process however many runs and payers use it.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import Any

from keiri_agent.blocks.table.names.fold import LONG_MARK, fold, has_kanji, nfkc
from keiri_agent.blocks.table.names.municipalities import MUNICIPALITY_NAMES, MUNICIPALITY_READINGS
from keiri_agent.sudachi import (
    ASCII_WORD,
    TO_HIRAGANA,
    known_as_place,
    open_dictionary,
    reading_of,
    thread_tokenizer,
)

__all__ = [
    "MAX_CACHED_NAMES",
    "MAX_OPTIONS_PER_WORD",
    "MAX_PLACE_CHARS",
    "MAX_READINGS",
    "MAX_WORD_CHARS",
    "MIN_PART_CHARS",
    "MIN_PLACE_CHARS",
    "MIN_WORD_CHARS",
    "is_branch_place",
    "is_place",
    "name_parts",
    "readings",
    "word_tails",
]

MAX_READINGS = 8  # readings kept per name (the SudachiPy reading and its alternates)
MAX_OPTIONS_PER_WORD = 3  # readings tried per word: its own and two other proper-noun readings
# Names whose readings and keys are remembered: a master of 10,000 names is read once per
# process; a customer costs about 2 KB in these caches (measured), so at most about 100 MB.
MAX_CACHED_NAMES = 50_000
# Sudachi refuses inputs over 49,149 UTF-8 bytes; a name is far shorter, longer text is cut.
MAX_NAME_CHARS = 1_000

_SKIPPED_POS = frozenset({"補助記号", "空白", "記号"})
# Katakana a word the dictionary does not know is split into, to find where a name may end in it:
# words of the dictionary of this many kana at least (ズ, ク alone are words too) and at most.
MIN_WORD_CHARS = 2
MAX_WORD_CHARS = 12
# A word the dictionary knows is parted only into words of this many kana at least (ライフ|デザイン;
# not シス|テム, サー|ビス: short words of the dictionary run through most katakana), each a word
# but the last the dictionary holds as more than a person's name (not ディレク|ション: a name
# ends with no foreign given name).
MIN_PART_CHARS = 3
_KANA_RUN = re.compile(r"[ァ-ヶー]+")
# Shorter kana than this are not taken for a place (ナハ is a place, ハ is no proof of anything).
MIN_PLACE_CHARS = 2
# Nor longer kana (キタキユウシユウ is 8): a branch's place is looked for in the last kana only.
MAX_PLACE_CHARS = 10
# Kana a bank writes large that may be small, and the kana each may be small after: ャュョ after
# a kana of the イ row (キヨウト for キョウト; デュ, フュ too), ァィゥェォ after the kana katakana
# words put them after (ロジステイクス for ロジスティクス, ソフトウエア, フアクトリー, トウ for
# トゥ), ッ before another kana (サツポロ for サッポロ). At most this many of them are tried both
# ways (2**4 spellings).
_I_ROW = "キシチニヒミリギジビピヂ"
_SMALL_AFTER = {
    "ヤ": _I_ROW, "ユ": _I_ROW + "テデフヴ", "ヨ": _I_ROW, "ア": "フヴツクグウ",
    "イ": "テデフヴウツスズクグ", "ウ": "トド", "エ": "シジチフヴウツイ", "オ": "フヴウツクグ",
}  # fmt: skip
_SMALL = dict(zip("ヤユヨツアイウエオ", "ャュョッァィゥェォ", strict=True))
MAX_SMALL_TRIED = 4


def _tokenizers() -> tuple[Any, Any, Any]:
    """This thread's Sudachi tokenizers (split modes C and A) and the shared dictionary."""
    return thread_tokenizer(mode="C"), thread_tokenizer(mode="A"), open_dictionary()


@lru_cache(maxsize=MAX_CACHED_NAMES)
def readings(text: str) -> tuple[str, ...]:
    """Folded kana readings of ``text``: SudachiPy's first, then alternates (see module doc).

    Kana in ``text`` read as themselves; an empty text gives ``()``.
    """
    text = text[:MAX_NAME_CHARS]
    if not text.strip():
        return ()
    whole, words, dictionary = _tokenizers()
    primary = fold("".join(reading_of(m) for m in whole.tokenize(text) if _kept(m)))
    options = [_options(m, dictionary) for m in words.tokenize(text) if _kept(m)]
    found = dict.fromkeys([primary])
    for combination in itertools.product(*options):
        if len(found) >= MAX_READINGS:
            break
        found[fold("".join(combination))] = None
    return tuple(r for r in found if r)


@lru_cache(maxsize=MAX_CACHED_NAMES)
def word_tails(text: str) -> tuple[str, ...]:
    """The folded readings of the last words of ``text`` (split mode A, the shortest words: a
    compound the dictionary holds, ライフデザイン, ends where its words do; each word's own
    reading), from its last word to all but its first: 北日本ロジスティクスサービス東北 gives
    トウホク, サービストウホク and ロジステイクスサービストウホク. What is left of the name
    without them is a name a company may bear (:mod:`.match`: an export's cut that ends there
    is no proof of a longer name). Not after a word of one character that is no suffix: it
    begins the word after it, one the dictionary does not hold whole (南|関東), where a suffix
    ends a name (みどり屋|商店). Kana the dictionary does not know as one word (a run of katakana words
    it reads whole, ライフマネジメントパートナーズクリエイト; small kana written large) and a
    katakana word it knows made of others (ライフデザイン) may end a name wherever
    :func:`_run_ends` says, each run of katakana parted whole (small kana written large tried
    small before SudachiPy's words: ``ﾛｼﾞｽﾃｲｸｽ`` is ロジスティクス, not ロジス and テイクス). A name without kanji is read with its half-width kana
    and its dashes as ー (``ｻﾝｼｬｲﾝﾎｰﾑ`` as サンシャインホーム)."""
    text = text[:MAX_NAME_CHARS]
    if not text.strip():
        return ()
    _, shortest, _ = _tokenizers()
    if not has_kanji(text):  # half-width kana, ``-`` for ー
        text = "".join(LONG_MARK if fold(ch) == LONG_MARK else ch for ch in nfkc(text))
    pieces: list[tuple[str, bool]] = []  # each piece's reading, whether a name may end after it
    morphemes = (m for m in shortest.tokenize(text) if _kept(m))
    for kana, group in itertools.groupby(morphemes, key=lambda m: _is_kana(m.surface())):
        if kana:
            run = "".join(m.surface() for m in group)
            ends = (0, *_run_ends(run), len(run))
            pieces += [(fold(run[start:end]), True) for start, end in itertools.pairwise(ends)]
        else:
            pieces += [(fold(reading_of(m)), _ends_name(m)) for m in group]
    spoken = [reading for reading, _ in pieces]
    tails = ("".join(spoken[at:]) for at in range(len(pieces) - 1, 0, -1) if pieces[at - 1][1])
    return tuple(dict.fromkeys(t for t in tails if t))


def _ends_name(morpheme: Any) -> bool:
    """Whether a name may end with ``morpheme``: a suffix, or a word of two characters or more."""
    return len(morpheme.surface()) > 1 or morpheme.part_of_speech()[0] == "接尾辞"


def _is_kana(surface: str) -> bool:
    return _KANA_RUN.fullmatch(surface) is not None


@lru_cache(maxsize=MAX_CACHED_NAMES)
def _run_ends(run: str) -> tuple[int, ...]:
    """Where a name may end inside ``run``, katakana SudachiPy read as one word or several: its
    words are looked for in the whole run, not in SudachiPy's words, which it finds in kana
    written large (ﾛｼﾞｽﾃｲｸｽｻｰﾋﾞｽ read ロジス, テイクス, サービス is ロジスティクス and サービス,
    :func:`_kana_ends`); SudachiPy's words only where the dictionary's cover no reading of the
    run (パートナー|ズ) or SudachiPy read it whole (a word it knows, or none: ``known``)."""
    _, shortest, _ = _tokenizers()
    words = [m for m in shortest.tokenize(run) if _kept(m)]
    if len(words) == 1:
        return _kana_ends(run, known=not words[0].is_oov())
    found = _kana_ends(run, known=_known_word(run))
    if found != tuple(range(1, len(run))):
        return found
    ends = list(itertools.accumulate(len(m.surface()) for m in words))
    inner = (
        start + at
        for start, m in zip((0, *ends[:-1]), words, strict=True)
        for at in _kana_ends(m.surface(), known=not m.is_oov())
    )
    return tuple(sorted({*ends[:-1], *inner}))


@lru_cache(maxsize=MAX_CACHED_NAMES)
def _kana_ends(kana: str, *, known: bool) -> tuple[int, ...]:
    """Where a name may end inside a word of katakana ``kana``: every break of its readings in
    the fewest other words of the dictionary (each of at least :data:`MIN_WORD_CHARS` kana,
    small kana tried both ways: サンシヤインホーム is サンシャイン and ホーム, not サン, シヤイン
    and ホーム; ライフデザイン, a word of the dictionary, is ライフ and デザイン too, but not where
    the part before is a person's name only: ディレクション is no ディレク and ション). Where no such
    reading covers it, nowhere in a word the dictionary knows (``known``), everywhere in one it
    does not (its words cannot be told: ミナトキカク, 企画 is known in kanji only). Each word of
    such a reading is read so in turn (ライフデザイン of ...プランニングライフデザインシステム)."""
    size = len(kana)
    shortest = MIN_PART_CHARS if known else MIN_WORD_CHARS
    # A word the dictionary knows is parted in the spelling it knows (ロジステイクス is
    # ロジスティクス: no テイクス in it); kana it does not know, each part in any spelling.
    spelling = _word_spelling(kana) if known else ""
    steps = [
        [end for end in range(at + shortest, min(size, at + MAX_WORD_CHARS) + 1)
         if (at, end) != (0, size)
         and (_parted(spelling[at:end], last=end == size) if spelling
              else _known_word(kana[at:end]))]
        for at in range(size)
    ]  # fmt: skip
    never = size + 1  # more words than any reading has
    before = [0] + [never] * size  # the fewest words from the start to here
    for at in range(size):
        for end in steps[at]:
            before[end] = min(before[end], before[at] + 1)
    after = [never] * size + [0]  # the fewest words from here to the end
    for at in range(size - 1, -1, -1):
        after[at] = min((after[end] + 1 for end in steps[at]), default=never)
    if after[0] >= never:
        return () if known else tuple(range(1, size))
    breaks = [at for at in range(1, size) if before[at] + after[at] == after[0]]
    inner = (  # the words of the dictionary each word of those readings is made of
        start + at
        for start, end in itertools.pairwise((0, *breaks, size))
        for at in _kana_ends(kana[start:end], known=True)
    )
    return tuple(sorted({*breaks, *inner}))


@lru_cache(maxsize=MAX_CACHED_NAMES)
def _known_word(kana: str) -> bool:
    """Whether the dictionary holds katakana ``kana`` as a word, large kana tried small."""
    return bool(_word_spelling(kana))


def _word_spelling(kana: str) -> str:
    """The first spelling of ``kana``, large kana tried small, the dictionary holds ("": none)."""
    return next((s for s in _small_spellings(kana) if _in_dictionary(s)), "")


@lru_cache(maxsize=MAX_CACHED_NAMES)
def _parted(text: str, *, last: bool) -> bool:
    """Whether ``text`` is a part of a word the dictionary knows: a word of it, and, but for the
    ``last`` part, one a name may end with, held as more than a person's name (ソフト of
    ソフトウェア, エレクトロ of エレクトロニクス; not ディレク of ディレクション, a foreign name
    only)."""
    entries = open_dictionary().lookup(text)
    return any(last or entry.part_of_speech()[2] != "人名" for entry in entries)


@lru_cache(maxsize=MAX_CACHED_NAMES)
def _in_dictionary(text: str) -> bool:
    return bool(open_dictionary().lookup(text))


@lru_cache(maxsize=MAX_CACHED_NAMES)
def name_parts(text: str) -> tuple[str, ...] | None:
    """What part of a person's name each word of ``text`` is, as SudachiPy tags it (山田太郎:
    ``("姓", "名")``), when every word is one; None when a word is no name (山田商店)."""
    whole, _, _ = _tokenizers()
    tags = [m.part_of_speech() for m in whole.tokenize(text[:MAX_NAME_CHARS]) if _kept(m)]
    if not tags or any(pos[2] != "人名" for pos in tags):
        return None
    return tuple(pos[3] for pos in tags)


@lru_cache(maxsize=MAX_CACHED_NAMES)
def is_place(kana: str) -> bool:
    """Whether folded ``kana`` spells a place name the dictionary knows, in katakana or in
    hiragana, each large kana that may have been small tried both ways, or a municipality's
    reading (:mod:`.municipalities`: ハママツ, タカマツ, which the dictionary knows in kanji
    only) that is no common word of the dictionary (ヒカリ, アサヒ, トウヨウ: as often the end
    of a company's name as 光市, 旭市, 東洋町), of :data:`MIN_PLACE_CHARS` kana no word at all
    (ナハ; not ナカ, モリ, タカ)."""
    if not MIN_PLACE_CHARS <= len(kana) <= MAX_PLACE_CHARS:
        return False
    spellings = [(s, s.translate(TO_HIRAGANA)) for s in _small_spellings(kana)]
    if any(known_as_place(text) for pair in spellings for text in pair):
        return True
    if kana not in MUNICIPALITY_READINGS:
        return False
    dictionary = open_dictionary()
    words = [
        m.part_of_speech() for pair in spellings for text in pair for m in dictionary.lookup(text)
    ]
    if len(kana) == MIN_PLACE_CHARS:
        return not words
    return all(pos[1] == "固有名詞" for pos in words)


@lru_cache(maxsize=MAX_CACHED_NAMES)
def is_branch_place(kana: str) -> bool:
    """Whether folded ``kana`` glued between a name and a branch word name the branch's place:
    a place (:func:`is_place`) that is no word companies are named with as well. Such a word
    is one the dictionary, reading one of its spellings alone (katakana, hiragana, or a
    municipality's name it is the reading of), takes for a common noun, a given name or a
    country (サクラ: 桜, ミドリ, いずみ: 泉, 日の出, 大和: a given name, ニホン), or a katakana
    common noun it holds as written (フジ): ``ｱｵﾊﾞｻｸﾗｼﾃﾝ`` is 青葉サクラ's branch as likely as
    青葉's 佐倉 branch, ``ｱｵﾊﾞﾊﾏﾏﾂｼﾃﾝ``, ``ｱｵﾊﾞｾﾝﾀﾞｲｼﾃﾝ``, ``ｱｵﾊﾞﾏﾂﾓﾄｼﾃﾝ`` are 青葉's. A city
    the dictionary reads so too (奈良 and ナラ: 楢, 水戸 and みと: a given name) is left to a
    person: a click, where a wrong match costs money."""
    if not is_place(kana):
        return False
    whole, _, dictionary = _tokenizers()
    spellings = [t for s in _small_spellings(kana) for t in (s, s.translate(TO_HIRAGANA))]
    for text in (*spellings, *MUNICIPALITY_NAMES.get(kana, ())):
        read = list(whole.tokenize(text))  # one word, the whole text
        if len(read) == 1 and not read[0].is_oov() and _names_companies(read[0].part_of_speech()):
            return False
    return not any(
        entry.part_of_speech()[1] == "普通名詞" and entry.normalized_form() == text
        for text in _small_spellings(kana)
        for entry in dictionary.lookup(text)
    )


def _names_companies(part_of_speech: Any) -> bool:
    """Whether a word so tagged is one companies are named with: a common noun, a given name
    or a country."""
    tags: tuple[str, ...] = tuple(part_of_speech[1:4])
    return tags[0] == "普通名詞" or tags[1:] in (("人名", "名"), ("地名", "国"))


def _small_spellings(kana: str) -> list[str]:
    """``kana`` with each of its first :data:`MAX_SMALL_TRIED` possibly small kana written
    large and small (every combination)."""
    places = [at for at in range(1, len(kana)) if _may_be_small(kana, at)][:MAX_SMALL_TRIED]
    spellings = []
    for small in itertools.product((False, True), repeat=len(places)):
        chars = list(kana)
        for at, make_small in zip(places, small, strict=True):
            if make_small:
                chars[at] = _SMALL[chars[at]]
        spellings.append("".join(chars))
    return spellings


def _may_be_small(kana: str, at: int) -> bool:
    """Whether the kana at ``at`` may be a small one written large (see :data:`_SMALL`)."""
    ch = kana[at]
    if ch == "ツ":
        return at + 1 < len(kana)
    return kana[at - 1] in _SMALL_AFTER.get(ch, "")


def _kept(morpheme: Any) -> bool:
    return morpheme.part_of_speech()[0] not in _SKIPPED_POS


def _options(morpheme: Any, dictionary: Any) -> list[str]:
    """The spellings of one word, its own first: Latin as written and read, other proper names."""
    surface: str = morpheme.surface()
    own = reading_of(morpheme)
    options = [own]
    if ASCII_WORD.fullmatch(surface):
        reading = morpheme.reading_form()
        if reading and reading != own:
            options.append(reading)
        return options
    if morpheme.part_of_speech()[0] != "名詞":
        return options
    for entry in dictionary.lookup(surface):
        if len(options) >= MAX_OPTIONS_PER_WORD:
            break
        pos = entry.part_of_speech()
        reading = entry.reading_form()
        if pos[0] == "名詞" and pos[1] == "固有名詞" and reading and reading not in options:
            options.append(reading)
    return options
