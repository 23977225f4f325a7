"""Names in kana that SudachiPy's tags miss: what the dictionary knows of a word in either
kana, and a name split over two cells of a row without a header.

Sudachi tags a word by its context: ケンタ様 is a shop's nickname (ケンタ) before 様, さくら様 a
flower, サトウ beside a tab sugar (砂糖). Its lexicon knows more than the tag says: けんた is a
given name in hiragana, サクラ one in katakana, サトウ a surname. Here a word is looked up in
both kana (:func:`known_as_name`), and a word in katakana that the dictionary knows in hiragana
is a Japanese word written as names are written (:func:`native_in_katakana`: リク → りく 陸);
loanwords (ユーザー, バイト) and companies (ニトリ) have no hiragana spelling. ``privacy.names``
uses these beside an honorific and across the cells of a row (:func:`split_over_cells`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

from keiri_agent.sudachi import (
    TO_HIRAGANA,
    TO_KATAKANA,
    open_dictionary,
    tagged_place,
    thread_tokenizer,
)

__all__ = [
    "CELL_BREAKS",
    "FORM_PLACEHOLDERS",
    "HONOURED_WORDS",
    "KANA",
    "KATAKANA",
    "NAME_CHARS",
    "hiragana_name",
    "kana_full_names",
    "kana_name_alone",
    "known_as_name",
    "name_form",
    "names_no_one",
    "names_someone",
    "native_in_katakana",
    "rare_katakana_word",
    "split_over_cells",
]

KANA = re.compile(r"[ぁ-んァ-ヶー]+")
KATAKANA = re.compile(r"[ァ-ヶ]+")  # no ー: a long vowel marks a loanword (ユーザー)
NAME_CHARS = re.compile(r"[一-龥々ぁ-んァ-ヶー]+")


def known_as_name(surface: str, parts: tuple[str, ...] = ("姓", "名")) -> bool:
    """Whether the dictionary knows ``surface``, or the same word in the other kana, as a
    surname or given name (``parts``) among its entries."""
    dictionary = open_dictionary()
    spellings = {surface}
    if KANA.fullmatch(surface) is not None:
        spellings |= {surface.translate(TO_HIRAGANA), surface.translate(TO_KATAKANA)}
    return any(
        _name_part(m.part_of_speech(), parts) for w in spellings for m in dictionary.lookup(w)
    )


# What a word under a person's label may be when it names no one: a common noun (未定, 同上),
# an adjectival noun (不要), an adverb (特に), a suffix (確認中's 中), a symbol or a space; a proper noun, a verb or an
# auxiliary (ひまり read ひま + り) is not such a word.
_NO_ONE_POS = frozenset({"名詞", "形状詞", "副詞", "接尾辞", "接頭辞", "補助記号", "空白"})
_KANJI = re.compile("[一-龥々]")


# What a form writes in a person's field where no one is named: a mark (同, 〃, 済, 未, 無),
# a word for "nobody yet" or "the same" (未定, 同上, 不明, 空欄), a role that is no one in
# particular (本人, 代理, 上長, 各位, 先方, 外注), a post (役員, 顧問, 専務), a department named by
# its work (経理, 総務). A property of forms, not of the people named in them: every other word
# of one or two kanji alone in such a field is a given name by its place and form (希望, 元気,
# 朝陽, 大地, 光, 誠).
FORM_PLACEHOLDERS = frozenset(
    {"同", "〃", "仝", "済", "未", "無", "否", "可", "不", "欠", "休", "他", "外", "等"}
    | {"未定", "同上", "同左", "同右", "同前", "同人", "不明", "不要", "不在", "不詳", "空欄"}
    | {"空白", "無し", "本人", "当人", "代理", "代表", "欠員", "上長", "上司", "各位", "各自"}
    | {"全員", "一同", "保留", "省略", "後日", "別途", "別紙", "任意", "退職", "休職", "該当"}
    | {"記入", "未了", "完了", "承認", "確認", "検討", "募集", "選考", "担当", "全部", "一任"}
    | {"経理", "総務", "人事", "営業", "法務", "財務", "購買", "管理", "企画", "秘書", "広報"}
    | {"先方", "自分", "外注", "派遣", "委託", "役員", "顧問", "専務", "常務", "会長", "主任"}
    | {"理事", "監事", "取締役", "監査役", "執行役"}
)
# An organization's unit, the last letter of a word of two kanji or more (経理部, 総務課, 秘書室,
# 本社, 営業所, 支店): a department under 担当 or 連絡先, no one's given name.
_UNIT = re.compile("[一-龥々ァ-ヶー]+[部課室係班局所社店]")
# The head of such a unit, named by the title a form writes for an approver (部長, 課長, 社長,
# 店長, 支店長, 工場長): a post, no one's given name.
_HEAD = re.compile("[一-龥々ァ-ヶー]*[部課室係班局所社店次場]長")
# A note in brackets written where a name is asked for (（空）, 【未定】): a name is never so written.
_NOTE = re.compile(r"[（(【\[]([^（(【\[）)】\]]+)[）)】\]]")


@functools.lru_cache(maxsize=4096)
def names_no_one(value: str) -> bool:
    """Whether ``value``, written where a person's name is asked for (担当者：未定), names no
    one: one of the words forms write there (:data:`FORM_PLACEHOLDERS`: 同, 済, 未定, 同上, 本人),
    a unit of an organization (経理部, 営業所), a note in brackets ((空)), or words that are all
    ones the dictionary knows as common words (調整中, 後日決定, 該当なし, システム) and none of
    them is known as a name in either kana (林, 誠, さくら, ジョン are; システム's and フロント's
    人名 entries are a loanword's shadow: :func:`names_someone`), nor a proper noun (春日部), nor a
    word in katakana written as names are (ソラ, ミナト: :func:`native_in_katakana`; タイガ: no
    synonym group lists it), and it has no form of a name (空, 希望, みなと, 森 空:
    :func:`name_form`). A word the dictionary does not know names someone, as a rare name is
    the likelier reading."""
    if value in FORM_PLACEHOLDERS or any(p.fullmatch(value) for p in (_UNIT, _HEAD)):
        return True
    note = _NOTE.fullmatch(value)
    if note is not None:
        return not names_someone(note.group(1).strip())
    if KANA.search(value) is None and _KANJI.search(value) is None:
        return False
    grammar = False
    for morpheme in thread_tokenizer().tokenize(value):
        pos = morpheme.part_of_speech()
        surface = morpheme.surface()
        if pos[0] in ("補助記号", "空白"):
            continue
        if pos[0] == "接尾辞" and not morpheme.is_oov():
            continue  # 確認中's 中 is no surname
        if (
            morpheme.is_oov()
            or pos[0] not in _NO_ONE_POS
            or pos[1] == "固有名詞"
            or names_someone(surface)
            or native_in_katakana(surface)
            or _unlisted_katakana(surface)
        ):
            return False
        grammar = grammar or _grammar_word(pos)
    return grammar or not name_form(value)


def _unlisted_katakana(surface: str) -> bool:
    """Whether ``surface`` is a word in katakana none of whose entries the dictionary lists in a
    synonym group (タイガ, ハルト): the common vocabulary a form writes in a person's field is
    listed (ゲスト, スタッフ, システム, メンバー); a given name written as a loanword is not."""
    if KANA.fullmatch(surface) is None or KATAKANA.search(surface) is None or len(surface) < 2:
        return False
    return not any(m.synonym_group_ids() for m in open_dictionary().lookup(surface))


# Where a name is asked for, a word the dictionary knows as one of these is no one's given
# name: a word of grammar (なし, 無: an auxiliary, a dependent adjective, ない's), a pronoun, an
# adverb or a noun used as one (まだ, とくに, みんな, 他), an interjection, a conjunction.
_GRAMMAR_POS = frozenset({"助動詞", "代名詞", "副詞", "感動詞", "接続詞", "連体詞", "助詞"})
# A part of a name as given names of recent years and surnames that are words are written:
# one or two kanji (空, 海, 林, 希望, 朝陽), or hiragana (みなと, つむぎ; glued to a surname: つじつむぎ).
_NAME_PART = re.compile(r"[一-龥々]{1,2}|[ぁ-ん]{2,8}")


def _grammar_word(pos: tuple[str, ...]) -> bool:
    return (
        pos[0] in _GRAMMAR_POS
        or pos[2] == "副詞可能"
        or (pos[0] == "形容詞" and pos[1] == "非自立可能")
    )


def name_form(value: str) -> bool:
    """Whether ``value``, common words where a person's name is asked for, has the form of a
    name: a given name alone, one or two kanji (空, 海, 灯, 希望, 元気, 朝陽) or a word in
    hiragana (みなと, つむぎ, あかつき, さち), or a surname and a given name so written (ほし こと,
    森 空, つじつむぎ), as given names of recent years are words so written (the dictionary
    lists few of them as names); unless a word alone is one the dictionary knows as a word of
    grammar, a pronoun or an adverb as well (なし, まだ, みんな). Words of three kanji or more
    (調整中, 担当者, 未入力) are compounds forms write, and no such form; the words of one or two
    kanji forms write where no one is named are :data:`FORM_PLACEHOLDERS`."""
    parts = value.split()
    if not 1 <= len(parts) <= 2 or any(_NAME_PART.fullmatch(part) is None for part in parts):
        return False
    if len(parts) == 2:
        return True
    return not any(_grammar_word(m.part_of_speech()) for m in open_dictionary().lookup(value))


def kana_name_alone(surface: str) -> bool:
    """Whether a word in kana, alone before 様 / さん, is a person's name: the dictionary knows
    it as a surname or given name in this spelling (マツダ, ミサキ) or in the other kana (けんた,
    さくら), or it is a Japanese word in katakana (リク). A company named after a surname
    (トヨタ → とよた 豊田, クボタ → くぼた 久保田) is masked too: written alone before 様 it cannot
    be told from the person (タケダ様 is as often Mr 武田 as the company), and a company's name
    taken for a person's costs less than a person's name sent out (as ``Toyota様`` in romaji)."""
    return names_someone(surface) or native_in_katakana(surface) or rare_katakana_word(surface)


def _name_part(pos: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    return pos[2] == "人名" and pos[3] in parts


def native_in_katakana(surface: str) -> bool:
    """Whether ``surface`` is a Japanese word written in katakana (リク → りく 陸, ヒナ → ひな,
    ツバサ → つばさ): before 様 / さん such a word is a given name, as Japanese words are
    written in katakana mostly in names; loanwords (ユーザー, バイト, ゲスト) and companies
    (ニトリ, ヤクルト) have no hiragana spelling in the dictionary."""
    if KATAKANA.fullmatch(surface) is None:
        return False
    return bool(open_dictionary().lookup(surface.translate(TO_HIRAGANA)))


_SMALL_VOWELS = re.compile("[ァィゥェォヮ]")  # シェ, フィ, ティ: loanwords, not Japanese names


def rare_katakana_word(surface: str) -> bool:
    """Whether ``surface`` is a word in katakana without a long vowel or a small vowel (シェフ,
    フィルム: loanwords' letters) that the dictionary knows as a common noun, and else only as a
    place or a proper noun, none of them in its synonym groups (ハルト, タイガ): Sudachi's
    synonym dictionary lists the common vocabulary, loanwords a back office writes before 様 /
    さん among them (ゲスト, テナント, スタッフ, ユーザ, ベンダ); a word it lists no synonyms for
    is a rare one, and before an honorific a given name far more often. Companies are proper
    nouns of their own kind and nothing else (ニトリ, ヤマハ: 固有名詞 一般) and stay."""
    if KATAKANA.fullmatch(surface) is None or len(surface) < 2 or _SMALL_VOWELS.search(surface):
        return False
    entries = open_dictionary().lookup(surface)
    kinds = [m.part_of_speech() for m in entries]
    return (
        any(pos[1] == "普通名詞" for pos in kinds)
        and all(
            pos[1] == "普通名詞" or tagged_place(pos) or pos[1:3] == ("固有名詞", "一般")
            for pos in kinds
        )
        and not any(m.synonym_group_ids() for m in entries)
    )


def names_someone(surface: str) -> bool:
    """Whether the dictionary knows ``surface`` as a person's name: a surname or a given name in
    either kana (:func:`known_as_name`), or a foreign name (人名 一般: ジョージ, ノア, ソラ) unless
    that entry is another word's shadow: the dictionary gives many loanwords and companies a
    人名 entry beside their own (システム, フロント, パート; ソニー); where that word is in a synonym
    group and the name in none, the word is the other one (ジョージ's and ノア's names are in
    synonym groups; nothing of ソラ is)."""
    if known_as_name(surface):
        return True
    entries = open_dictionary().lookup(surface)
    foreign = [m for m in entries if m.part_of_speech()[2:4] == ("人名", "一般")]
    if not foreign:
        return False
    if any(m.synonym_group_ids() for m in foreign):
        return True
    return not any(m.synonym_group_ids() for m in entries)


# Kinds of word that are no one's name before an honorific: pronouns and nouns used as adverbs
# stand for people in general (みなさん, あなたさま, こちらさま, みんなさん), interjections are
# greetings (ありがとさん).
_NOT_A_NAME = frozenset({"代名詞", "副詞可能", "感動詞"})
# The common nouns Japanese honours with さま as one expression, written wholly in hiragana
# (かみさま, ほとけさま, にいさま): gods and kin, a closed class. Any other common noun before
# さま is a given name (りくさま 陸, ひなさま 雛, さくらさま): business writing honours people,
# not things; the honorific forms with お / ご (おきゃくさま, おつかれさま, ごくろうさま) are
# never read as a name (``privacy.names``), nor are pronouns (みなさま, あなたさま).
HONOURED_WORDS = frozenset(
    {"かみ", "ほとけ", "えびす", "だいこく", "じぞう", "てんじん", "にい", "ねえ", "あに", "あね"}
    | {"じい", "ばあ", "とう", "かあ", "だんな", "との", "おう", "おうじ", "きみ", "ぬし"}
)
# Particles a run of hiragana after a noun may begin with (経理のだいきさん, 田中はるとさん).
_PARTICLES = frozenset("のはがをにへともや")


def hiragana_name(word: str, honorific: str, *, after_noun: bool) -> int | None:
    """Where the given name starts in ``word``, a run of hiragana standing alone before
    ``honorific`` (りくさん, ゆうと様, ひなちゃん); None when it holds none.

    Hiragana before an honorific is a name by its form (as longer runs are, ``privacy.names``)
    unless the dictionary knows it with its honorific as one word (とうさん, ねえちゃん: kin,
    not a person) or the word as a pronoun (みな, あなた, こちら) or an interjection
    (ありがと). A word it knows as a common noun (りく 陸, ひな 雛) or not at all (はると,
    そうた) is a name there: common nouns are hardly ever honoured in business writing, given
    names often; only before a hiragana さま is such a noun one expression with it (かみさま,
    ほとけさま: written wholly in hiragana, as business writing writes no one's 様). After a noun
    (``after_noun``) the run may begin with a particle: the name is the rest when the rest is
    known as a name (経理のだいきさん) or the whole is a word that is no name (経理のれんさん,
    のれん 暖簾), else the whole (田中はるとさん; のりこさん is a name whole)."""
    if open_dictionary().lookup(word + honorific):
        return None  # とうさん, ねえちゃん
    if known_as_name(word):
        return 0
    if after_noun and word[0] in _PARTICLES and len(word) >= 3:
        rest = word[1:]
        if not _may_be_honoured(rest, honorific):
            return None
        if known_as_name(rest) or open_dictionary().lookup(word):
            return 1
    return 0 if _may_be_honoured(word, honorific) else None


def _may_be_honoured(word: str, honorific: str) -> bool:
    """Whether the dictionary knows ``word`` as no pronoun or interjection, nor with
    ``honorific`` as one word, and it is none of :data:`HONOURED_WORDS` before a hiragana さま."""
    dictionary = open_dictionary()
    kinds = {part for m in dictionary.lookup(word) for part in m.part_of_speech()[:3]}
    if kinds & _NOT_A_NAME:
        return False
    if honorific == "さま" and word in HONOURED_WORDS:
        return False  # かみさま, ほとけさま: one expression written wholly in hiragana
    return not dictionary.lookup(word + honorific)


# A surname and a given name in kana with no honorific or header beside them, as sheet names,
# pivoted headers and file names carry them: one space apart (ナカジマ ケンタ, ﾅｶｼﾞﾏ ｹﾝﾀ) or
# glued (コバヤシユミ, わたなべだいき), the run of one kana standing alone.
_KANA_PAIRS = (
    re.compile(r"(?<![ァ-ヶー])([ァ-ヶ][ァ-ヶー]+)(?:[ 　]([ァ-ヶ][ァ-ヶー]+))?(?![ァ-ヶー])"),
    re.compile(r"(?<![ぁ-んー])([ぁ-ん][ぁ-んー]+)(?:[ 　]([ぁ-ん][ぁ-んー]+))?(?![ぁ-んー])"),
    # half width, spaced only: banks glue a company's name (ｱｵﾊﾞｼﾖｳｼﾞ), never a person's
    re.compile(r"(?<![ｦ-ﾟ])([ｦ-ﾟ]{2,})[ 　]([ｦ-ﾟ]{2,})(?![ｦ-ﾟ])"),
    # a surname in kanji, one space, a given name in katakana (松 ヨウスケ, 東 ジョージ)
    re.compile(r"(?<![一-龥々])([一-龥々]{1,3})[ 　]([ァ-ヶ][ァ-ヶー]+)(?![ァ-ヶー])"),
)
MAX_GLUED_NAME = 10  # kana of a surname and a given name written as one word (ワタナベマユミ: 7)


def kana_full_names(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds a full name in kana alone, or a surname in kanji and a given name
    in katakana (松 ヨウスケ: the tokenizer reads 松 a pine): a word the dictionary knows as a
    surname and one it knows as a given name or a foreign name (in either kana), one space
    apart or, in kana, glued; a glued run the dictionary knows as one word is that word
    (サトウキビ)."""
    found: list[tuple[int, int]] = []
    for pattern in _KANA_PAIRS:
        for m in pattern.finditer(text):
            first, second = m.group(1), m.group(2)
            if second is not None:
                first, second = (unicodedata.normalize("NFKC", w) for w in (first, second))
                if known_as_name(first, ("姓",)) and (
                    known_as_name(second, ("名", "一般")) or rare_katakana_word(second)
                ):
                    found.append(m.span())
            elif _glued_name(first):
                found.append(m.span(1))
    return found


def _glued_name(run: str) -> bool:
    if not 4 <= len(run) <= MAX_GLUED_NAME or open_dictionary().lookup(run):
        return False
    return any(
        known_as_name(run[:cut], ("姓",)) and known_as_name(run[cut:], ("名",))
        for cut in range(2, len(run) - 1)
    )


# What cuts a row into cells as text carries it (CSV, TSV, Markdown).
CELL_BREAKS = frozenset({",", "，", "\t", "|", "｜"})


def split_over_cells(morphemes: list[Any], index: int) -> bool:
    """Whether the word at ``index`` is one half of a name split over two cells of a row
    without a header (ハセガワ,ミサキ / ヤマダ⇥リク): a surname, a cell break, a given name."""
    if (
        index + 2 < len(morphemes)
        and morphemes[index + 1].surface() in CELL_BREAKS
        and _surname_word(morphemes[index])
        and _given_word(morphemes[index + 2])
    ):
        return True
    if index >= 2 and morphemes[index - 1].surface() in CELL_BREAKS:
        return _given_word(morphemes[index]) and _surname_word(morphemes[index - 2])
    return False


def _surname_word(morpheme: Any) -> bool:
    """A surname: tagged so, or known as one in either kana (サトウ, read 砂糖 beside a tab)."""
    pos = morpheme.part_of_speech()
    surface = morpheme.surface()
    return (pos[2] == "人名" and pos[3] == "姓") or (
        pos[0] == "名詞" and len(surface) >= 2 and known_as_name(surface, ("姓",))
    )


def _given_word(morpheme: Any) -> bool:
    """A given name as its cell holds it, in the cell after a surname's: tagged so, or a word
    the dictionary does not know or knows as a name in either kana, or a word in katakana
    without a long vowel (ミサキ, ソウタ, ハルト)."""
    surface = morpheme.surface()
    if NAME_CHARS.fullmatch(surface) is None or len(surface) < 2:
        return False
    pos = morpheme.part_of_speech()
    if pos[2] == "人名" and pos[3] == "名":
        return True
    return pos[0] == "名詞" and (
        morpheme.is_oov()
        or KATAKANA.fullmatch(surface) is not None  # ハルト: names have no ー, loanwords do
        or known_as_name(surface)
    )
