"""A seventh generator: people named by names that are words too, under a person's label
(session 17).

Japanese given names of recent years are often words: 空・海・光・陽・湊・紬・楓・栞・凪・翼, in
hiragana みなと・つむぎ・ひかり・あおい・こころ・いろは・ひなた・あかり, in katakana ソラ・ミナト; and
surnames are words as often (林・森・原・松・岡・坂・橋・星・泉, 小林・岡田). A form, a register or a
mail writes them under a person's label (氏名・担当・担当者・申請者・宛名・ご担当者様・承認者・作成者)
after a colon (「担当：ひかり」), on the line below a label or in a table's column, alone, as
family + given (林 みなと, 森　空, 原光), with an honorific or without. Beside them, under the
same labels, the words a form writes where no one is named (未定・同上・不明・なし・担当者・未入力・
空欄・調整中・該当なし・本人・欠員・経理部・別紙参照): they must reach a model as written, and so
must the amounts and dates beside them.

:func:`make_word_name_docs` gives :class:`~tests.privacy.backoffice.Doc` objects (``secrets``: the
name as written, its given name and its surname; ``kept``: the placeholders, amounts and
dates), deterministic for a seed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage

from keiri_agent.llm.masking import mask_input
from keiri_agent.privacy import Vault, mask_json_text
from tests.privacy.backoffice import Doc, Maker, make_docs

__all__ = [
    "GIVEN",
    "PLACEHOLDERS",
    "SHAPES",
    "SURNAMES",
    "NamedDoc",
    "WordNames",
    "make_named_docs",
    "make_word_name_docs",
    "masked_json",
    "mistakes",
    "wrong",
]


def _pairs(text: str) -> list[tuple[str, str]]:
    """``漢字:よみ`` pairs, written a few to a line."""
    return [(kanji, kana) for kanji, kana in (pair.split(":") for pair in text.split())]


# The given names most given in recent years (about 200, boys' and girls'), kanji and reading;
# many are words (空 sky, 湊 harbour, 紬 pongee, 楓 maple, 光 light, 凪 calm).
GIVEN = _pairs(
    """
    碧:あお 蓮:れん 陽翔:はると 湊:みなと 蒼:あお 樹:いつき 大和:やまと 陽向:ひなた
    暖:だん 律:りつ 朝陽:あさひ 新:あらた 悠真:ゆうま 颯真:そうま 伊織:いおり 蒼空:そら
    結翔:ゆいと 陽太:ようた 大翔:ひろと 悠人:ゆうと 陽:はる 颯:はやて 凪:なぎ 岳:がく
    晴:はる 陸:りく 旭:あさひ 悠斗:ゆうと 海斗:かいと 颯太:そうた 奏:かなで 光:ひかる
    空:そら 海:かい 翼:つばさ 航:わたる 港:みなと 楓:かえで 心:しん 蒼真:そうま
    湊斗:みなと 奏太:そうた 晴翔:はると 陽斗:はると 蒼大:そうた 悠:はるか 大雅:たいが 琉生:るい
    大智:だいち 大地:だいち 翔:しょう 歩:あゆむ 匠:たくみ 誠:まこと 進:すすむ 勇気:ゆうき
    元気:げんき 拓海:たくみ 海翔:かいと 湊人:みなと 柊:しゅう 司:つかさ 健:けん 仁:じん
    蒼介:そうすけ 健太:けんた 翔太:しょうた 蒼汰:そうた 陽介:ようすけ 暁:あかつき 瑛太:えいた 瑛斗:えいと
    碧斗:あおと 朔:さく 和:なごみ 巧:たくみ 剛:つよし 渉:わたる 隼:はやと 創:はじめ
    葵:あおい 絆:きずな 一輝:かずき 湧:ゆう 峻:しゅん 楽:がく 要:かなめ 丈:じょう
    桜介:おうすけ 輝:ひかる 彗:すい 宙:そら 雷:らい 環:たまき 蒼士:そうし 廉:れん
    怜:れい 玲:れい 礼:れい 宗:そう 陽葵:ひまり 凛:りん 詩:うた 陽菜:ひな
    結菜:ゆいな 芽依:めい 紬:つむぎ 澪:みお 結愛:ゆあ 莉子:りこ 杏:あん 翠:すい
    咲良:さくら 心春:こはる 花:はな 結月:ゆづき 美桜:みお 栞:しおり 柚葉:ゆずは 咲:さき
    芽生:めい 朱莉:あかり 心葉:このは 一華:いちか 琴葉:ことは 陽菜乃:ひなの 茜:あかね 杏奈:あんな
    光:ひかり 雫:しずく 桜:さくら 椿:つばき 菫:すみれ 蛍:ほたる 鈴:すず 雛:ひな
    舞:まい 愛:あい 萌:もえ 望:のぞみ 幸:さち 恵:めぐみ 彩:あや 優:ゆう
    和:のどか 遥:はるか 渚:なぎさ 灯:あかり 円:まどか 縁:ゆかり 都:みやこ 泉:いずみ
    唯:ゆい 希:のぞみ 葵:あおい 心:こころ 彩葉:いろは 日向:ひなた 明里:あかり 百花:ももか
    桃:もも 梢:こずえ 翼:つばさ 空:そら 海:うみ 未来:みらい 希望:のぞみ 楓:かえで
    碧:みどり 藍:あい 瑠璃:るり 琴:こと 鞠:まり 巴:ともえ 文:あや 静:しずか
    薫:かおる 忍:しのぶ 泉美:いずみ 小春:こはる 結衣:ゆい 美月:みづき 陽咲:ひなた 心陽:こはる
    芽衣:めい 千尋:ちひろ 真央:まお 実:みのり 穂:みのり 蘭:らん 梨花:りんか 華:はな
    珠:たま 綾:あや 光莉:ひかり 風花:ふうか 七海:ななみ 乃愛:のあ 花音:かのん 詩織:しおり
