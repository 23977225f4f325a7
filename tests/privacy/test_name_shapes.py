"""Names the detector missed and header words it took for names, on a fifth generator
(``tests/privacy/name_shapes.py``): surnames that are places listed in brackets (（松本・石川）),
a given name in hiragana before さま (りくさま), a writer's surname in hiragana before です
(さとうです。) and headers naming the party of an action (発注先名). Every name is masked and
every counterexample stays (かみさま, みなさま, おきゃくさま, そうです, （税込・税抜）, 発注先名).
On the code before, 279 of these 1,200 documents were wrong (44 bracketed, 71 さま, 34 です,
130 headers); the cases below failed on it one by one."""

from __future__ import annotations

from collections import Counter

import pytest

from keiri_agent.privacy import Vault, mask_json_text
from tests.privacy import backoffice
from tests.privacy.backoffice import leaks
from tests.privacy.name_shapes import SHAPES
from tests.privacy.test_backoffice import spans

SEEDS = (1, 2, 3)
PER_SHAPE = 100  # documents of each shape per seed (3 seeds x 4 shapes x 100 = 1,200)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_name_is_masked_and_every_counterexample_stays(shape: str) -> None:
    wrong: dict[str, list[str]] = {}
    for seed in SEEDS:
        for doc in backoffice.make_docs(seed, PER_SHAPE, [shape], SHAPES):
            masked = mask_json_text(Vault(), doc.text, Counter())  # as every prompt
            bad = leaks(doc, masked) + [f"lost {k}" for k in doc.kept if k not in masked]
            if bad:
                wrong[doc.text] = bad
    assert wrong == {}


# One case per shape (each failed on the code before).
FOUND = [
    ("担当者別売上（松本・石川）", ["松本", "石川"]),
    ("グラフ: 月別立替金（岡山・秋田）の比較", ["岡山", "秋田"]),
    ("件名: 請求書送付の件 りくさま、よろしくお願いします。", ["りく"]),
    ("ひなさまへ", ["ひな"]),
    ("お疲れさまです。さとうです。経費精算の締め日を教えてください", ["さとう"]),
    ("こんにちは！いとうです\n", ["いとう"]),
]


@pytest.mark.parametrize(("text", "names"), FOUND)
def test_each_missed_shape_is_masked(text: str, names: list[str]) -> None:
    assert spans(text) == [("person", name) for name in names]


KEPT = [
    "かみさまにお願いするしかない",
    "みなさま、おきゃくさま各位、おつかれさまです",
    "そうです。うれしいです。",
    "地域別売上（東京・大阪）（税込・税抜）",
    "発注先名,仕入元名,振込先名,販売元名,金額",
]


@pytest.mark.parametrize("text", KEPT)
def test_each_counterexample_stays(text: str) -> None:
    assert spans(text) == []
