"""Names whose words the tokenizer tags wrongly, found again by what stands around them.

SudachiPy tags a word by its context, and two contexts common in what features send mislead it:

- a given name glued to a title, cut at the wrong place: ``石川 浩二部長`` is read 浩 + 二部 + 長
  (a given name 浩, a common noun 二部): :func:`title_cut` gives the letters of the next word
  that end the given name when the dictionary knows the longer word as a given name and the
  rest begins a title or an honorific (``privacy.names`` keeps the name whole);
- a column header read across its words: ``取引先名`` is read 取引 + 先名 (a surname), and so
  are 得意先名, 請求先名, 勤務先名: :func:`compound_misread` says a word glued to the noun before it
  is read across a boundary when that noun and its first letters make a word the dictionary
  knows (取引先) and the rest is a word too (名), or when the word is 先名 or 元名: 先 / 元 make
  the party of the action of the noun or verb before (発注先, 仕入元: words the dictionary need
  not know) and 名 is a header's "name of" (発注先名, 仕入元名);
- a surname that is a place as well, in a list of people: ``担当者別売上（井上・松本）`` and
  ``シート: 松本、渡辺`` tag 松本 a place (地名). :func:`listed_surnames` takes a word the
  dictionary knows as a surname, standing as an item of a list (・、, / | tab between items),
  when the item next to it is a name found; a list of places alone (石川・富山・福井) stays;
- a surname that is a place as well, before a given name: ``申請者 長崎 智子`` tags 長崎 a
  place and 智子 a given name; :func:`surname_before` takes the word the dictionary knows as a
  surname, right before a given name or one space apart, into the name;
- a given name in kana alone, as people introduce themselves in a chat or a question
  (``お疲れさまです。たくやです。``, ``すみません、松本です！``, ``経理部のけんたと申します``):
  one word is a name only beside an honorific elsewhere (リスト, マリア are words first), but
  at the start of a sentence and followed by です / と申します that ends it, a word the
  dictionary knows as a name in either kana (たくや, ミサキ, さとう) names the writer
  (:func:`introduced`);
- a given name alone as the one a sentence speaks of (``本件は遥が対応します``, ``レオから連絡``,
  ``タイガが確認します``): a single kana word or kanji is a word more often than a name
  (リスト, 全, 行), but standing alone between a sentence's break or a particle and a particle
  of case or topic (が, は, から, に...), a word in katakana the tokenizer tags a person's name
  there (レオ, エマ) or the dictionary knows as one (ノア, ユウ: ``kana_names.names_someone``), a
  rare katakana word (タイガ: ``kana_names.rare_katakana_word``), a Japanese word in katakana
  (ヒナ 雛, ショウ: ``kana_names.native_in_katakana``; loanwords, システム, フロント, have no kana
  spelling of their own; ネタ, クセ, rare words that are Japanese ones too) when what follows says a
  person's act (ヒナが対応します, 明日ショウに確認, ヒナから連絡: a noun of an act not undergone,
  ツケが精算されます, nor a happening, ウソが発覚しました; a polite お / ご; a verb only a person is
  the one of, ヒナに聞いてください, ショウが来ます), never where it says how a thing is (ムダが多い,
  ネタがあります), or a kanji
  the dictionary knows as nothing but a name (遥) is the person (:func:`subject_alone`);
- surnames that are places as well, listed in brackets as people are (``担当者別売上（松本・石川）``,
  a chart's title): :func:`bracketed_surnames` takes every item of a list in brackets parted by
  ・ when each is known as a surname, unless a word about places stands before it (地域別（石川・
  富山）, 北陸（石川・富山・福井）).
"""

from __future__ import annotations

import re
from typing import Any

from keiri_agent.privacy.kana_names import (
    KANA,
    KATAKANA,
    known_as_name,
    names_someone,
    native_in_katakana,
    rare_katakana_word,
)
from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.privacy.places import names_a_place, speaks_of_places
from keiri_agent.sudachi import TO_HIRAGANA, TO_KATAKANA, open_dictionary

__all__ = [
    "LIST_BREAKS",
    "bracketed_surnames",
    "compound_misread",
    "introduced",
    "listed_surnames",
    "subject_alone",
    "surname_before",
    "title_cut",
]

