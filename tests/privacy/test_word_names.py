"""The masking property on names that are words too (``tests.privacy.word_names``): under a
person's label (氏名・担当・担当者・申請者・宛名・ご担当者様・承認者・作成者), after a colon, on the
line below it or in its column, a given name written as a word (空, 湊, みなと, つむぎ) or with a
surname that is a word (林, 森, ほし) reaches no model; the words a form writes where no one is
named (未定・同上・不明・なし・担当者・未入力・不要) reach it as written.

On main before session 17 (seed 17, 100 documents of each of the four shapes, 400 documents,
1,836 secrets): 118 documents were wrong; 164 secrets were sent (a given name the dictionary
knows only as a common word: 空, 宙, 凪, つむぎ, しずく; anything under 宛名; a surname that is
a word alone or with such a given name: 松, 坂, 林, もりた) and 46 kept values were masked (a
label's value read on into a bracketed label after it: 担当：林 光（承認者：未定）; 不要, an
adjectival noun, as a name). After session 17, 5 given names were sent, each a word of two kanji
the dictionary knows only as a common word (希望, 元気, 芽生, 朝陽, 一華); since session 18 a word of
one or two kanji under a person's label is a name unless it is one of the words forms write there
(``kana_names.FORM_PLACEHOLDERS``: 未定, 同上, 空欄), and nothing is sent nor masked.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.privacy.word_names import SHAPES, make_word_name_docs, masked_json, mistakes

SEED = 17
PER_SHAPE = 100
DOCS = make_word_name_docs(SEED, PER_SHAPE)


def test_the_generator_writes_names_that_are_words() -> None:
    assert len(DOCS) == PER_SHAPE * len(SHAPES) == 400
    assert sum(len(set(d.secrets)) for d in DOCS) > 1800
    kept = Counter(v for d in DOCS for v in d.kept if not any(ch.isdigit() for ch in v))
    assert {"未定", "同上", "不明", "なし", "担当者", "未入力"} <= set(kept)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_name_is_sent_and_no_kept_word_ismasked_json(shape: str) -> None:
    leaked, lost = mistakes(d for d in DOCS if d.shape == shape)
    assert leaked == {}
    assert lost == {}


@pytest.mark.parametrize("name", ["みなと", "つむぎ", "空", "海", "凪", "ほし こと", "つじつむぎ"])
@pytest.mark.parametrize(
    "form", ["担当：{}", "氏名: {} 様", "申請者\n{}\n", "担当者,金額\n{},1200\n", "宛名：{}"]
)
def test_a_name_that_is_a_word_is_masked_under_a_person_label(name: str, form: str) -> None:
    assert name.split()[0] not in masked_json(form.format(name))


@pytest.mark.parametrize(
    "word", ["未定", "同上", "不明", "なし", "担当者", "未入力", "不要", "無", "まだ", "みんな"]
)
def test_a_word_that_names_no_one_stays(word: str) -> None:
    for text in (f"担当：{word}", f"承認者\n{word}\n", f"宛名,金額\n{word},1200\n"):
        assert masked_json(text) == text


def test_a_company_under_a_person_label_stays() -> None:
    for text in ("宛名,金額\n青葉商事株式会社,1200\n", "宛名：青葉商事株式会社 御中"):
        assert masked_json(text) == text


def test_a_value_ends_before_a_bracketed_label() -> None:
    assert masked_json("担当：林 光（承認者：未定）") == "担当：〔人名1〕（承認者：未定）"
    assert masked_json("担当：未定（承認者：林 みなと 様）") == "担当：未定（承認者：〔人名1〕 様）"
