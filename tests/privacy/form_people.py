"""An eighth generator: the people of everyday back-office documents, as forms write them
(session 18).

経費精算書, 振込依頼書, 従業員名簿 rows, メール本文 and 申請フォーム name their people under a
person's label (氏名・申請者・担当・宛名・承認者・連絡先 and their column headers) and in free text.
What they write there that the dictionary reads as something else:

- given names that are words of one or two kanji (希望 のぞみ, 元気 げんき, 朝陽 あさひ, 大地, 光, 誠),
  alone or after a surname;
- given names in katakana as loanwords are written (タイガ, レオ, エマ, ジョージ, ノア);
- a one-kanji surname before a given name in katakana (松 ヨウスケ, 林 ケンタ);
- a surname with the person's department in brackets (佐藤（経理部）): the name is secret, the
  department a business word;
- a card number or a マイナンバー written after a business number, its groups spaced as the
  business number's (受付番号：1234 5678 4111 1111 1111 1111).

Beside them, under the same labels and in the same texts, what must reach a model as written:
the placeholders a form writes in a name's field (同, 無, 済, 未, －, 未定, 同上, （空）), the
departments and business words (経理部, 交通費, 立替金), amounts and dates.

:func:`make_form_people_docs` gives :class:`~tests.privacy.word_names.NamedDoc` objects,
deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from keiri_agent.privacy.patterns import luhn_valid, my_number_valid
from tests.privacy.backoffice import Maker
from tests.privacy.word_names import NamedDoc, make_named_docs

__all__ = ["SHAPES", "FormPeople", "make_form_people_docs"]

# Given names that the dictionary knows as common words (kanji), and their readings.
WORD_GIVEN = [
    *("希望", "元気", "朝陽", "大地", "光", "誠", "勇気", "未来", "大和", "翼", "歩", "進"),
    *("望", "愛", "実", "忍", "静", "薫", "匠", "司", "仁", "幸", "陸", "海", "新", "悠"),
    *("和", "栞", "凛", "茜", "楓", "蛍", "鈴", "雫", "桜", "舞", "萌", "彩", "優", "遥"),
    *("渚", "灯", "泉", "唯", "希", "心", "空", "翔", "健", "剛", "創", "葵", "要", "環"),
]
# Given names in katakana, as loanwords are written (the dictionary knows some as words only).
KATAKANA_GIVEN = [
    *("タイガ", "レオ", "エマ", "ジョージ", "ノア", "ルカ", "リオ", "ミア", "ケン", "ジュン"),
    *("ハル", "レン", "リナ", "エリカ", "マリア", "ジョン", "ケイ", "ユウ", "ショウ", "ルイ"),
    *("ヨウスケ", "ケンタ", "ダイキ", "ハルト", "ソウタ", "ユイ", "アオイ", "ヒナ", "メイ", "リク"),
]
SURNAMES = [
    *("佐藤", "鈴木", "高橋", "田中", "伊藤", "渡辺", "山本", "中村", "小林", "加藤"),
    *("吉田", "山田", "佐々木", "山口", "松本", "井上", "木村", "清水", "斎藤", "森田"),
]
ONE_KANJI_SURNAMES = ["松", "林", "森", "原", "関", "堀", "辻", "泉", "東", "岡", "星", "谷"]
DEPARTMENTS = [
    *("経理部", "総務部", "人事部", "営業部", "総務課", "経理課", "営業一課", "情報システム部"),
    *("法務部", "購買部", "管理部", "財務課", "秘書室", "企画室", "営業所", "本社"),
]
# What a form writes in a name's field where no one is named.
PLACEHOLDERS = [
    *("同", "無", "済", "未", "－", "ー", "〃", "未定", "同上", "不明", "（空）", "なし"),
    *("空欄", "本人", "代理", "不要", "欠員", "未記入", "該当なし", "調整中"),
]
PERSON_LABELS = ["氏名", "申請者", "担当", "担当者", "宛名", "承認者", "作成者"]
BUSINESS_LABELS = ["受付番号", "会員番号", "申請番号", "お問い合わせ番号", "管理番号"]
EXPENSES = ["交通費", "宿泊費", "会議費", "交際費", "消耗品費", "通信費", "立替金", "出張旅費"]
SEPARATORS = ["：", "：", ": ", ":"]
HONORIFICS = ["", "", "", " 様", "様", "さん"]


class FormPeople(Maker):
    """People, placeholders and numbers as a back office's forms write them."""

    def person(self) -> tuple[str, list[str]]:
        """A name as written and its secret parts."""
        form = self.r.randrange(6)
        if form == 0:
            given = self.r.choice(WORD_GIVEN)
            return given, [given]
        if form == 1:
            given = self.r.choice(KATAKANA_GIVEN)
            return given, [given]
        if form == 2:
            sur, given = self.r.choice(SURNAMES), self.r.choice(WORD_GIVEN)
        elif form == 3:
            sur, given = self.r.choice(SURNAMES), self.r.choice(KATAKANA_GIVEN)
        else:
            sur, given = self.r.choice(ONE_KANJI_SURNAMES), self.r.choice(KATAKANA_GIVEN)
        sep = self.r.choice([" ", "　"]) if form >= 3 else self.r.choice([" ", "　", ""])
        return f"{sur}{sep}{given}", [sur, given]

    def amount(self) -> str:
        return f"{self.r.randint(1_000, 999_999):,}円"

    def date(self) -> str:
        return f"2025/{self.r.randint(1, 12):02d}/{self.r.randint(1, 28):02d}"

    def card(self) -> str:
        """A card number (Visa, 16 digits) that passes Luhn, or a valid マイナンバー."""
        if self.r.random() < 0.5:
            while True:
                digits = [4] + [self.r.randrange(10) for _ in range(15)]
                if luhn_valid(digits):
                    break
        else:
            while True:
                digits = [self.r.randrange(10) for _ in range(12)]
                if my_number_valid(digits):
                    break
        text = "".join(map(str, digits))
        return " ".join(text[i : i + 4] for i in range(0, len(text), 4))

    def business_number(self) -> str:
        return " ".join(f"{self.r.randrange(10_000):04d}" for _ in range(self.r.choice([1, 2])))