# A self-introduction: a word at the start of a sentence (or after 経理部の) that ends it with
# です / と申します... (たくやです。, 松本です！, 経理部のけんたと申します). Read in the text, not
# in the tokenizer's words: it cuts hiragana names (だいき → だ + いき).
_INTRODUCED = re.compile(
    r"(?:^|(?<=[。！!？?\n 　、の]))([一-龥々]{1,4}|[ぁ-ん]{2,6}|[ァ-ヶー]{2,8})"
    r"(?=(?:です|と申します|といいます|と言います|でございます)(?:[。！!\n 　、]|$))"
)
# Kinds of word a sentence ends with です that are no name (そうです, こちらです, ダメです,
# 無理です), in any of the word's kana spellings; not a verb (こうじ is 講じ and 浩二).
_NOT_INTRODUCED = frozenset(
    {"副詞", "代名詞", "感動詞", "形状詞", "連体詞", "接続詞", "形容詞", "形状詞可能"}
)


def _may_end_before_desu(pos: tuple[str, ...]) -> bool:
    """Whether a word of this part of speech may stand before です as a sentence's end: an
    adjective only in its end form (うれしいです); さとう is also 聡い in a form that never does."""
    return pos[0] != "形容詞" or pos[5].startswith("終止形")


def introduced(text: str) -> list[Span]:
    """Names their writer introduces themself by (:data:`_INTRODUCED`): a word the dictionary
    knows as a surname or given name in either kana (たくや, ミサキ, 松本 though tagged a
    place), and in none of its kana
    spellings as another kind of word a sentence ends with です (そう, こちら, ダメ, 無理)."""
    dictionary = open_dictionary()
    found: list[Span] = []
    for match in _INTRODUCED.finditer(text):
        word = match.group(1)
        spellings = {word, word.translate(TO_HIRAGANA), word.translate(TO_KATAKANA)}
        kinds = {
            part
            for spelling in spellings
            for m in dictionary.lookup(spelling)
            if _may_end_before_desu(m.part_of_speech())
            for part in (m.part_of_speech()[0], m.part_of_speech()[2])
        }
        if kinds & _NOT_INTRODUCED:
            continue
        if known_as_name(word) and (len(word) >= 2 or KANA.fullmatch(word) is None):
            found.append(Span(*match.span(1), PersonalKind.PERSON))
    return found


# What parts the items of a list of people (井上・松本, 松本、渡辺, a header row).
LIST_BREAKS = frozenset({"・", "、", "，", ",", "/", "／", "|", "｜", "\t"})
# What may stand around a list's item: a break, brackets, a colon, a space, the text's ends.
_EDGES = LIST_BREAKS | {
    "（",
    "(",
    "）",
    ")",
    "「",
    "」",
    "【",
    "】",
    ":",
    "：",
    " ",
    "\u3000",
    "\n",
}


def title_cut(morphemes: list[Any], last: int, words: tuple[str, ...]) -> int:
    """How many letters of the word after ``last`` (a given name) belong to the name, because
    the dictionary knows them with it as a given name and the rest begins one of ``words``
    (titles, honorifics): 浩 + 二部 + 長 → 2 letters of 二部 would be too many, 1 (二) makes 浩二
    and leaves 部長. 0 when the next word is no such cut."""
    if last + 1 >= len(morphemes):
        return 0
    name = morphemes[last].surface()
    after = morphemes[last + 1].surface()
    following = "".join(m.surface() for m in morphemes[last + 2 : last + 4])
    for cut in range(1, len(after)):
        rest = after[cut:] + following
        if rest.startswith(words) and known_as_name(name + after[:cut], ("名",)):
            return cut
    return 0


def surname_before(morphemes: list[Any], first: int) -> int:
    """Where a name that begins with a given name at ``first`` begins: at a proper noun the
    tokenizer tagged otherwise (長崎: a place) right before it, or one space before it, when
    the dictionary knows that word as a surname; else at ``first``."""
    # a given name the dictionary knows as one, whatever its tag here (由美 beside 長崎: 姓)
    given = morphemes[first]
    if given.part_of_speech()[2] != "人名" or not known_as_name(given.surface(), ("名",)):
        return first
    at = first - 1
    if at >= 1 and morphemes[at].surface() in (" ", "\u3000"):
        at -= 1
    if at < 0:
        return first
    word = morphemes[at]
    before = word.part_of_speech()
    if before[1] == "固有名詞" and before[2] != "人名" and known_as_name(word.surface(), ("姓",)):
        return at
    return first


def compound_misread(morphemes: list[Any], index: int) -> bool:
    """Whether the word at ``index``, glued to the noun before it, was read across the
    boundary of two other words (取引 + 先名 for 取引先 + 名)."""
    if index == 0:
        return False
    before = morphemes[index - 1]
    if before.end() != morphemes[index].begin():
        return False
    word = morphemes[index].surface()
    if before.part_of_speech()[0] in ("名詞", "動詞") and word in _PARTY_HEADS:
        return True  # 発注先名, 仕入元名 (仕入: a verb's stem): the party of an action
    if before.part_of_speech()[0] != "名詞":
        return False
    dictionary = open_dictionary()
    return any(
        dictionary.lookup(before.surface() + word[:cut]) and dictionary.lookup(word[cut:])
        for cut in range(1, len(word))
    )