"""
)
# Surnames that are words too (林 forest, 森 woods, 原 field) and common ones beside them.
SURNAMES = _pairs(
    """
    林:はやし 森:もり 原:はら 松:まつ 岡:おか 坂:さか 橋:はし 星:ほし
    泉:いずみ 関:せき 堀:ほり 東:あずま 辻:つじ 宮:みや 谷:たに 小林:こばやし
    岡田:おかだ 森田:もりた 原田:はらだ 松田:まつだ 中山:なかやま 石田:いしだ 高橋:たかはし 田中:たなか
    佐藤:さとう
"""
)
# What a form writes under a person's label where no one is named; none of it is a name.
PLACEHOLDERS = [
    *("未定", "同上", "不明", "なし", "無し", "担当者", "未入力", "空欄", "調整中", "後日決定"),
    *("該当なし", "本人", "欠員", "募集中", "別紙参照", "経理部", "総務課", "上長", "全員", "各自"),
    *("確認中", "特になし", "保留", "不在", "代理", "事務局", "省略", "未記入", "退職済", "選考中"),
    *("無", "〃", "まだ", "みんな", "他", "不要"),
]
PERSON_LABELS = ["氏名", "担当", "担当者", "申請者", "宛名", "ご担当者様", "承認者", "作成者"]
SEPARATORS = ["：", "：", ": ", ":"]
HONORIFICS = ["", "", "", " 様", "様", "さん"]
SUBJECTS = ["交通費精算", "備品購入", "出張申請", "請求書送付", "契約更新"]
_KATAKANA = {code: code + 0x60 for code in range(ord("ぁ"), ord("ゖ") + 1)}


@dataclass
class NamedDoc(Doc):
    """A :class:`Doc` that also writes what a model should get: each secret as a placeholder
    (a one-letter given name such as 空 may stand inside a kept word such as 空欄, so a leak
    is a secret sent more often than the text without secrets holds it)."""

    masked: str = ""

    def add(self, text: str) -> NamedDoc:
        self.masked += text
        super().add(text)
        return self

    def secret(self, value: str, *parts: str) -> NamedDoc:
        self.masked += "〔〕"
        super().secret(value, *parts)
        return self

    def keep(self, value: str) -> NamedDoc:
        self.masked += value
        super().keep(value)
        return self


def wrong(doc: NamedDoc, sent: str) -> tuple[list[str], list[str]]:
    """(secrets sent, kept values masked) of ``doc`` as ``sent`` holds it."""
    leaked = [s for s in dict.fromkeys(doc.secrets) if sent.count(s) > doc.masked.count(s)]
    lost = [v for v in dict.fromkeys(doc.kept) if sent.count(v) < doc.text.count(v)]
    return leaked, lost


def mistakes(
    docs: Iterable[NamedDoc], unknowable: Callable[[NamedDoc, str], bool] | None = None
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """({text: secrets sent}, {text: kept values masked}) of ``docs`` through the model's door
    (``mask_input``), leaving out the secrets ``unknowable`` says no form tells."""
    leaked: dict[str, list[str]] = {}
    lost: dict[str, list[str]] = {}
    for doc in docs:
        masked, _ = mask_input([HumanMessage(content=doc.text)], Vault())
        sent, gone = wrong(doc, str(masked[0].content))
        if found := [v for v in sent if unknowable is None or not unknowable(doc, v)]:
            leaked[doc.text] = found
        if gone:
            lost[doc.text] = gone
    return leaked, lost


def masked_json(text: str) -> str:
    """``text`` as a JSON value's text reaches a model."""
    return mask_json_text(Vault(), text, Counter())


