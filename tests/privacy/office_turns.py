"""An eleventh generator: the people of a back office's free text that only a sentence's or a
mail's form tells (session 21).

Left by the earlier generators (``tests.privacy.office_texts``, ``office_people``):

- a given name in katakana that the dictionary lists as a common word (ヒナ 雛, ショウ show),
  alone in prose with no honorific, where the sentence makes it one who acts or is asked
  (ヒナが対応します, 明日ショウに確認します, ヒナから連絡がありました, ショウへお願いします);
- a given name in kanji that is a common word (朝陽, 希望, 大地) alone as a chat's speaker,
  taking turns with another (朝陽：了解です / 佐藤：… / 朝陽：…);
- a mail's signer on its last line with no rule above and no contact line below, under the
  closing line or under the department alone (よろしくお願いいたします。 / 経理部 / 佐藤朝陽).

Left by the first version of this generator (session 22):

- two given names that are common words talking only to each other in a chat, no surname
  anywhere (朝陽：了解です / 大地：承知しました / 朝陽：…), and a chat's one line with its time
  stamp ([10:02] 朝陽：了解です);
- a katakana given name that is a common word before a verb only a person is the one of, or a
  request (ヒナに聞いてください, ショウに伝えておきます, ヒナが来ます).

Beside them, what must reach a model as written: a Q&A's and an agenda's headings (質問：…？ /
回答：…, 10:30 昼食：弁当を配ります。), Japanese words in katakana a back office writes as things
as what a sentence speaks of (ウソが発覚しました, ミスが発生しました, ムダが多いです), and the team words a sentence makes act in the
same form (システムが対応します, フロントに確認します), a Japanese word in katakana that does not
act (カギが見つかりました, ツケが精算されます), a form's labels and an agenda's items before a
colon (件名：, 10:30 昼食：), the closing line and the department.

:func:`make_office_turn_docs` gives :class:`~tests.privacy.word_names.NamedDoc` objects,
deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.privacy.form_people import DEPARTMENTS, EXPENSES, SURNAMES, WORD_GIVEN
from tests.privacy.office_people import COMPANIES, WORD_KATAKANA
from tests.privacy.office_texts import TEAM_WORDS, OfficeTexts
from tests.privacy.word_names import NamedDoc, make_named_docs

__all__ = ["SHAPES", "make_office_turn_docs"]

# Where a sentence makes the word before its particle one who acts or is asked: {} is the word.
ACTING = [
    "本件は{}が対応します。",
    "明日{}に確認します。",
    "{}から連絡がありました。",
    "後ほど{}へお願いします。",
    "了解です。{}が担当します。",
    "{}が手配しました。",
]
# Japanese words in katakana a sentence speaks of as things.
THINGS = ["カギが見つかりました。", "ツケが精算されます。", "ハコが届きました。"]
CLOSINGS = ["よろしくお願いいたします。", "以上、よろしくお願いします。", "以上です。"]
# What heads a line before a colon and names no one: a form's labels, an agenda's items.
HEADED = ["件名：{}の精算\n", "日時：4月1日\n", "場所：本社\n", "10:30 昼食：弁当を配ります。\n"]


def _prose(w: OfficeTexts, doc: NamedDoc) -> None:
    """A note: a katakana given name that is a common word acting, a team word acting in the
    same form, a Japanese word in katakana that is a thing."""
    doc.keep(w.r.choice(EXPENSES)).add("の件です。\n")
    for _ in range(2):
        before, after = w.r.choice(ACTING).split("{}")
        doc.add(before).secret(w.r.choice(WORD_KATAKANA)).add(after + "\n")
    before, after = w.r.choice(ACTING).split("{}")
    doc.add(before).keep(w.r.choice(TEAM_WORDS)).add(after + "\n")
    doc.add(w.r.choice(THINGS) + "\n")


def _chat(w: OfficeTexts, doc: NamedDoc) -> None:
    """A chat's log after a form's head: a given name that is a common word taking turns with
    a surname."""
    for line in w.r.sample(HEADED, 2):
        doc.add(line.format(w.r.choice(EXPENSES)))
    given, sur = w.r.choice(WORD_GIVEN), w.r.choice(SURNAMES)
    speakers = [given, sur] if w.r.random() < 0.5 else [sur, given]
    for turn in range(4):
        doc.secret(speakers[turn % 2]).add(w.r.choice(["：", "："]))
        if turn == 2:
            doc.keep(w.r.choice(EXPENSES)).add("は").keep(w.amount()).add("です。\n")
        else:
            doc.add(w.r.choice(["了解です。", "承知しました。", "確認します！"]) + "\n")


def _closing(w: OfficeTexts, doc: NamedDoc) -> None:
    """A mail ending with its signer: the closing line, a blank line or none, the department or
    company alone or before the name, the full name (its given name a common word)."""
    doc.secret(w.r.choice(SURNAMES)).add("様\n\nお世話になっております。\n")
    doc.keep(w.r.choice(EXPENSES)).add("の領収書をお送りします。\n")
    doc.add(w.r.choice(CLOSINGS) + w.r.choice(["\n", "\n\n"]))
    sur, given = w.r.choice(SURNAMES), w.r.choice(WORD_GIVEN)
    name = f"{sur}{w.r.choice([' ', '　', ''])}{given}"
    form = w.r.randrange(3)
    if form:
        org = w.r.choice([*DEPARTMENTS, *COMPANIES])
        doc.keep(org).add("\n" if form == 1 else w.r.choice([" ", "　"]))
    doc.secret(name, sur, given).add(w.r.choice(["", "\n"]))


# What a chat's lines say: replies, and sentences ending as people write in a chat.
REPLIES = [
    "了解です。",
    "承知しました！",
    "ありがとうございます。",
    "確認しますね。",
    "お疲れさまです！",
]
# A Q&A's and an agenda's lines: headings before a colon that take turns or carry a time.
QANDA = [
    "質問：{}は精算できますか？\n回答：はい、できます。\n",
    "質問：締めはいつですか？\n回答：月末です。\n",
]
AGENDA = [
    "10:00 開始：部長が挨拶します。\n",
    "10:30 昼食：弁当を配ります。\n",
    "12:00 報告：各課が報告します。\n",
]
# A katakana given name that is a common word before a verb only a person is the one of, or a
# request: {} is the name.
ASKED = [
    "{}に聞いてください。",
    "{}に伝えておきます。",
    "{}と相談してください。",
    "{}が来ます。",
    "明日{}に頼みます。",
    "{}に渡してください。",
]
# Japanese words in katakana a back office writes as things (ウソ 嘘, ミス, ムダ 無駄), and what
# a sentence says of them.
KATAKANA_THINGS = [
    *(
        "ウソ",
        "ミス",
        "ムダ",
        "ツケ",
        "カギ",
        "ヒマ",
        "ムリ",
        "ダメ",
        "コツ",
        "ネタ",
        "ツボ",
        "クセ",
    ),
    *(
        "ワケ",
        "ゴミ",
        "キズ",
        "メド",
        "モレ",
        "ズレ",
        "ケタ",
        "ハンコ",
        "ホコリ",
        "サビ",
        "カビ",
        "ミソ",
    ),
]
THING_SAYS = [
    "{}が発覚しました。",
    "{}が発生しました。",
    "{}が多いです。",
    "{}があります。",
    "{}が見つかりました。",
    "{}はありません。",
    "{}が判明しました。",
    "{}が目立ちます。",
]


def _headed(doc: NamedDoc, lines: str) -> None:
    """Lines headed by a word before a colon that names no one (質問：, 10:30 昼食：), kept."""
    for line in lines.splitlines():
        head, said = line.split("：", 1)
        time, _, word = head.rpartition(" ")
        doc.add(time + " " if time else "").keep(word).add("：" + said + "\n")


def _pair(w: OfficeTexts, doc: NamedDoc) -> None:
    """A chat of two given names that are common words and no surname (朝陽：了解です /
    大地：承知しました / 朝陽：…), after a form's heads, a Q&A or an agenda that stay."""
    _headed(doc, w.r.choice(HEADED).format(w.r.choice(EXPENSES)))
    _headed(doc, w.r.choice([*QANDA, *AGENDA]).format(w.r.choice(EXPENSES)))
    first, second = w.r.sample(WORD_GIVEN, 2)
    stamped = w.r.random() < 0.3
    for turn in range(w.r.choice([3, 4, 5])):
        if stamped:
            doc.add(f"[10:{turn + 2:02d}] ")
        doc.secret((first, second)[turn % 2]).add("：")
        if turn == 1:
            doc.keep(w.r.choice(EXPENSES)).add("は").keep(w.amount()).add("です。\n")
        else:
            doc.add(w.r.choice(REPLIES) + "\n")