# A letter that makes a noun or a verb's stem the party of its action (発注先, 振込先, 発行元,
# 仕入元), and 名 after it: glued to the noun they are a header's word (発注先名), never a
# surname, though the dictionary knows 先名 and 元名 as ones.
_PARTY_HEADS = frozenset({"先名", "元名"})


def _next_item(morphemes: list[Any], index: int, step: int, offset: int) -> int | None:
    """Where the item next to the one at ``index`` (``step`` 1: after, -1: before) begins
    (after) or ends (before), when a list break parts them, spaces aside (松本, 井上)."""
    at = index + step
    seen_break = False
    while 0 <= at < len(morphemes) and (
        morphemes[at].surface() in LIST_BREAKS or not morphemes[at].surface().strip()
    ):
        seen_break = seen_break or morphemes[at].surface() in LIST_BREAKS
        at += step
    if not seen_break or not 0 <= at < len(morphemes):
        return None
    edge: int = morphemes[at].begin() if step == 1 else morphemes[at].end()
    return offset + edge


def _breaks(morpheme: Any | None) -> bool:
    return morpheme is None or morpheme.surface() in _EDGES


def listed_surnames(morphemes: list[Any], offset: int, spans: list[Span]) -> list[Span]:
    """Surnames tagged otherwise (松本: a place) that stand as items of a list next to a name
    found in ``spans`` (offsets of the text ``morphemes`` were read from, at ``offset``)."""
    if not spans:
        return []
    starts = {span.start for span in spans}
    ends = {span.end for span in spans}
    # proper nouns the tokenizer did not tag as names, standing alone as an item
    candidates = [
        index
        for index, morpheme in enumerate(morphemes)
        if (pos := morpheme.part_of_speech())[1] == "固有名詞"
        and pos[2] != "人名"
        and len(morpheme.surface()) >= 2
        and _breaks(morphemes[index - 1] if index > 0 else None)
        and _breaks(morphemes[index + 1] if index + 1 < len(morphemes) else None)
    ]
    found: list[Span] = []
    changed = True
    while changed:  # 松本、石川、渡辺: each item found makes its neighbour's neighbour a name
        changed = False
        for index in candidates:
            start, end = offset + morphemes[index].begin(), offset + morphemes[index].end()
            if start in starts:
                continue
            beside = _next_item(morphemes, index, 1, offset) in starts or (
                _next_item(morphemes, index, -1, offset) in ends
            )
            if beside and known_as_name(morphemes[index].surface(), ("姓",)):
                found.append(Span(start, end, PersonalKind.PERSON))
                starts.add(start)
                ends.add(end)
                changed = True
    return found


# A list in brackets, its items parted by ・ (（松本・石川）): people listed as a chart's title
# lists them. Items are words in kanji of two or three letters.
_BRACKETED = re.compile(r"[（(]([一-龥々]{2,3}(?:・[一-龥々]{2,3})+)[）)]")
_BEFORE = 8  # letters before the bracket read for a word about places


def bracketed_surnames(text: str) -> list[Span]:
    """Items of a list in brackets parted by ・ (:data:`_BRACKETED`) when every item is known as
    a surname (松本, 石川: places too) and nothing before the bracket speaks of places: a
    region (北陸), or a word about places (``privacy.places``: 地域別, 県, 支店)."""
    found: list[Span] = []
    for match in _BRACKETED.finditer(text):
        items = match.group(1).split("・")
        if not all(known_as_name(item, ("姓",)) for item in items):
            continue
        before = text[max(0, match.start() - _BEFORE) : match.start()]
        if speaks_of_places(before) or names_a_place(before):
            continue
        at = match.start(1)
        for item in items:
            found.append(Span(at, at + len(item), PersonalKind.PERSON))
            at += len(item) + 1
    return found


# The particles after which a word stands as what a sentence speaks of (遥が, レオから, リクに).
_CASE_PARTICLES = frozenset({"が", "は", "から", "より", "に", "と", "も", "へ"})
# What may stand before such a word: the start, a particle, a sentence's or a list's break, an
# adverb or a noun used as one (明日ショウに確認, 後ほどヒナに).
_BEFORE_ALONE = frozenset({"助詞", "補助記号", "空白", "副詞", "副詞可能"})


