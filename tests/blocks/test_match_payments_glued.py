"""入金消込 on a branch glued to a payer's name after a word that names a place and companies
alike (``tests/support/bank_glued.py``): 青葉 and 青葉サクラ in one master, ``ｱｵﾊﾞｻｸﾗｼﾃﾝ``. The
property first (no wrong match, no promised transfer missed), then one test per way integ
matched the shorter customer wrongly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.blocks.table.names import (
    CustomerName,
    NameIndex,
    PayerName,
    best_matches,
    name_match,
)
from tests.blocks.payments_support import alike_owe, check_property, column
from tests.support import bank_glued

# Each property run matches a hundred transfers: a minute or more on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(600)

AOBA = ("8001", "株式会社青葉", "アオバ")


@pytest.mark.parametrize("seed", [2020, 2021])
def test_no_glued_branch_is_matched_to_a_customer_the_name_only_begins_with(
    tmp_path: Path, seed: int
) -> None:
    # integ: the longer customer's branch glued after サクラ, ミドリ, 日本, 大和 … matched to the
    # shorter customer (seeds 2020 and 2021, 100 transfers each: 24 and 16 wrong).
    shapes = ("lookalike_branch", "lookalike_city", "base_city", "kana", "kanji")
    check_property(tmp_path, bank_glued.cases(seed, 100), shapes)


@pytest.mark.parametrize(
    ("payer", "longer"),
    [
        # The longer customer is in the master: the place goes on its name (integ: 青葉).
        ("ｱｵﾊﾞｻｸﾗｼﾃﾝ", ("8002", "青葉サクラ株式会社", "アオバサクラ")),
        ("ｶ)ｱｵﾊﾞﾆﾎﾝｴｲｷﾞﾖｳｼﾖ", ("8002", "青葉日本株式会社", "アオバニホン")),
        ("ｱｵﾊﾞﾔﾏﾄｼｼﾔ", ("8002", "青葉大和株式会社", "")),
        ("ｱｵﾊﾞﾋﾉﾃﾞｼﾃﾝ", ("8002", "株式会社青葉日の出", "アオバヒノデ")),
    ],
)
def test_a_place_another_customers_name_goes_on_with_is_no_branch(
    tmp_path: Path, payer: str, longer: tuple[str, str, str]
) -> None:
    out = alike_owe(tmp_path, payer, AOBA, longer)
    assert "8001" not in column(out, "matched", "取引先コード")


def test_a_branch_after_a_city_still_tells_the_name(tmp_path: Path) -> None:
    longer = ("8002", "青葉サクラ株式会社", "アオバサクラ")
    out = alike_owe(tmp_path, "ｶ)ｱｵﾊﾞｻｸﾗﾊﾏﾏﾂｼﾃﾝ", AOBA, longer)
    assert column(out, "matched", "取引先コード") == ["8002"]
    out = alike_owe(tmp_path, "ｱｵﾊﾞﾖｺﾊﾏｼﾃﾝ", AOBA, longer)
    assert column(out, "matched", "取引先コード") == ["8001"]


def test_the_index_alone_refuses_the_glued_head() -> None:
    payer = PayerName.parse("ｱｵﾊﾞﾊﾏﾏﾂｼﾃﾝ")
    assert payer.glued == ("アオバ",)
    alone = NameIndex([CustomerName("8001", "株式会社青葉", "アオバ")])
    assert [m.customer.code for m in alone.lookup(payer)] == ["8001"]
    both = NameIndex([*alone.customers, CustomerName("8002", "青葉浜松株式会社", "アオバハママツ")])
    assert [m.customer.code for m in both.lookup(payer)] == []


def test_one_customer_alone_proves_no_glued_head() -> None:
    # integ: name_match without the master took アオバ for the head of ｱｵﾊﾞﾊﾏﾏﾂｼﾃﾝ, which the index
    # refuses when 青葉浜松 is a customer; a glued head counts only once the master told the payer.
    payer = PayerName.parse("ｱｵﾊﾞﾊﾏﾏﾂｼﾃﾝ")
    aoba = CustomerName("8001", "株式会社青葉", "アオバ")
    assert name_match(payer, aoba) is None
    assert name_match(payer.told(lambda _: False), aoba) is not None
    assert name_match(payer.told(lambda stem: stem == "アオバハママツ"), aoba) is None


@pytest.mark.parametrize(("city", "expected"), [(False, 0), (True, 1)])
def test_a_word_companies_are_named_with_glued_before_a_branch_is_no_place(
    city: bool, expected: int
) -> None:
    # integ: with only 青葉 in the master, ｱｵﾊﾞｻｸﾗｼﾃﾝ (青葉サクラ's branch) was 青葉's: 192 of the
    # 192 payers of a base, a word of bank_glued.WORDS and an office; a branch glued after a
    # city (ｱｵﾊﾞｾﾝﾀﾞｲｼﾃﾝ, ｱｵﾊﾞﾏﾂﾓﾄｼﾃﾝ) stays the base's (432 of 432).
    payers = bank_glued.glued_payers(city=city)
    found = [
        len(
            best_matches(
                NameIndex([CustomerName("8001", f"株式会社{base}", kana)]).lookup(
                    PayerName.parse(payer)
                )
            )
        )
        for base, kana, payer in payers
    ]
    assert [p for (_, _, p), n in zip(payers, found, strict=True) if n != expected] == []
