"""A ninth generator: the free text of a back office — mails, chat logs, 議事録 and the free-text
fields of a 申請書 (session 19).

The earlier generators write people under labels and in table cells; here they stand where
people write them in prose and in lists:

- a given name alone, with no honorific, as the one who acts (本件は遥が対応します, ジョージが確認します);
- a given name in katakana before an honorific in a sentence (タイガさんから連絡がありました);
- the attendees of a meeting listed after their label (出席者：佐藤、タイガ、遥);
- a speaker's name before a chat line (``[10:02] 佐藤：了解です``);
- a マイナンバー written after a business number on the same line, in the separators people use
  between two numbers (a full-width space, two spaces, 、, ／, a label) and in its own groups
  (1234 5678 9018, 1234-5678-9018, 123456789018), after a number of digits alone or a code
  with letters (A1234, R-2025-0012).

Beside them, what must reach a model as written: the katakana words a form writes under a
person's label for a team or a desk (担当：システム, 担当：サポート, 担当：フロント, 担当：スタッフ),
the placeholders (未定, （空）, 空欄), departments, expenses, amounts, dates, and business numbers
of 16 digits in four groups (会員番号：1234 5678 9012 3456).

:func:`make_office_text_docs` gives :class:`~tests.privacy.word_names.NamedDoc` objects,
deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from keiri_agent.privacy.patterns import my_number_valid
from tests.privacy.form_people import (
    DEPARTMENTS,
    EXPENSES,
    KATAKANA_GIVEN,
    SURNAMES,
    WORD_GIVEN,
    FormPeople,
)
from tests.privacy.word_names import NamedDoc, make_named_docs

__all__ = ["SHAPES", "OfficeTexts", "make_office_text_docs"]

# Given names that the dictionary knows as given names only (no common word shares them).
GIVEN_ONLY = ["遥", "翔太", "陽菜", "美咲", "大輝", "彩花", "健太", "結衣", "拓海", "真央"]
# Katakana words a form writes under a person's label for a team, a desk or a role.
TEAM_WORDS = [
    *("システム", "サポート", "フロント", "スタッフ", "チーム", "センター", "リーダー"),
    *("ゲスト", "パート", "バイト", "ベンダ", "デスク", "カウンター", "メンバー"),
]
PLACEHOLDERS = ["未定", "（空）", "空欄", "同上", "調整中", "なし"]
BUSINESS_LABELS = ["受付番号", "申請番号", "お問い合わせ番号", "管理番号", "整理番号"]
# Between a business number and the マイナンバー after it: what people put between two numbers.
BETWEEN = ["　", "  ", "、", " / ", "／", " マイナンバー：", " 個人番号 ", "\n"]
ACTS = ["対応します", "確認します", "担当します", "ご連絡します", "手配しました", "確認済みです"]
CHAT_LINES = ["了解です。", "承知しました。", "確認します！", "ありがとうございます。"]


class OfficeTexts(FormPeople):
    """People, numbers and business words as free text writes them."""

    def given_alone(self) -> str:
        return self.r.choice([*GIVEN_ONLY, *KATAKANA_GIVEN])

    def full_name(self) -> tuple[str, list[str]]:
        sur, given = self.r.choice(SURNAMES), self.r.choice([*GIVEN_ONLY, *WORD_GIVEN])
        return f"{sur}{self.r.choice([' ', '　', ''])}{given}", [sur, given]

    def my_number(self) -> str:
        while True:
            digits = [self.r.randrange(10) for _ in range(12)]
            if my_number_valid(digits):
                break
        text = "".join(map(str, digits))
        groups = [text[i : i + 4] for i in range(0, 12, 4)]
        return self.r.choice([" ".join(groups), "-".join(groups), text])

    def business(self) -> str:
        """A business number: digits alone, in groups, or a code with letters."""
        form = self.r.randrange(4)
        if form == 0:
            return self.digits(self.r.choice([4, 6, 8, 10]))
        if form == 1:
            return f"{self.digits(4)}-{self.digits(4)}"
        if form == 2:
            return f"{self.r.choice('ABRT')}{self.digits(self.r.choice([4, 6]))}"
        return f"R-2025-{self.digits(4)}"

    def sixteen(self) -> str:
        return " ".join(self.digits(4) for _ in range(4))


def _number_line(w: OfficeTexts, doc: NamedDoc) -> None:
    """A business number and a マイナンバー after it on its line, or a 16-digit member number."""
    if w.r.random() < 0.25:
        doc.add("会員番号：").keep(w.sixteen()).add("\n")
        return
    doc.add(f"{w.r.choice(BUSINESS_LABELS)}：").keep(w.business())
    doc.add(w.r.choice(BETWEEN)).secret(w.my_number()).add("\n")


def _team(w: OfficeTexts, doc: NamedDoc, label: str) -> None:
    """Under a person's label: a team word, a placeholder, or a person."""
    doc.add(f"{label}：")
    roll = w.r.random()
    if roll < 0.5:
        doc.keep(w.r.choice(TEAM_WORDS))
    elif roll < 0.7:
        doc.keep(w.r.choice(PLACEHOLDERS))
    else:
        name, parts = w.full_name()
        doc.secret(name, *parts)
    doc.add("\n")