def _stamped(w: OfficeTexts, doc: NamedDoc) -> None:
    """A chat's one line with its time ([10:02] 朝陽：了解です), beside an agenda's timed item
    that stays (10:30 昼食：弁当を配ります。)."""
    _headed(doc, w.r.choice(AGENDA))
    time = w.r.choice(["[10:02] ", "［14:15］ ", "(9:41) ", "10:02:15 "])
    doc.add(time).secret(w.r.choice(WORD_GIVEN)).add("：" + w.r.choice(REPLIES))
    doc.add(w.r.choice(["", "\n"]))


def _asked(w: OfficeTexts, doc: NamedDoc) -> None:
    """A katakana given name that is a common word before a verb only a person is the one of or
    a request (ヒナに聞いてください), and katakana words that are things (ウソが発覚しました)."""
    doc.keep(w.r.choice(EXPENSES)).add("の件です。\n")
    before, after = w.r.choice(ASKED).split("{}")
    doc.add(before).secret(w.r.choice(WORD_KATAKANA)).add(after + "\n")
    _things(w, doc)


def _things(w: OfficeTexts, doc: NamedDoc) -> None:
    """Japanese words in katakana that are things as what a sentence speaks of (ウソが発覚しました,
    ムダが多いです, ミスがあります)."""
    for noun in w.r.sample(KATAKANA_THINGS, 3):
        before, after = w.r.choice(THING_SAYS).split("{}")
        doc.add(before).keep(noun).add(after + "\n")


SHAPES: dict[str, Callable[[OfficeTexts, NamedDoc], None]] = {
    shape.__name__.lstrip("_"): shape
    for shape in (_prose, _chat, _closing, _pair, _stamped, _asked, _things)
}


def make_office_turn_docs(seed: int, per_shape: int) -> list[NamedDoc]:
    """``per_shape`` documents of each shape, deterministic for ``seed``."""
    return make_named_docs(seed, per_shape, SHAPES, OfficeTexts)