class WordNames(Maker):
    """Names written as people write them, and the words that name no one."""

    def given(self) -> str:
        kanji, kana = self.r.choice(GIVEN)
        form = self.r.randrange(3)
        return kanji if form == 0 else kana if form == 1 else kana.translate(_KATAKANA)

    def name(self) -> tuple[str, list[str]]:
        """A name as written and what of it must not leak: a given name alone, or a surname
        and a given name (spaced, glued), or a surname alone."""
        given = self.given()
        form = self.r.randrange(4)
        if form == 0:
            return given, [given]
        sur, sur_kana = self.r.choice(SURNAMES)
        if form == 3:
            return sur, [sur]
        if given.isascii() or not ("一" <= given[0] <= "龥"):
            sur = self.r.choice([sur, sur, sur_kana])  # a name in kana, kana through
        sep = self.r.choice([" ", "　", ""])
        return f"{sur}{sep}{given}", [sur, given]

    def placeholder(self) -> str:
        return self.r.choice(PLACEHOLDERS)

    def amount(self) -> str:
        return f"{self.r.randint(1_000, 999_999):,}円"

    def date(self) -> str:
        return f"2025/{self.r.randint(1, 12):02d}/{self.r.randint(1, 28):02d}"


def _value(w: WordNames, doc: NamedDoc, *, honorific: bool = True) -> None:
    """A person's name or, one time in three, a word that names no one."""
    if w.r.random() < 1 / 3:
        doc.keep(w.placeholder())
        return
    name, parts = w.name()
    doc.secret(name, *parts)
    if honorific:
        doc.add(w.r.choice(HONORIFICS))


def _form(w: WordNames, doc: NamedDoc) -> None:
    """A form written label by label (申請書, 稟議書)."""
    doc.add(f"{w.r.choice(SUBJECTS)}申請書\n申請日{w.r.choice(SEPARATORS)}").keep(w.date())
    for label in w.r.sample(PERSON_LABELS, 4):
        doc.add(f"\n{label}{w.r.choice(SEPARATORS)}")
        _value(w, doc)
    doc.add("\n金額：").keep(w.amount()).add("\n")


def _mail(w: WordNames, doc: NamedDoc) -> None:
    """A mail naming its people in header lines and in its body (「担当：ひかり」)."""
    doc.add(f"{w.r.choice(['宛名', 'ご担当者様'])}{w.r.choice(SEPARATORS)}")
    _value(w, doc)
    doc.add(f"\nいつもお世話になっております。\n{w.r.choice(SUBJECTS)}の件でご連絡します。")
    doc.add(f"\n担当{w.r.choice(SEPARATORS)}")
    _value(w, doc, honorific=False)
    doc.add("（承認者：")
    _value(w, doc, honorific=False)
    doc.add("）\nお支払い金額は ").keep(w.amount()).add("、期日は ").keep(w.date()).add(" です。\n")


def _table(w: WordNames, doc: NamedDoc) -> None:
    """A register: a person's column beside amounts and dates, CSV, TSV or Markdown."""
    header = w.r.choice([*PERSON_LABELS[:5], "承認者"])
    headers = ["No", header, "件名", "金額", "日付"]
    doc.rows.append(headers)
    sep = w.r.choice([",", "\t", " | "])
    markdown = sep == " | "
    doc.add(("| " if markdown else "") + sep.join(headers) + (" |" if markdown else "") + "\n")
    if markdown:
        doc.add("|" + "---|" * len(headers) + "\n")
    for index in range(4):
        doc.add(("| " if markdown else "") + f"{index + 1}{sep}")
        cell = NamedDoc("cell")
        _value(w, cell, honorific=False)
        doc.secrets += cell.secrets
        doc.kept += cell.kept
        doc.text += cell.text
        doc.masked += cell.masked
        subject, amount, date = w.r.choice(SUBJECTS), w.amount().replace(",", ""), w.date()
        doc.add(f"{sep}{subject}{sep}").keep(amount).add(sep).keep(date)
        doc.add((" |" if markdown else "") + "\n")
        doc.rows.append([str(index + 1), cell.text, subject, amount, date])


def _down_the_page(w: WordNames, doc: NamedDoc) -> None:
    """A label on its own line, one value a line below it (as a sheet pasted as text)."""
    doc.add(f"{w.r.choice(SUBJECTS)}\n{w.r.choice(['担当者', '申請者', '氏名', '宛名'])}\n")
    for _ in range(3):
        _value(w, doc, honorific=False)
        doc.add("\n")
    doc.add("\n合計 ").keep(w.amount()).add("\n")


SHAPES: dict[str, Callable[[WordNames, NamedDoc], None]] = {
    "form": _form,
    "mail": _mail,
    "table": _table,
    "down_the_page": _down_the_page,
}


def make_named_docs(
    seed: int,
    per_shape: int,
    shapes: Mapping[str, Callable[[Any, NamedDoc], None]],
    maker: Callable[[int], Maker],
) -> list[NamedDoc]:
    """``per_shape`` documents of each of ``shapes``, deterministic for ``seed``."""
    docs = make_docs(seed, per_shape, None, shapes, maker, NamedDoc)
    return [doc for doc in docs if isinstance(doc, NamedDoc)]


def make_word_name_docs(seed: int, per_shape: int) -> list[NamedDoc]:
    """``per_shape`` documents of each shape, deterministic for ``seed``."""
    return make_named_docs(seed, per_shape, SHAPES, WordNames)
