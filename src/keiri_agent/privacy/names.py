"""People's names in Japanese text, by SudachiPy's parts of speech.

Sudachi's core dictionary tags surnames and given names (``名詞,固有名詞,人名,姓|名``); a name
is a run of such words, a surname and a given name joined by at most one space
(``長谷川 美咲``, ``高橋　優子``, ``ハセガワ ミサキ``); a single word in kana or of one character is
one only with 様 / さん... after it (リスト, マリア, 全 and 行 are words first). A word the dictionary does not know,
right before 様 / さん / 氏 / 殿, is a name too, and so is one it knows as a name among its
entries, in either kana (楽天, みずほ, ケンタ → けんた); one it knows only as something else is
a company (ソニー様, 三菱商事様). A kana word alone before 様 / さん that the dictionary tags a
common noun is a name when it knows it as one in either kana (さくら様) or it is a Japanese word
in katakana (リクさん); a surname and a given name in two cells of a row without a header are
a name (ハセガワ,ミサキ): ``privacy.kana_names``. Names in hiragana before 様 / 殿
(``わたなべだいき殿``) are found by their form, short ones the tokenizer cuts (だいきさん) by
the dictionary or beside a name found, names in roman letters by ``privacy.romaji``. A run that goes on into a common noun
(``田中工業``, ``鈴木自動車``, ``梅田ビル``) or follows 株式会社 names a company or a place, not a
person, and is left alone; a title after the name (部長, 課長...) keeps it a name. Payers in
half-width kana are read as banks print them too (ｻｻｷ ｼﾖｳﾀ: no small letters; the word next to
a known surname or given name is the other). The bank's words (``keiri_agent.bank_words``:
ﾌﾘｺﾐ, ﾃﾞﾝｼﾝ, ﾃｽｳﾘﾖｳ...) are blanked out before the text is read, so that a name glued to one
(``ﾌﾘｺﾐｲﾉｳｴﾏﾕﾐ``) is found and the word is never part of a name; the name beside such a word
is taken whole by ``privacy.bank_payers``.
"""

from __future__ import annotations

import re
from typing import Any

from keiri_agent.bank_words import without_bank_words
from keiri_agent.privacy.bank_payers import party_names
from keiri_agent.privacy.kana_names import (
    KANA,
    NAME_CHARS,
    hiragana_name,
    kana_full_names,
    kana_name_alone,
    known_as_name,
    split_over_cells,
)
from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.privacy.name_context import (
    bracketed_surnames,
    compound_misread,
    introduced,
    listed_surnames,
    subject_alone,
    surname_before,
    title_cut,
)
from keiri_agent.privacy.romaji import find_romaji_names, half_width_letters, with_romaji_part
from keiri_agent.sudachi import thread_tokenizer

__all__ = ["HONORIFICS", "MAX_CHUNK_CHARS", "find_names"]

# Sudachi refuses inputs over 49,149 UTF-8 bytes; 12,000 characters is at most 48,000 bytes.
MAX_CHUNK_CHARS = 12_000
HONORIFICS = frozenset({"様", "さま", "さん", "氏", "殿", "くん", "君", "ちゃん", "先生"})
TITLES = frozenset(
    {
        "部長",
        "課長",
        "係長",
        "主任",
        "社長",
        "専務",
        "常務",
        "取締役",
        "会長",
        "室長",
        "所長",
        "店長",
        "支店長",
        "担当",
        "宛",
        "宛て",
        "御中",
        "各位",
    }
)
COMPANY_PREFIXES = frozenset(
    {"株式会社", "有限会社", "合同会社", "合資会社", "(株)", "㈱", "（株）"}
)
SPACES = frozenset({" ", "\u3000"})

# A name in hiragana, four letters or more, before 様 / 殿 (わたなべだいき殿), five or more
# before さん unless it starts with お / ご (おまわりさん, ごくろうさん); never before さま
# (おつかれさま). A foreign name in katakana with its parts joined (マリア・ガルシア様): a company
# so written (ジョンソン・エンド・ジョンソン様) is masked too, as a name may be. Names in roman letters: ``privacy.romaji``.
_HONOURED = re.compile(
    r"(?<![ぁ-ん])([ぁ-ん]{4,}(?:[ 　][ぁ-ん]{2,})?)[ 　]*(?=[様殿])"
    r"|(?<![ぁ-ん])((?![おご])[ぁ-ん]{5,}(?:[ 　][ぁ-ん]{2,})?)[ 　]*(?=さん)"
    # a foreign name in katakana, its parts joined by ・ or ＝ (マリア・ガルシア様)
    r"|(?<![ァ-ヶー・])([ァ-ヶー]{2,}(?:[・＝][ァ-ヶー]{2,}){1,2})[ 　]*(?=様|さん|殿|氏)"
)

