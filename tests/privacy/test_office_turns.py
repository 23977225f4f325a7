"""The masking property on the people of a back office's free text that only a sentence's or a
mail's form tells (``tests.privacy.office_turns``): a katakana given name that is a common word
acting in prose (ヒナが対応します, 明日ショウに確認します), a given name that is a common word as
a chat speaker taking turns (朝陽：了解です), a mail's signer on its last line under the closing
line or the department (よろしくお願いいたします。 / 経理部 / 佐藤朝陽); the team words acting in
the same form (システムが対応します), a katakana word that is a thing (カギが見つかりました), a
form's labels and an agenda's items stay.

On main (seeds 21, 22, 23; 40 documents of each of the three shapes, about 310 secrets and 225
kept values a seed) 33 / 37 / 36 secrets were sent in prose, 9 / 5 / 6 in chats and 8 / 11 / 3
in closings; nothing kept was masked. Now none is sent and nothing kept is masked. The sample
here (seed 22, 12 documents a shape) is a small one that fails on main in every shape.

Session 22 added four shapes (``pair``, ``stamped``, ``asked``, ``things``; seeds 21, 22, 23,
40 documents of each, 160 secrets and about 495 kept values a seed). On integ 060f7aa 30 / 22 /
28 secrets were sent (17 / 14 / 13 in chats of two given names, 6 / 5 / 6 in stamped lines,
7 / 3 / 9 before a person's verb) and 143 / 150 / 151 kept words masked (katakana words that
are things: ネタが見つかりました, ムダが目立ちます, ウソが発覚しました). Now 0 and 0; the first three
shapes stay at 0 and 0.
"""

from __future__ import annotations

import pytest

from tests.privacy.office_turns import SHAPES, make_office_turn_docs
from tests.privacy.word_names import masked_json, mistakes

DOCS = make_office_turn_docs(22, 12)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_person_is_sent_and_no_kept_word_is_masked(shape: str) -> None:
    leaked, lost = mistakes(d for d in DOCS if d.shape == shape)
    assert leaked == {}
    assert lost == {}


@pytest.mark.parametrize(
    "form",
    ["{}が対応します。", "明日{}に確認します。", "{}から連絡がありました。", "{}へお願いします。"],
)
def test_a_katakana_word_is_a_person_where_the_sentence_makes_it_act(form: str) -> None:
    """ヒナ and ショウ are Japanese words written as names are; システム, フロント, スタッフ are
    loanwords (no kana spelling of their own) and stay in the same form."""
    for name in ("ヒナ", "ショウ"):
        assert masked_json(form.format(name)) == form.format("〔人名1〕")
    for word in ("システム", "フロント", "スタッフ"):
        assert masked_json(form.format(word)) == form.format(word)


@pytest.mark.parametrize("given", ["朝陽", "希望", "唯"])
def test_a_given_name_taking_turns_in_a_chat_is_masked(given: str) -> None:
    log = f"{given}：了解です。\n佐藤：承知しました。\n{given}：交通費は1,200円です。\n"
    assert masked_json(log) == (
        "〔人名1〕：了解です。\n〔人名2〕：承知しました。\n〔人名1〕：交通費は1,200円です。\n"
    )


@pytest.mark.parametrize(
    ("ending", "name"),
    [
        ("よろしくお願いいたします。\n経理部\n佐藤朝陽", "佐藤朝陽"),
        ("よろしくお願いいたします。\n\n佐藤 朝陽\n", "佐藤 朝陽"),
        ("以上です。\n総務部　伊藤空\n", "伊藤空"),
        ("ご確認ください。\n株式会社青葉商事\n山田希望\n", "山田希望"),
    ],
)
def test_a_signer_on_a_mails_last_line_is_masked(ending: str, name: str) -> None:
    sent = masked_json("田中様\n\nお世話になっております。\n" + ending)
    assert name not in sent
    assert sent.endswith(ending.replace(name, "〔人名2〕"))


@pytest.mark.parametrize(
    ("log", "sent"),
    [
        (
            "朝陽：了解です。\n大地：承知しました。\n朝陽：交通費は1,200円です。\n",
            "〔人名1〕：了解です。\n〔人名2〕：承知しました。\n〔人名1〕：交通費は1,200円です。\n",
        ),
        (
            "朝陽：了解です\n希望：確認しますね\n朝陽：はい！\n希望：お願いします。",
            "〔人名1〕：了解です\n〔人名2〕：確認しますね\n〔人名1〕：はい！\n〔人名2〕：お願いします。",
        ),
        ("[10:02] 朝陽：了解です", "[10:02] 〔人名1〕：了解です"),
        ("10:02 希望：ありがとうございます。", "10:02 〔人名1〕：ありがとうございます。"),
    ],
)
def test_given_names_chatting_with_no_surname_are_masked(log: str, sent: str) -> None:
    """Given names that are common words taking turns with each other alone, or one chat line
    with its time stamp: the chat's form says who speaks."""
    assert masked_json(log) == sent


@pytest.mark.parametrize("form", ["{}に聞いてください。", "{}に伝えておきます。", "{}が来ます。"])
def test_a_katakana_word_is_a_person_before_a_persons_verb(form: str) -> None:
    for name in ("ヒナ", "ショウ"):
        assert masked_json(form.format(name)) == form.format("〔人名1〕")