def _value(w: FormPeople, doc: NamedDoc, *, honorific: bool = True) -> None:
    """A person, or one time in three a placeholder, under a person's label."""
    if w.r.random() < 1 / 3:
        doc.keep(w.r.choice(PLACEHOLDERS))
        return
    if w.r.random() < 1 / 5:
        sur = w.r.choice(SURNAMES)
        doc.secret(sur).add("（").keep(w.r.choice(DEPARTMENTS)).add("）")
        return
    name, parts = w.person()
    doc.secret(name, *parts)
    if honorific:
        doc.add(w.r.choice(HONORIFICS))


def _label(w: FormPeople, doc: NamedDoc, label: str) -> None:
    doc.add(f"\n{label}{w.r.choice(SEPARATORS)}")


def _expense(w: FormPeople, doc: NamedDoc) -> None:
    """経費精算書: labels, a line per expense, the card after the receipt number."""
    doc.add("経費精算書\n提出日：").keep(w.date())
    for label in ("申請者", "所属", "承認者"):
        _label(w, doc, label)
        if label == "所属":
            doc.keep(w.r.choice(DEPARTMENTS))
        else:
            _value(w, doc)
    for _ in range(2):
        doc.add("\n").keep(w.r.choice(EXPENSES)).add("　").keep(w.amount())
    doc.add(f"\n{w.r.choice(BUSINESS_LABELS)}：{w.business_number()} ").secret(w.card())
    doc.add("\n")


def _transfer(w: FormPeople, doc: NamedDoc) -> None:
    """振込依頼書: the payee under 宛名 / 受取人, the requester, the date and the amount."""
    doc.add("振込依頼書\n依頼日：").keep(w.date())
    _label(w, doc, "宛名")
    _value(w, doc)
    _label(w, doc, "担当")
    _value(w, doc, honorific=False)
    doc.add("\n振込金額：").keep(w.amount()).add("\n摘要：").keep(w.r.choice(EXPENSES))
    doc.add(f"\n{w.r.choice(BUSINESS_LABELS)} {w.business_number()} ").secret(w.card())
    doc.add("\n")


def _roster(w: FormPeople, doc: NamedDoc) -> None:
    """従業員名簿: CSV rows under 氏名 and 所属."""
    doc.add("No,氏名,所属,入社日\n")
    for index in range(3):
        doc.add(f"{index + 1},")
        _value(w, doc, honorific=False)
        doc.add(",").keep(w.r.choice(DEPARTMENTS)).add(",").keep(w.date()).add("\n")


def _mail(w: FormPeople, doc: NamedDoc) -> None:
    """メール本文: the addressee, a person and department in the body, the signature."""
    doc.secret(w.r.choice(SURNAMES)).add("様\n\nお疲れさまです。").keep(w.r.choice(EXPENSES))
    doc.add("の精算について、")
    doc.secret(w.r.choice(SURNAMES)).add("（").keep(w.r.choice(DEPARTMENTS)).add("）より")
    doc.add("ご連絡いたします。\n本件は")
    name, parts = w.person()
    doc.secret(name, *parts).add(
        w.r.choice(["さんが", "様が", "が"]) + "確認済みです。\n金額は "
    ).keep(w.amount()).add(" です。\n担当：")
    _value(w, doc, honorific=False)
    doc.add("\n連絡先：")
    if w.r.random() < 0.5:
        name, parts = w.person()
        doc.secret(name, *parts)
    else:
        doc.keep(w.r.choice(DEPARTMENTS))
    doc.add("\n")


def _application(w: FormPeople, doc: NamedDoc) -> None:
    """申請フォーム: the applicant's name, the approver, the kind of request."""
    doc.add("申請フォーム\n申請種別：").keep(w.r.choice(EXPENSES))
    for label in w.r.sample(PERSON_LABELS, 3):
        _label(w, doc, label)
        _value(w, doc)
    doc.add("\n備考：").keep(w.r.choice(EXPENSES)).add("の立替分").add("\n")


SHAPES: dict[str, Callable[[FormPeople, NamedDoc], None]] = {
    "expense": _expense,
    "transfer": _transfer,
    "roster": _roster,
    "mail": _mail,
    "application": _application,
}


def make_form_people_docs(seed: int, per_shape: int) -> list[NamedDoc]:
    """``per_shape`` documents of each shape, deterministic for ``seed``."""
    return make_named_docs(seed, per_shape, SHAPES, FormPeople)