# A short given name in hiragana before an honorific, which the tokenizer cuts into other
# words (だいきさん → だ + いき + さん) or reads as a common noun (りくさん → 陸): the whole run of
# hiragana before the honorific (never after another hiragana letter, never from お / ご),
# decided by ``kana_names.hiragana_name``.
_SHORT_HIRAGANA = re.compile(
    r"(?<![ぁ-ん])((?![おご])[ぁ-ん]{2,4})[ 　]?(?=(様|さま|さん|殿|ちゃん|くん))"
)
_NOUN_END = re.compile(r"[一-龥々ァ-ヶー]")  # a run after such a letter may begin with a particle


def _short_hiragana(text: str, found: list[Span]) -> list[Span]:
    """Short given names in hiragana before an honorific (``_SHORT_HIRAGANA``), or one that
    follows a name found, one space apart (佐藤 はるとさん)."""
    ends = {span.end for span in found}
    spans: list[Span] = []
    for m in _SHORT_HIRAGANA.finditer(text):
        start, end = m.span(1)
        if start >= 1 and text[start - 1] in SPACES and start - 1 in ends:
            spans.append(Span(start, end, PersonalKind.PERSON))
            continue
        after_noun = start >= 1 and _NOUN_END.match(text, start - 1) is not None
        at = hiragana_name(m.group(1), m.group(2), after_noun=after_noun)
        if at is not None:
            spans.append(Span(start + at, end, PersonalKind.PERSON))
    return spans


# Variant kanji people keep in their names (人名の異体字: 髙橋, 𠮷田, 濵田) that NFKC leaves as
# they are and the dictionary does not know: read as the common form, one character for one,
# so that the offsets hold (髙橋 美咲 is one name, not 髙 橋 and a given name).
# An underscore parts the words of a file name as a space does (松本_恵子_源泉徴収票.pdf): it is
# read as one, so that the surname and the given name are one name.
_READ_AS = str.maketrans("髙𠮷濵栁德﨑槗_", "高吉浜柳徳崎橋 ")


def _chunks(text: str) -> list[tuple[int, str]]:
    """(offset, piece) pieces of at most MAX_CHUNK_CHARS, cut after a line end where possible."""
    pieces: list[tuple[int, str]] = []
    offset = 0
    while len(text) - offset > MAX_CHUNK_CHARS:
        window = text[offset : offset + MAX_CHUNK_CHARS]
        cut = window.rfind("\n")
        cut = cut + 1 if cut >= MAX_CHUNK_CHARS // 2 else MAX_CHUNK_CHARS
        pieces.append((offset, window[:cut]))
        offset += cut
    pieces.append((offset, text[offset:]))
    return pieces


def _is_name(pos: tuple[str, ...]) -> bool:
    return pos[2] == "人名" and pos[3] in ("姓", "名")


def _name_word(morpheme: Any) -> bool:
    """A surname, a given name, or a foreign name in kana (ジョージ, ジョン: 人名 一般, as the
    dictionary also tags some companies: ヤマト運輸)."""
    pos = morpheme.part_of_speech()
    return _is_name(pos) or (
        pos[2] == "人名" and pos[3] == "一般" and KANA.fullmatch(morpheme.surface()) is not None
    )


def _titled(morphemes: list[Any], index: int, *, honorifics_only: bool = False) -> bool:
    """Whether the words from ``index`` on begin with an honorific or a title (部 + 長 too);
    after one space, an honorific only (ナカジマ ケンタ　様, but 三井物産 御中)."""
    words: tuple[str, ...] = tuple(HONORIFICS) if honorifics_only else (*HONORIFICS, *TITLES)
    if index < len(morphemes) and morphemes[index].surface() in SPACES:
        index += 1
        words = tuple(HONORIFICS)
    ahead = "".join(m.surface() for m in morphemes[index : index + 2])
    return any(ahead.startswith(word) for word in words)


def _given_after_space(morphemes: list[Any], index: int) -> bool:
    """Whether a surname at ``index - 1`` goes on, after one space at ``index``, with a short
    word Sudachi did not tag as a given name (中村　愛, 田中　誠) that ends the phrase."""
    if index + 1 >= len(morphemes) or morphemes[index].surface() not in SPACES:
        return False
    word = morphemes[index + 1]
    following = morphemes[index + 2] if index + 2 < len(morphemes) else None
    return (
        morphemes[index - 1].part_of_speech()[3] == "姓"
        and word.part_of_speech()[0] == "名詞"
        and len(word.surface()) <= 3
        and NAME_CHARS.fullmatch(word.surface()) is not None
        and (following is None or following.part_of_speech()[0] != "名詞")
    )