def _mail(w: OfficeTexts, doc: NamedDoc) -> None:
    """メール: the addressee, the writer, who acts, a katakana name with さん, the numbers."""
    doc.secret(w.r.choice(SURNAMES)).add("様\n\nいつもお世話になっております。\n")
    doc.keep(w.r.choice(DEPARTMENTS)).add("の").secret(w.r.choice(SURNAMES)).add("です。\n")
    doc.keep(w.r.choice(EXPENSES)).add("の件、本件は").secret(w.given_alone())
    doc.add(f"が{w.r.choice(ACTS)}。\n")
    doc.secret(w.r.choice(KATAKANA_GIVEN)).add(w.r.choice(["さん", "さん", "様"]))
    doc.add("から、").keep(w.amount()).add("の領収書を受け取りました。\n")
    _number_line(w, doc)
    _team(w, doc, "担当")
    name, parts = w.full_name()
    doc.add("--\n").secret(name, *parts).add("\n")


def _chat(w: OfficeTexts, doc: NamedDoc) -> None:
    """チャットのログ: the speaker before each line, names and numbers in the lines."""
    speakers = [w.full_name() for _ in range(2)]
    for minute in range(4):
        name, parts = speakers[minute % 2]
        doc.add(f"[10:{minute * 7:02d}] ").secret(name, *parts).add("：")
        if minute == 0:
            doc.secret(w.r.choice(KATAKANA_GIVEN)).add("さん、").keep(w.r.choice(EXPENSES))
            doc.add("の件ありがとうございます。")
        elif minute == 1:
            doc.add(w.r.choice(CHAT_LINES)).secret(w.given_alone()).add("が確認します。")
        elif minute == 2:
            doc.add("番号を送ります。")
            _number_line(w, doc)
            continue
        else:
            doc.add("担当は").keep(w.r.choice(TEAM_WORDS)).add("でお願いします。")
        doc.add("\n")


def _minutes(w: OfficeTexts, doc: NamedDoc) -> None:
    """議事録: the attendees listed after their label, decisions, who acts."""
    doc.add("議事録\n日時：").keep(w.date()).add("\n出席者：")
    doc.secret(w.r.choice(SURNAMES)).add("、").secret(w.r.choice(KATAKANA_GIVEN))
    doc.add("、").secret(w.r.choice(GIVEN_ONLY)).add("（").keep(w.r.choice(DEPARTMENTS))
    doc.add("）\n議題：").keep(w.r.choice(EXPENSES)).add("の精算\n決定事項：")
    doc.keep(w.r.choice(EXPENSES)).add("は").secret(w.given_alone())
    doc.add(f"が{w.r.choice(ACTS)}。\n")
    _team(w, doc, w.r.choice(["担当", "担当者", "次回担当"]))


def _application(w: OfficeTexts, doc: NamedDoc) -> None:
    """申請書の自由記述: the reason, the note with the numbers, who was asked."""
    doc.add("申請書\n申請者：")
    name, parts = w.full_name()
    doc.secret(name, *parts).add("\n申請理由：").keep(w.r.choice(EXPENSES)).add("の立替。")
    doc.secret(w.r.choice(KATAKANA_GIVEN)).add("さんに確認済み。\n備考：")
    _number_line(w, doc)
    _team(w, doc, w.r.choice(["担当", "承認者", "作成者"]))


SHAPES: dict[str, Callable[[OfficeTexts, NamedDoc], None]] = {
    shape.__name__.lstrip("_"): shape for shape in (_mail, _chat, _minutes, _application)
}


def make_office_text_docs(seed: int, per_shape: int) -> list[NamedDoc]:
    """``per_shape`` documents of each shape, deterministic for ``seed``."""
    return make_named_docs(seed, per_shape, SHAPES, OfficeTexts)