# Verbs only a person is the one of, at が, or at に / と / へ / から (ヒナに聞いてください, ショウが
# 来ます): asking, telling, meeting, handing over, coming and going; a thing is put somewhere, found
# or delivered (ハコに入れる, カギが見つかる, ハコが届く).
_PERSONS_VERBS = frozenset(
    {
        *("聞く", "訊く", "尋ねる", "問う", "伝える", "話す", "言う", "申す", "頼む", "教える"),
        *("任せる", "渡す", "会う", "知らせる", "答える", "来る", "行く", "伺う", "参る", "休む"),
        *("帰る", "手伝う", "断る", "謝る", "返す", "送る"),
    }
)
# Nouns of what happens to a thing, not what a person does (ウソが発覚しました, ミスが発生しました).
_HAPPENINGS = frozenset(
    {
        *("発覚", "発生", "判明", "発見", "露呈", "多発", "頻発", "増加", "減少", "散乱"),
        *("混入", "存在", "不足", "残存", "紛失", "破損", "故障", "遅延", "消失", "解消"),
    }
)


def _a_persons_act(morphemes: list[Any], at: int) -> bool:
    """Whether the words from ``at`` (after a particle) say what a person does or is asked to
    do: a humble or polite form (お願いします, ご連絡します), a noun of an act (対応, 確認,
    連絡, 担当) that is done, not undergone (精算されます: a thing's) and no happening (発覚,
    発生), or a verb only a person is the one of (聞く, 伝える, 来る)."""
    if at >= len(morphemes):
        return False
    word = morphemes[at]
    if word.part_of_speech()[0] == "接頭辞" and word.surface() in ("お", "ご", "御"):
        return True
    if word.part_of_speech()[0] == "動詞":
        return word.dictionary_form() in _PERSONS_VERBS
    if word.part_of_speech()[2] != "サ変可能" or word.surface() in _HAPPENINGS:
        return False
    return at + 1 >= len(morphemes) or morphemes[at + 1].surface() not in ("さ", "され")


def _a_things_state(morphemes: list[Any], at: int) -> bool:
    """Whether the words from ``at`` (after a particle) say how a thing is (ムダが多い, クセが
    強い, ミスがない, キズがあります, ムリな, ウソが発覚しました): an adjective, there being or
    not, a happening."""
    if at >= len(morphemes):
        return False
    word = morphemes[at]
    pos = word.part_of_speech()
    return (
        pos[0] in ("形容詞", "形状詞")
        or word.dictionary_form() in ("ある", "有る", "無い")
        or word.surface() in _HAPPENINGS
    )


def subject_alone(morphemes: list[Any], index: int) -> bool:
    """Whether the word at ``index`` is a given name standing alone before a particle of case or
    topic (本件は遥が対応します, 了解です。レオが確認します): after the text's start, a particle,
    a break or an adverb (明日); in katakana, tagged a person's name here (レオ, エマ), known as
    one (ノア, ユウ), a rare word (タイガ), one the dictionary does not know, with no long vowel
    (ソウタ), or a Japanese word (ヒナ) before a person's act; in kanji, known as nothing but a
    name (遥)."""
    if index + 1 >= len(morphemes) or morphemes[index + 1].surface() not in _CASE_PARTICLES:
        return False
    if morphemes[index + 1].part_of_speech()[0] != "助詞":
        return False
    if index > 0 and not _BEFORE_ALONE & set(morphemes[index - 1].part_of_speech()[:3]):
        return False
    word = morphemes[index]
    surface = word.surface()
    if KANA.fullmatch(surface) is not None:
        return (
            len(surface) >= 2
            and KATAKANA.search(surface) is not None
            and word.part_of_speech()[0] == "名詞"  # not ココ, a pronoun here
            and not _a_things_state(morphemes, index + 2)  # ムダが多い, ネタがあります
            and (
                word.part_of_speech()[2] == "人名"
                or names_someone(surface)
                # a rare word that is a Japanese one too (ネタ, クセ: ねた, くせ) is told below
                or (rare_katakana_word(surface) and not native_in_katakana(surface))
                or (word.is_oov() and KATAKANA.fullmatch(surface) is not None)  # ソウタ
                # a Japanese word in katakana (ヒナ 雛, ショウ), as names are written, that
                # the sentence makes one who acts or is asked (ヒナが対応します, ショウに確認)
                or (native_in_katakana(surface) and _a_persons_act(morphemes, index + 2))
            )
        )
    entries = open_dictionary().lookup(surface)
    return bool(entries) and all(m.part_of_speech()[2] == "人名" for m in entries)