def _kana_surname_before(morphemes: list[Any], first: int) -> bool:
    """Whether the name at ``first`` is in kana and a kana noun and one space come before it."""
    if first < 2 or morphemes[first - 1].surface() not in SPACES:
        return False
    if KANA.fullmatch(morphemes[first].surface()) is None:
        return False
    word = morphemes[first - 2]
    return word.part_of_speech()[0] == "名詞" and KANA.fullmatch(word.surface()) is not None


def _ends_organization(morpheme: Any) -> bool:
    """Whether ``morpheme``, right after a name, makes it part of a company or place name."""
    pos = morpheme.part_of_speech()
    surface = morpheme.surface()
    if surface in HONORIFICS or surface in TITLES:
        return False
    return pos[0] == "名詞" and pos[1] in ("普通名詞", "固有名詞") and not _is_name(pos)


def _may_be_a_name(morpheme: Any) -> bool:
    """Whether a word before 様 or a title may be a person's name: a word the dictionary does
    not know, or one it knows as a surname or given name among its readings (楽天, みずほ,
    ナカジマ); not one it knows as something else only (ソニー, 三菱商事, 日立), and not roman
    letters (``privacy.romaji`` reads those)."""
    surface = morpheme.surface()
    if surface.isascii():
        return False
    if morpheme.is_oov() or _name_word(morpheme):
        return True
    return kana_name_alone(surface) if KANA.fullmatch(surface) else known_as_name(surface)


def _kana_name_before_title(morphemes: list[Any], index: int) -> bool:
    """Whether the word at ``index`` is a given name or surname written alone in kana before
    様 / さん (ケンタ様, さくら様, リクさん), where the dictionary tags the word as a common
    noun but knows it as a name in one of its kana spellings, or it is a Japanese word in
    katakana; not after お / ご (おかあさん)."""
    surface = morphemes[index].surface()
    return (
        len(surface) >= 2
        and KANA.fullmatch(surface) is not None
        and not surface.startswith(("お", "ご"))
        and morphemes[index].part_of_speech()[0] == "名詞"
        and (index == 0 or not _kana_word(morphemes[index - 1]))
        and _titled(morphemes, index + 1, honorifics_only=True)
        and kana_name_alone(surface)
    )


def _kana_word(morpheme: Any) -> bool:
    """Whether ``morpheme`` is a word in kana that a kana name could be the end of (not a
    particle: 担当のリクさん)."""
    return KANA.fullmatch(morpheme.surface()) is not None and morpheme.part_of_speech()[0] not in (
        "助詞",
        "助動詞",
        "補助記号",
        "空白",
    )


def _spans(morphemes: list[Any], offset: int) -> list[Span]:
    spans: list[Span] = []
    index = 0
    count = len(morphemes)
    while index < count:
        morpheme = morphemes[index]
        pos = morpheme.part_of_speech()
        before_title = (
            (morpheme.is_oov() or pos[1] == "固有名詞")
            and pos[0] == "名詞"
            and pos[2] in ("人名", "地名", "一般")
            and _titled(morphemes, index + 1)
            and (
                _may_be_a_name(morpheme)
                # ナカジマ ケンタ様: a given name the dictionary knows as a word only
                or (_kana_surname_before(morphemes, index) and _may_be_a_name(morphemes[index - 2]))
            )
        )
        if not (
            _name_word(morpheme)
            or before_title
            or _kana_name_before_title(morphemes, index)
            or split_over_cells(morphemes, index)
            or subject_alone(morphemes, index)
        ):
            index += 1
            continue
        first = last = index
        index += 1
        while index < count:
            current = morphemes[index]
            if _name_word(current):
                last = index
                index += 1
            elif (
                current.surface() in SPACES
                and index + 1 < count
                and _name_word(morphemes[index + 1])
            ):
                index += 1
            elif first == last and _given_after_space(morphemes, index):
                last = index + 1
                index += 2
                break
            else:
                break
        first = surname_before(morphemes, first)  # 長崎 智子: 長崎 tagged a place
        after = morphemes[last + 1] if last + 1 < count else None
        before = morphemes[first - 1] if first > 0 else None
        honoured = _titled(morphemes, last + 1)
        cut = 0 if honoured else title_cut(morphemes, last, (*HONORIFICS, *TITLES))
        if after is not None and not honoured and not cut and _ends_organization(after):
            continue
        alone = morphemes[first].surface()
        if (
            first == last
            and not honoured
            and (len(alone) < 2 or KANA.fullmatch(alone))
            and not split_over_cells(morphemes, first)
            and not subject_alone(morphemes, first)
        ):
            continue  # 全, 行, リスト, マリア alone are words far more often than names
        if not honoured and compound_misread(morphemes, first):
            continue  # 取引先名 read 取引 + 先名, 取引先名カナ
        if before is not None and before.surface() in COMPANY_PREFIXES:
            continue
        if honoured and _kana_surname_before(morphemes, first):
            first -= 2  # ナカジマ ケンタ様: Sudachi knows the given name only
        start = offset + morphemes[first].begin()
        end = offset + morphemes[last].end() + cut  # 浩二部長 read 浩 + 二部 + 長: 浩二
        spans.append(Span(start, end, PersonalKind.PERSON))
    return spans + listed_surnames(morphemes, offset, spans)


