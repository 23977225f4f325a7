"""入金消込 on payer fields the other generators do not write (``tests/support/bank_payers.py``):
a branch glued after a city's name Sudachi knows in kanji only, the person in charge or the
sender after the company, a katakana-only name as long as an export's cut, a note of what is paid,
the parent paying for a subsidiary, two months in one transfer less a fee, two fees. The property
first (no wrong match, no promised transfer missed), then one test per kind the generator found
wrong or missed on main, and the municipalities' table the branch rule reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.blocks.table.names import CustomerName, NameIndex, PayerName, best_matches
from keiri_agent.blocks.table.names.municipalities import MUNICIPALITY_READINGS, load_readings
from keiri_agent.blocks.table.names.reading import is_place, word_tails
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.payments_support import (
    alike_owe,
    check_property,
    column,
    invoice,
    matched_pairs,
    one_transfer,
    only_review,
)
from tests.support import bank_payers

# Each property run matches a few hundred transfers: minutes on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(600)

AOBA = ("7001", "株式会社青葉商事", "アオバショウジ")
AOBA_SHORT = ("7002", "株式会社青葉", "アオバ")


@pytest.mark.parametrize("seed", [1907, 1908])
def test_no_payer_field_of_these_shapes_is_matched_to_anyone_else(
    tmp_path: Path, seed: int
) -> None:
    # main: 60 wrong (katakana-only names as long as an export's cut) and 99 missed (glued
    # branches after ﾊﾏﾏﾂ, ﾀｶﾏﾂ …, ﾀﾝﾄｳ and a person) of 476 transfers (seeds 7 and 8, 200 each).
    shapes = (
        "glued_city", "glued_word", "note_number", "representative", "in_charge", "owner_word",
        "person_after", "parent",
        "kana_stranger_cut_bank", "kana_stranger_cut_typed", "kana_stranger_cut_full",
        "kana_own_cut_bank", "two_months_fee", "two_fees",
    )  # fmt: skip
    check_property(tmp_path, bank_payers.cases(seed, 110), shapes)


@pytest.mark.parametrize(
    "payer",
    [
        # A branch glued after a city the dictionary knows in kanji only. main: 要確認 (no
        # place before the branch word, so the name's end could not be told).
        "ｶ)ｱｵﾊﾞｼﾖｳｼﾞﾊﾏﾏﾂｼﾃﾝ",
        "ｱｵﾊﾞｼﾖｳｼﾞﾀｶﾏﾂｴｲｷﾞﾖｳｼﾖ",
        "ｶ)ｱｵﾊﾞｼﾖｳｼﾞﾅﾊｼﾃﾝ",
        "ｱｵﾊﾞｼﾖｳｼﾞｳﾂﾉﾐﾔｼｼﾔ",
        # The person in charge or who sent it, after the company. main: only a proposal (the
        # words after the company were no branch).
        "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾝﾄｳ ｻﾄｳ",
        "ｱｵﾊﾞｼﾖｳｼﾞ ｻﾄｳ ﾀﾛｳ",
        "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀｶﾊｼ ｹﾝｼﾞ",
        "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾞｲﾋﾖｳ ｻﾄｳ ﾀﾛｳ",
    ],
)
def test_what_follows_the_company_leaves_the_company(tmp_path: Path, payer: str) -> None:
    out = alike_owe(tmp_path, payer, AOBA, AOBA_SHORT)
    assert column(out, "matched", "取引先コード") == ["7001"]


def test_a_customer_named_with_the_city_is_not_taken_for_the_other_ones_branch(
    tmp_path: Path,
) -> None:
    # 青葉商事浜松 is a customer: its name, not 青葉商事's branch, is what the payer wrote.
    hamamatsu = ("7003", "青葉商事浜松株式会社", "アオバショウジハママツ")
    out = alike_owe(tmp_path, "ｱｵﾊﾞｼﾖｳｼﾞﾊﾏﾏﾂ(ｶ", AOBA, hamamatsu)
    assert column(out, "matched", "取引先コード") == ["7003"]


def test_a_place_in_a_name_is_no_branch_without_a_branch_word(tmp_path: Path) -> None:
    out = alike_owe(tmp_path, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞﾊﾏﾏﾂ", AOBA, AOBA_SHORT)
    assert out["matched"] == []


@pytest.mark.parametrize("payer", ["ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾘ-ｽ", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ｻｸﾗ", "ｻﾄｳ ﾀﾛｳ", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾞｲﾋﾖｳ"])
def test_words_that_are_no_persons_full_name_still_leave_it_to_a_person(
    tmp_path: Path, payer: str
) -> None:
    out = alike_owe(tmp_path, payer, AOBA, AOBA_SHORT)
    assert out["matched"] == []


@pytest.mark.parametrize(
    ("master_name", "payer"),
    [
        # A master that keeps the name as the bank writes it; the payer is another company whose
        # whole name, with ｶ), is 20 characters: an export's cut as likely as a whole name.
        ("ｶ)ﾗｲﾌﾏﾈｼﾞﾒﾝﾄﾊﾟ-ﾄﾅ-ｽﾞｸﾘｴｲﾄ", "ｶ)ﾗｲﾌﾏﾈｼﾞﾒﾝﾄﾊﾟ-ﾄﾅ-ｽﾞ"),
        ("ｶ)ｻﾝｼﾔｲﾝﾎ-ﾑｻ-ﾋﾞｽﾒﾃﾞｲｶﾙ", "ｶ)ｻﾝｼﾔｲﾝﾎ-ﾑｻ-ﾋﾞｽ"),
        # Sudachi reads this katakana run as one unknown word: no word ends were known on main.
        ("株式会社ライフマネジメントパートナーズクリエイトアクア", "ｶ)ﾗｲﾌﾏﾈｼﾞﾒﾝﾄﾊﾟ-ﾄﾅ-ｽﾞ"),
    ],
)
def test_a_katakana_name_as_long_as_an_exports_cut_that_ends_between_words_is_asked(
    tmp_path: Path, master_name: str, payer: str
) -> None:
    # main: matched to the longer customer (a wrong match when the payer's name is whole).
    master = [{"取引先コード": "7101", "取引先名": master_name, "取引先名カナ": ""}]
    invoices = [invoice("INV-1", "7101", master_name, 150_000)]
    out = one_transfer(tmp_path, invoices, payer, 150_000, customers=master)
    assert only_review(out)["照会番号"] == "1"


def test_a_katakana_name_cut_inside_a_word_is_still_the_longer_name(tmp_path: Path) -> None:
    # Sudachi reads the name as one unknown word; its words are found in the dictionary, and a
    # cut inside メディカル proves the longer name.
    master_name = "株式会社ネクストライフパートナーズメディカル"
    master = [{"取引先コード": "7101", "取引先名": master_name, "取引先名カナ": ""}]
    invoices = [invoice("INV-1", "7101", master_name, 150_000)]
    out = one_transfer(tmp_path, invoices, "ｶ)ﾈｸｽﾄﾗｲﾌﾊﾟ-ﾄﾅ-ｽﾞﾒﾃﾞ", 150_000, customers=master)
    assert matched_pairs(out) == {"1": ["INV-1"]}


def test_the_municipalities_table_holds_cities_the_dictionary_knows_in_kanji_only() -> None:
    assert {"ハママツ", "タカマツ", "ナハ", "ウツノミヤ", "サツポロ"} <= MUNICIPALITY_READINGS
    assert "アオバ" not in MUNICIPALITY_READINGS  # a designated city's ward (仙台市青葉区)
    assert len(MUNICIPALITY_READINGS) > 1_500
    assert is_place("ハママツ")
    assert is_place("ナハ")
    assert not is_place("ナカ")  # 那珂 and 中 alike: a short reading that is also a word
    assert not is_place("ヒカリ")  # 光市, and a word that ends companies' names
    assert not is_place("チユウオウ")


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("1234,浜松,ハママツ", "1234"),
        ("22130,,ハママツ", "22130"),
        ("22130,浜松,ハママッ", "ハママッ"),
    ],
)
def test_a_broken_row_of_the_municipalities_table_is_refused_with_its_line(
    row: str, problem: str
) -> None:
    with pytest.raises(BlockError) as caught:
        load_readings(f"code,name,reading\n01202,函館,ハコダテ\n{row}\n")
    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    assert "municipalities.csv の 3 行目" in caught.value.message
    assert problem in caught.value.message


def test_a_cut_name_of_katakana_with_small_kana_written_large_is_no_longer_name() -> None:
    # ｿﾌﾄｳｴｱ, ﾌｱｸﾄﾘｰ, ｳｴﾙﾈｽ: the words of a name the bank wrote without its small kana are told
    # as ソフトウェア… are, so a stranger's whole name that ends where they begin is no cut of
    # it. integ: 8 of 600 such strangers matched (seed 2011), branch: 0.
    wrong = [
        (payer, name)
        for payer, name in bank_payers.stranger_cuts(2011, 600)
        if best_matches(NameIndex([CustomerName("7101", name, "")]).lookup(PayerName.parse(payer)))
    ]
    assert wrong == []


def test_a_katakana_name_cut_inside_a_word_is_the_customers_own() -> None:
    # ﾛｼﾞｽﾃｲｸｽ read ロジス|テイクス by Sudachi before small kana were tried (ロジスティクス), and
    # a cut between a kana and its voiced mark (ﾌｲｰﾙﾄ of ﾌｲｰﾙﾄﾞ) taken for a word's end: main
    # left 7 of these 120 payers to a person (18 of 300), integ 2 (3 of 300: ﾃﾞｲﾚｸ|ｼﾖﾝ, two
    # foreign names of the dictionary), branch 0.
    missed = [
        (payer, name)
        for payer, name in bank_payers.inside_cuts(2021, 120)
        if not best_matches(
            NameIndex([CustomerName("7101", name, "")]).lookup(PayerName.parse(payer))
        )
    ]
    assert missed == []


def test_a_word_is_parted_where_a_name_may_end_only() -> None:
    # integ: ディレク|ション (a foreign name only before the cut) made ...ﾃﾞｲﾚｸ a whole name.
    assert word_tails("ﾈｸｽﾄﾃﾞｲﾚｸｼﾖﾝ") == ("デイレクシヨン",)
    # ...エレクトロ may be a whole name
    assert word_tails("ﾈｸｽﾄｴﾚｸﾄﾛﾆｸｽ") == ("ニクス", "エレクトロニクス")
    assert word_tails("ﾈｸｽﾄｿﾌﾄｳｴｱ") == ("ウエア", "ソフトウエア")


def test_small_kana_written_large_are_tried_before_sudachis_words() -> None:
    # main: ロジス|テイクス (Sudachi's words of the large kana), so テイクスサービス was a tail.
    assert word_tails("ﾛｼﾞｽﾃｲｸｽｻｰﾋﾞｽ") == ("サービス",)
    assert word_tails("ﾎｸﾄﾛｼﾞｽﾃｲｸｽ") == ("ロジステイクス",)
