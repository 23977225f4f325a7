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

Beside them, what must reach a model as written: the team words a sentence makes act in the
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


SHAPES: dict[str, Callable[[OfficeTexts, NamedDoc], None]] = {
    shape.__name__.lstrip("_"): shape for shape in (_prose, _chat, _closing)
}


def make_office_turn_docs(seed: int, per_shape: int) -> list[NamedDoc]:
    """``per_shape`` documents of each shape, deterministic for ``seed``."""
    return make_named_docs(seed, per_shape, SHAPES, OfficeTexts)
