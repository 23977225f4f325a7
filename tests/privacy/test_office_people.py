"""The masking property on the people a back office's free text names with no label before them
(``tests.privacy.office_people``): the attendees parted by ・ (出席者：佐藤・システム・田中), a chat
speaker before the line's colon (佐藤：了解です, [10:02] ヒナ: 確認します), a mail signature's signer
(経理部 / 佐藤朝陽 / TEL：…), a katakana given name that is a common word (ヒナ, ショウ).

On integ (seeds 20, 21, 22; 60 documents of each of the three shapes, 180 documents, about 690
secrets and 430 kept values a seed): 33 / 27 / 40 secrets were sent and 41 / 41 / 42 kept words
masked (システム, 未定, フロント inside a ・ list taken as one name). Now none is sent and nothing
kept is masked.
"""

from __future__ import annotations

import pytest

from tests.privacy.office_people import SHAPES, make_office_people_docs
from tests.privacy.word_names import masked_json, mistakes

DOCS = make_office_people_docs(20, 60)


def test_the_generator_writes_the_shapes() -> None:
    assert len(DOCS) == 60 * len(SHAPES) == 180
    assert sum(len(set(d.secrets)) for d in DOCS) > 600


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_person_is_sent_and_no_kept_word_is_masked(shape: str) -> None:
    leaked, lost = mistakes(d for d in DOCS if d.shape == shape)
    assert leaked == {}
    assert lost == {}


def test_attendees_parted_by_a_middle_dot_are_masked_one_by_one() -> None:
    assert masked_json("出席者：佐藤・システム・田中") == "出席者：〔人名1〕・システム・〔人名2〕"
    assert masked_json("参加者：未定・ヒナ") == "参加者：未定・〔人名1〕"


@pytest.mark.parametrize(
    "log",
    [
        "佐藤：了解です。\nヒナ：確認します！\n佐藤：交通費は1,200円です。\nヒナ：承知しました。\n",
        "[10:02] ショウ: 確認します。\n[10:05] 田中：ありがとうございます。\n",
        "10:02 メイ：請求書を送りました。\n",
        "[10:02] 佐藤 唯：請求書を送りました。\n",  # 唯 is ただ, a conjunction, too
    ],
)
def test_a_chat_speaker_is_masked(log: str) -> None:
    sent = masked_json(log)
    assert not any(name in sent for name in ("佐藤", "ヒナ", "ショウ", "田中", "メイ", "唯"))
    assert "〔人名1〕" in sent


# A form's labels, a Q&A's and an agenda's headings, a bot: no one speaks before their colon,
# whatever heads take turns (開始 / 昼食 / 開始, Q / A); a katakana word that is a thing, the
# last lines of a mail that name no one (session 21: ``tests.privacy.test_office_turns``).
HEADINGS = [
    "件名：交通費精算\n日時：2025/04/01\n議題：出張旅費の精算\n",
    "質問：経費の締めはいつですか？\n回答：毎月25日です。\n質問：領収書は必要ですか？\n回答：必要です。\n",
    "Q：締めはいつですか？\nA：25日です。\nQ：領収書は？\nA：必要です。\n",
    "[10:02] システム：バックアップが完了しました。\n",
    "備考：特になし。\n備考：後日提出します。\n",
    "10:00 開始：挨拶をします。\n10:30 昼食：弁当を配ります。\n11:00 開始：議事に入ります。\n",
    "ツケが精算されます。\nショウが開催されます。\n",
    "よろしくお願いいたします。\n経理部\n",
    "以上です。\n次回は4月1日です。",
    # a Q&A whose answer replies, form headings taking turns in sentences (session 22)
    "質問：経費は？\n回答：はい、そうですね。\n質問：締めは？\n回答：月末です。",
    "内容：交通費です。\n備考：特にありません。\n内容：会議費です。\n備考：領収書ありです。",
    # Japanese words in katakana that are things, as what a sentence speaks of (session 22)
    *("ウソが発覚しました。", "ミスが発生しました。", "ムダが多い。", "ネタがあります。"),
    "クセが目立ちます。",
]


def test_labels_and_headings_before_a_colon_stay() -> None:
    assert [masked_json(text) for text in HEADINGS] == HEADINGS


@pytest.mark.parametrize(
    ("signature", "name"),
    [
        ("--\n経理部\n佐藤朝陽\nTEL：03-1234-5678\n", "佐藤朝陽"),
        ("--\n総務部 伊藤 空\nMail：ito@example.co.jp\n", "伊藤 空"),
        ("よろしくお願いいたします。\n--\n伊藤　唯\n", "伊藤　唯"),
        ("株式会社青葉商事 経理部　森田元気\n電話：090-1234-5678\n", "森田元気"),
    ],
)
def test_a_signers_full_name_is_masked_and_the_department_kept(signature: str, name: str) -> None:
    sent = masked_json(signature)
    assert name not in sent
    assert "〔人名1〕" in sent
    assert ("経理部" in sent) == ("経理部" in signature)


def test_a_line_before_a_contact_that_names_no_one_stays() -> None:
    assert masked_json("お問い合わせ先\nTEL：03-1234-5678").startswith("お問い合わせ先\n")
