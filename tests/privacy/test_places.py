"""Places that are surnames too stay visible where a text speaks of places; people stay masked.

The generator (``tests.privacy.places``) writes lists after 地域別, 県別, エリア, 支店, 営業所,
拠点, 所在地..., tables with a column about places, places before the word about them, and people
named by the same surnames (担当: 石川, 石川様, 石川 太郎, 営業所長: 佐賀, 担当者別（石川・山田）).
On the code before ``privacy.places`` 95 of its 493 places were masked and 5 of its 194 people
sent (seed 14, 300 texts); now none.
"""

from __future__ import annotations

import pytest

from keiri_agent.privacy import Vault
from tests.privacy.places import make_docs, make_page_lists

DOCS = make_docs(300, seed=14)


def _masked(text: str) -> str:
    return Vault().mask(text).text  # a fresh job per text: nothing learnt from another


def test_no_generated_place_is_masked_and_no_person_is_sent() -> None:
    over = []
    missed = []
    for doc in DOCS:
        masked = _masked(doc.text)
        over += [(doc.text, place) for place in doc.places if place not in masked]
        missed += [(doc.text, name) for name in doc.people if name in masked]
    assert len(DOCS) == 300
    assert sum(len(doc.places) for doc in DOCS) > 400
    assert sum(len(doc.people) for doc in DOCS) > 150
    assert over == []
    assert missed == []


def test_places_listed_down_the_page_stay_and_people_so_listed_are_masked() -> None:
    """Session 15: one item a line under 支店一覧 / 営業所: / 都道府県 (bullets, figures after the
    item, a blank line after the label); people so listed under 担当者一覧 / 支店長 / 出席者.
    On the code before ``privacy.page_lists`` (seed 15, 300 lists) 117 of the 581 places were
    masked and 116 of the 382 people sent; now none."""
    docs = make_page_lists(300, seed=15)
    over = [(d.text, p) for d in docs for p in d.places if p not in _masked(d.text)]
    missed = [(d.text, n) for d in docs for n in d.people if n in _masked(d.text)]
    assert sum(len(d.places) for d in docs) > 300
    assert sum(len(d.people) for d in docs) > 150
    assert over == []
    assert missed == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("地域別売上（石川・富山）", "地域別売上（石川・富山）"),
        ("北陸（石川・富山・福井）の売上", "北陸（石川・富山・福井）の売上"),
        ("エリア: 長野、松本市", "エリア: 長野、松本市"),
        ("拠点: 石川（金沢）、長野（松本）", "拠点: 石川（金沢）、長野（松本）"),
        ("担当地域: 長野", "担当地域: 長野"),
        ("都道府県,売上\n石川,1200\n長野,800", "都道府県,売上\n石川,1200\n長野,800"),
        ("担当: 石川", "担当: 〔人名1〕"),
        ("地域: 石川さん", "地域: 〔人名1〕さん"),
        ("支店長: 石川", "支店長: 〔人名1〕"),
        ("営業所長: 佐賀 太郎", "営業所長: 〔人名1〕"),
        ("地域担当者: 石川、長野", "地域担当者: 〔人名1〕、〔人名2〕"),
        ("支店: 石川、佐藤", "支店: 〔人名1〕、〔人名2〕"),
        ("担当者別売上（石川・山田）", "担当者別売上（〔人名1〕・〔人名2〕）"),
        ("担当者,地域\n石川 太郎,石川", "担当者,地域\n〔人名1〕,石川"),
        ("部長承認,金額\n済,1200", "部長承認,金額\n済,1200"),  # a title inside a header
        ("支店一覧\n石川\n富山\n福井", "支店一覧\n石川\n富山\n福井"),
        ("営業所: \n長崎\n佐賀", "営業所: \n長崎\n佐賀"),
        (
            "支店別売上\n・石川　1,200,000円\n・富山　800,000円",
            "支店別売上\n・石川　1,200,000円\n・富山　800,000円",
        ),
        ("担当者一覧\n石川\n長野", "担当者一覧\n〔人名1〕\n〔人名2〕"),
        ("支店一覧\n石川\n佐藤", "支店一覧\n〔人名1〕\n〔人名2〕"),
        ("支店長\n石川 太郎\n長野", "支店長\n〔人名1〕\n〔人名2〕"),
        # a surname tagged a place before a given name (by the tokenizer's context)
        ("申請者 長崎 由美", "申請者 〔人名1〕"),
        ("申請者 長崎 智子", "申請者 〔人名1〕"),
        ("広島 浩二部長", "〔人名1〕部長"),
    ],
)
def test_a_place_as_a_place_and_a_person_as_a_person(text: str, expected: str) -> None:
    assert _masked(text) == expected


_WORDS = (
    "住所",
    "電話番号",
    "連絡先",
    "担当者",
    "氏名",
    "メールアドレス",
    "口座",
    "支店",
    "営業所",
)
_ASKS = (
    "会社の{}を教えて",
    "{}を変更したい",
    "{}はどこで見られますか",
    "{}が分からない",
    "{}を登録するには",
)


def test_a_question_naming_a_header_heads_no_list_below_it() -> None:
    """A question that names a header word (会社の住所を教えて) on its own line is no label: the
    lines the prompt puts under it (a blank, ``## 計画``, ``1. 質問 6 の答えを…``) were masked
    as addresses and 質問 was learnt and masked everywhere (the help desk's planner prompt)."""
    texts = [
        f"## 質問\n{ask.format(word)}\n\n## 計画\n1. 質問 {n} の答えを資料で調べる\n2. 手順を確認する\n"
        for n, (word, ask) in enumerate(((w, a) for w in _WORDS for a in _ASKS), start=1)
    ]
    changed = [text for text in texts if _masked(text) != text]
    assert len(texts) == 45
    assert changed == []
