"""The masking property on a back office's free text (``tests.privacy.office_texts``): mails,
chat logs, 議事録 and 申請書 notes name people where prose and lists do — a given name alone as
the one who acts (本件は遥が対応します, ノアが確認します), a katakana given name before さん
(タイガさんから), the attendees after 出席者 (佐藤、タイガ、遥（経理課）) — and write a マイナンバー
after a business number in a form of its own (管理番号：T823663  0886-8687-2119); the katakana
words a form writes under a person's label for a team or a desk (担当：システム, フロント,
スタッフ) stay readable.

On main (seed 19, 75 documents of each of the four shapes, 300 documents, 2,083 secrets, 1,125
kept values): 236 documents were wrong; 316 secrets were sent (given names alone, the attendees
after the first, タイガさん, 8 マイナンバー after a business number) and 76 kept values were masked
(システム, ゲスト, パート, フロント... under 担当). After session 19, 47 secrets were sent; after
session 20 (a chat's speaker and a signature's signer are people: ``privacy.line_people``) 12 were, all a katakana given name that the
dictionary lists as a common word (ヒナ 雛, ショウ show) alone in prose; since session 21 (such a
word is a person where the sentence makes it act or be asked: ヒナが確認します,
``privacy.name_context.subject_alone``) none is, and nothing kept is masked.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.privacy.office_texts import SHAPES, TEAM_WORDS, make_office_text_docs
from tests.privacy.word_names import masked_json, mistakes

SEED = 19
PER_SHAPE = 75
DOCS = make_office_text_docs(SEED, PER_SHAPE)


def test_the_generator_writes_the_shapes_of_free_text() -> None:
    assert len(DOCS) == PER_SHAPE * len(SHAPES) == 300
    assert sum(len(set(d.secrets)) for d in DOCS) > 2000
    kept = Counter(v for d in DOCS for v in d.kept)
    assert {"システム", "フロント", "（空）", "経理部", "交通費"} <= set(kept)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_person_or_number_is_sent_and_no_kept_word_is_masked(shape: str) -> None:
    leaked, lost = mistakes(d for d in DOCS if d.shape == shape)
    assert leaked == {}
    assert lost == {}


@pytest.mark.parametrize("word", TEAM_WORDS)
def test_a_katakana_team_word_under_a_persons_label_stays(word: str) -> None:
    """システム, フロント, スタッフ have a 人名 entry in the dictionary beside the common noun;
    the common noun is in a synonym group, the name in none: the word is the common one."""
    assert masked_json(f"担当：{word}") == f"担当：{word}"


@pytest.mark.parametrize("name", ["タイガ", "ノア", "ジョージ", "ソラ"])
def test_a_katakana_given_name_is_masked_before_an_honorific_and_under_a_label(name: str) -> None:
    assert masked_json(f"{name}さんから連絡がありました。") == "〔人名1〕さんから連絡がありました。"
    assert masked_json(f"{name}様から") == "〔人名1〕様から"
    assert masked_json(f"担当：{name}") == "担当：〔人名1〕"


@pytest.mark.parametrize("name", ["遥", "レオ", "エマ", "ノア", "ユウ", "タイガ", "ソウタ"])
@pytest.mark.parametrize(
    "form", ["本件は{}が対応します。", "了解です。{}が確認します。", "立替金は{}から届きました。"]
)
def test_a_given_name_alone_as_the_one_who_acts_is_masked(name: str, form: str) -> None:
    assert masked_json(form.format(name)) == form.format("〔人名1〕")


@pytest.mark.parametrize(
    "text",
    ["ココが大事です。", "リストが届きました。", "システムが対応します。", "全が対象です。"],
)
def test_a_word_before_a_particle_stays(text: str) -> None:
    assert masked_json(text) == text


def test_the_attendees_listed_after_their_label_are_masked() -> None:
    assert (
        masked_json("出席者：佐藤、タイガ、遥（経理課）")
        == "出席者：〔人名1〕、〔人名2〕、〔人名3〕（経理課）"
    )
    assert masked_json("出席者：佐藤、未定") == "出席者：〔人名1〕、未定"
    assert masked_json("担当：佐藤、経費の件です") == "担当：〔人名1〕、経費の件です"


@pytest.mark.parametrize(
    ("business", "my_number"),
    [
        ("管理番号：T823663  ", "0886-8687-2119"),
        ("管理番号：6738195988、", "0886 8687 2119"),
        ("受付番号：8902／", "0886 8687 2119"),
        ("申請番号：T134988　", "088686872119"),
        ("整理番号：7655-4813  ", "0886 8687 2119"),
        ("申請番号：A1234 ", "0886 8687 2119"),
        ("管理番号：R-2025-2816 ", "0886 8687 2119"),
    ],
)
def test_a_my_number_after_a_business_number_of_another_form_is_masked(
    business: str, my_number: str
) -> None:
    """A label names the number right after it (and its like listed after it), not a number of
    another form written after that one, nor one whose groups follow a code with letters."""
    assert masked_json(business + my_number) == business + "〔マイナンバー1〕"


@pytest.mark.parametrize(
    "text",
    [
        "注文番号：123456789018、123456789018",  # two order numbers of one form
        "注文番号：1234 5678 9018",
        # 16 digits in four groups of one spacing: a 会員番号's own (one in 11 has a
        # マイナンバー's check digit in its last 12), as a マイナンバー after a 4-digit number reads
        "受付番号：1234 1234 5678 9018",
    ],
)
def test_a_business_numbers_own_digits_stay(text: str) -> None:
    assert masked_json(text) == text
