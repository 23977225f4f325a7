"""A tenth generator: the people of a back office's free text where no label names them
(session 20).

Last round's free text (``tests.privacy.office_texts``) left four shapes whose people reached a
model; here each is written in the forms people use:

- the attendees of a meeting parted by ・ (出席者：佐藤・システム・田中), a team or a placeholder
  among them, which stays;
- a chat speaker before the line's colon, alone or after a time (``佐藤：了解です``,
  ``[10:02] タイガ: 確認します``, ``10:05 ヒナ：承知しました``);
- a mail's signature block: a department or a company, then the full name whose given name is a
  common word (佐藤朝陽, 伊藤 空), then a phone or mail line;
- a katakana given name that the dictionary lists as a common word with synonyms (ヒナ, ショウ,
  ハル, メイ) before an honorific or as a chat speaker.

Beside them, what must reach a model as written: the team words and placeholders in a list, the
department and company of a signature, expenses, amounts and a chat line's business words.

:func:`make_office_people_docs` gives :class:`~tests.privacy.word_names.NamedDoc` objects,
deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.privacy.form_people import DEPARTMENTS, EXPENSES, SURNAMES, WORD_GIVEN
from tests.privacy.office_texts import GIVEN_ONLY, PLACEHOLDERS, TEAM_WORDS, OfficeTexts
from tests.privacy.word_names import NamedDoc, make_named_docs

__all__ = ["SHAPES", "WORD_KATAKANA", "make_office_people_docs"]

# Katakana given names that the dictionary lists as common words in a synonym group.
WORD_KATAKANA = ["ヒナ", "ショウ", "ハル", "メイ", "ケイ", "ジュン", "レン", "リク", "ユウ", "ルイ"]
COMPANIES = ["株式会社青葉商事", "山田工業株式会社", "有限会社みどり", "東西物産株式会社"]
CHAT_LINES = [
    *("了解です。", "承知しました。", "確認します！", "ありがとうございます。"),
    *("交通費の件、対応済みです。", "請求書を送りました。", "立替金は明日精算します。"),
]


def _speaker(w: OfficeTexts) -> tuple[str, list[str]]:
    """Who speaks in a chat: a surname, a given name (a common word too), or a full name."""
    form = w.r.randrange(4)
    if form == 0:
        sur = w.r.choice(SURNAMES)
        return sur, [sur]
    if form == 1:
        given = w.r.choice([*WORD_KATAKANA, *GIVEN_ONLY])
        return given, [given]
    sur, given = w.r.choice(SURNAMES), w.r.choice([*WORD_GIVEN, *WORD_KATAKANA, *GIVEN_ONLY])
    name = f"{sur}{w.r.choice([' ', '　', ''])}{given}"
    return name, [sur, given]


def _attendees(w: OfficeTexts, doc: NamedDoc) -> None:
    """議事録: the attendees parted by ・, a team word or a placeholder among the people."""
    doc.add("議事録\n日時：").keep(w.date()).add(f"\n{w.r.choice(['出席者', '参加者'])}：")
    mark = w.r.choice(["・", "・", "、"])
    for at in range(w.r.randint(2, 4)):
        if at:
            doc.add(mark)
        roll = w.r.random()
        if roll < 0.45:
            doc.secret(w.r.choice(SURNAMES))
        elif roll < 0.6:
            doc.secret(w.r.choice([*WORD_KATAKANA, *GIVEN_ONLY]))
        elif roll < 0.85:
            doc.keep(w.r.choice(TEAM_WORDS))
        else:
            doc.keep(w.r.choice(PLACEHOLDERS))
    doc.add("\n議題：").keep(w.r.choice(EXPENSES)).add("の精算\n")


def _chat(w: OfficeTexts, doc: NamedDoc) -> None:
    """チャットのログ: each line's speaker before its colon, with or without a time."""
    speakers = [_speaker(w) for _ in range(2)]
    form = w.r.randrange(3)
    for minute in range(4):
        name, parts = speakers[minute % 2]
        if form == 1:
            doc.add(f"[10:{minute * 7:02d}] ")
        elif form == 2:
            doc.add(f"10:{minute * 7:02d} ")
        doc.secret(name, *parts).add(w.r.choice(["：", ": ", "："]))
        if minute == 2:
            doc.keep(w.r.choice(EXPENSES)).add("は").keep(w.amount()).add("です。\n")
        else:
            doc.add(w.r.choice(CHAT_LINES) + "\n")


def _signature(w: OfficeTexts, doc: NamedDoc) -> None:
    """メール: a word name with さん in the body, then the signature block: a department or a
    company, the full name (its given name a common word), a phone or mail line."""
    doc.secret(w.r.choice(SURNAMES)).add("様\n\nお世話になっております。\n")
    doc.keep(w.r.choice(EXPENSES)).add("の件、").secret(w.r.choice(WORD_KATAKANA))
    doc.add(w.r.choice(["さん", "様", "さん"])).add(
        "に確認いたしました。\nよろしくお願いいたします。\n"
    )
    doc.add(w.r.choice(["--\n", "――――――\n", "\n", "*****\n"]))
    org = w.r.choice([*DEPARTMENTS, *COMPANIES])
    sur, given = w.r.choice(SURNAMES), w.r.choice(WORD_GIVEN)
    name = f"{sur}{w.r.choice([' ', '　', ''])}{given}"
    if w.r.random() < 0.5:
        doc.keep(org).add("\n").secret(name, sur, given).add("\n")
    else:
        doc.keep(org).add(w.r.choice([" ", "　"])).secret(name, sur, given).add("\n")
    if w.r.random() < 0.5:
        phone = f"0{w.r.choice(['3', '6', '90', '80'])}-{w.digits(4)}-{w.digits(4)}"
        doc.add(w.r.choice(["TEL：", "TEL ", "電話："])).secret(phone).add("\n")
    else:
        mail = f"{w.r.choice(['sato', 'keiri', 'm.ito', 'tanaka'])}{w.digits(2)}@example.co.jp"
        doc.add(w.r.choice(["Mail：", "E-mail: "])).secret(mail).add("\n")


SHAPES: dict[str, Callable[[OfficeTexts, NamedDoc], None]] = {
    shape.__name__.lstrip("_"): shape for shape in (_attendees, _chat, _signature)
}


def make_office_people_docs(seed: int, per_shape: int) -> list[NamedDoc]:
    """``per_shape`` documents of each shape, deterministic for ``seed``."""
    return make_named_docs(seed, per_shape, SHAPES, OfficeTexts)