# Banks print half-width kana without small letters: ｼﾖｳﾀ for ｼｮｳﾀ, ｷﾖｳｺ for ｷｮｳｺ, ﾊﾂﾄﾘ for
# ﾊｯﾄﾘ. A name is looked for in the text as printed and, where such letters occur, in the text
# with them made small (the same length, so the offsets hold): ﾐﾖｺ is found in the first.
_LARGE_YOON = re.compile(r"(?:(?<=[ｷｼﾁﾆﾋﾐﾘ])|(?<=[ｷｼﾁﾋ][ﾞﾟ]))[ﾔﾕﾖ]|ﾂ(?=[ｶ-ｺｻ-ｿﾀ-ﾄﾊ-ﾎ])")
_SMALL = str.maketrans("ﾔﾕﾖﾂ", "ｬｭｮｯ")


def _bank_kana(text: str) -> str:
    return _LARGE_YOON.sub(lambda m: m.group().translate(_SMALL), text)


# A payer in half-width kana is a surname, one space and a given name (ﾏﾂﾓﾄ ﾐﾖｺ): where the
# dictionary knows one of the two only, the word next to it is the other. The bank's words
# (``bank_words``: ﾌﾘｺﾐ, ﾃｽｳﾘﾖｳ...) are blanked out before, so they are never taken for one.
_HALF_KANA = re.compile(r"[ｦ-ﾟ]+")
_HALF_KANA_NAME = re.compile(r"[ｦ-ﾟ]+(?:[ 　][ｦ-ﾟ]+)*")
_GIVEN_AFTER = re.compile(r"[ 　]([ｦ-ﾟ]{2,})(?![ｦ-ﾟ()（）])")
_SURNAME_BEFORE = re.compile(r"(?<![ｦ-ﾟ()（）])[ｦ-ﾟ]{2,}[ 　]$")


def _with_whole_name(text: str, span: Span) -> Span:
    """``span`` with the half-width kana word right before or after it, one space apart."""
    if _HALF_KANA_NAME.fullmatch(text, span.start, span.end) is None:
        return span
    start, end = span.start, span.end
    if " " not in text[start:end] and "　" not in text[start:end]:
        given = _GIVEN_AFTER.match(text, end)
        surname = _SURNAME_BEFORE.search(text, max(0, start - 40), start)
        if given is not None:
            end = given.end()
        elif surname is not None:
            start = surname.start()
    return Span(start, end, span.kind)


def find_names(text: str) -> list[Span]:
    """The spans of people's names in ``text``."""
    if not text.strip():
        return []
    tokenizer = thread_tokenizer()
    spans = [
        Span(*m.span(next(g for g in (1, 2, 3) if m.group(g))), PersonalKind.PERSON)
        for m in _HONOURED.finditer(text)
    ]
    latin = half_width_letters(text)  # Ｍｉｓａｋｉ read as Misaki, offsets kept
    spans.extend(find_romaji_names(latin))
    bare = without_bank_words(text)  # as long as the text: its offsets hold
    for offset, piece in _chunks(bare):
        found = _spans(list(tokenizer.tokenize(piece.translate(_READ_AS))), offset)
        spans.extend(with_romaji_part(latin, span) for span in found)
        bank = _bank_kana(piece)
        if bank != piece:  # as long as the piece: its offsets are the piece's
            spans.extend(_spans(list(tokenizer.tokenize(bank)), offset))
    spans.extend(_short_hiragana(text, spans))
    spans.extend(Span(start, end, PersonalKind.PERSON) for start, end in kana_full_names(text))
    spans.extend(introduced(text))
    spans.extend(bracketed_surnames(text))
    if _HALF_KANA.search(text) is not None:
        spans = [_with_whole_name(bare, span) for span in spans]
    if bare != text:
        spans.extend(party_names(text, bare))
    return _joined(spans)


def _joined(spans: list[Span]) -> list[Span]:
    """Names found by two rules that overlap as one (田中はる by the tokenizer and はると
    before さん are 田中はると): the longer alone would leave the other's end in the text."""
    joined: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if joined and span.start < joined[-1].end:
            last = joined[-1]
            joined[-1] = Span(last.start, max(last.end, span.end), last.kind)
        else:
            joined.append(span)
    return joined
