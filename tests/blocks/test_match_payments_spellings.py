"""入金消込 on payer names spelled as banks and statement exports spell them, beyond the shapes
of ``test_match_payments_shapes``: a form closed by a space or spelled out, long marks written
any way or left out (on either side), small kana, ヂ/ヅ written ジ/ズ, names cut at 48, 30 or 20
characters (inside a form, inside a voiced kana), まとめ入金 with a fee while look-alike
customers owe the same amounts, sole proprietors. The generator is
``tests/support/bank_spellings.py``; its property (no transfer matched to another customer or
other invoices than it paid, every transfer the product promises to read matched) runs in
``test_match_payments_shapes.py`` beside the other generator's. Here: the index agrees with
comparing every customer, and one test per kind of miss the generator found, each with the
outcome a person reads.
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.table.names import CustomerName, NameIndex, PayerName, fold, name_match
from tests.blocks.payments_support import (
    alike_owe,
    column,
    invoice,
    matched_pairs,
    one_transfer,
    only_review,
    option_values,
)
from tests.support.bank_spellings import CUSTOMERS, cases, payer_name


def test_the_index_finds_what_comparing_with_every_customer_finds() -> None:
    # The new ways of meeting (long marks, narrow cuts, cut forms, trade names) are looked up
    # by dict and bisection; they must find what comparing with each customer finds.
    rows = cases(3513, 1)[0].master
    customers = [CustomerName(r["取引先コード"], r["取引先名"], r["取引先名カナ"]) for r in rows]
    index = NameIndex(customers)
    keys = [key.text for customer in customers for key in customer.keys]
    rng = random.Random(3513)
    for _ in range(300):
        raw, _, _ = payer_name(rng.choice(CUSTOMERS), rng)
        payer = PayerName.parse(raw)
        told = payer.told(lambda stem: any(k.startswith(stem) for k in keys))
        everyone = [m for c in customers if (m := name_match(told, c)) and not m.proposal_only]
        found = [m for m in index.lookup(payer) if not m.proposal_only]
        assert sorted(found, key=lambda m: m.customer.code) == everyone, raw


# --- the misses the generator found, one by one ---------------------------------------------

TOYO = {
    "取引先コード": "3001",
    "取引先名": "株式会社東洋コーポレーション",
    "取引先名カナ": "トウヨウコーポレーション",
}
GREEN = {"取引先コード": "3002", "取引先名": "グリーンサービス有限会社", "取引先名カナ": "ｸﾞﾘｰﾝｻｰﾋﾞｽ"}


def _pays(tmp_path: Path, customer: dict[str, str], payer: str, amount: int) -> dict[str, Any]:
    """One transfer from ``payer`` against ``customer``'s invoice INV-1 of 110,000 円."""
    code, name = customer["取引先コード"], customer["取引先名"]
    return one_transfer(
        tmp_path, [invoice("INV-1", code, name, 110_000)], payer, amount, [customer]
    )


@pytest.mark.parametrize(
    "payer",
    ["(ｶ ﾄｳﾖｳｺｰﾎﾟﾚｰｼﾖﾝ", "(ｶ ﾄｳﾖｳｺｰﾎﾟﾚｰｼﾖﾝ ｵｵｻｶｼﾃﾝ", "ﾄｳﾖｳｺｰﾎﾟﾚｰｼﾖﾝ(ｶ ｵｵｻｶｼﾃﾝ"],
)
def test_a_form_whose_closing_parenthesis_is_a_space_is_the_form(
    tmp_path: Path, payer: str
) -> None:
    out = _pays(tmp_path, TOYO, payer, 109_560)
    assert matched_pairs(out) == {"1": ["INV-1"]}


@pytest.mark.parametrize(
    "payer", ["ｶ.ﾄｳﾖｳｺｰﾎﾟﾚｰｼﾖﾝ", "ｶ. ﾄｳﾖｳｺｰﾎﾟﾚｰｼﾖﾝ", "ﾄｳﾖｳｺｰﾎﾟﾚｰｼﾖﾝ.ｶ", "3001ｶ.ﾄｳﾖｳｺｰﾎﾟﾚｰｼﾖﾝ"]
)
def test_a_form_written_with_a_period_for_its_parenthesis_is_the_form(
    tmp_path: Path, payer: str
) -> None:
    # Some payers' systems write ｶ. for ｶ): before, ｶ.ﾄｳﾖｳ... was a name one kana off, proposed.
    out = _pays(tmp_path, TOYO, payer, 110_000)
    assert matched_pairs(out) == {"1": ["INV-1"]}
    assert column(out, "matched", "理由")[0].endswith("／金額: 一致")


def test_a_period_after_a_kana_that_is_no_form_is_part_of_the_name(tmp_path: Path) -> None:
    # ｴｽ.ｹｲ is an initial, no company form: the name stays エスケイ..., another company.
    customer = {
        "取引先コード": "3020",
        "取引先名": "株式会社ケイ商事",
        "取引先名カナ": "ケイショウジ",
    }
    out = _pays(tmp_path, customer, "ｴｽ.ｹｲｼﾖｳｼﾞ", 110_000)
    assert out["matched"] == []


@pytest.mark.parametrize(
    ("master_kana", "payer"),
    [
        ("トウヨウコーポレーション", "ｶ)ﾄｳﾖｳｺﾎﾟﾚｼﾖﾝ"),  # the payer's system left the marks out
        ("トウヨウコポレション", "ｶ)ﾄｳﾖｳｺ‐ﾎﾟﾚ‐ｼｮﾝ"),  # the master did; ‐ and a small ョ
    ],
)
def test_a_name_without_its_long_marks_is_the_name(
    tmp_path: Path, master_kana: str, payer: str
) -> None:
    out = _pays(tmp_path, {**TOYO, "取引先名カナ": master_kana}, payer, 110_000)
    assert matched_pairs(out) == {"1": ["INV-1"]}
    assert column(out, "matched", "理由") == [
        "名義: マスタのカナ（長音符「ー」の有無だけ違う）／金額: 一致"
    ]


def test_two_names_one_long_mark_apart_are_for_a_person(tmp_path: Path) -> None:
    # ﾋﾞﾙｻﾋﾞｽ is ビルサービス or ビールサービス written without marks: nobody can tell.
    out = alike_owe(
        tmp_path,
        "ｶ)ﾋﾞﾙｻﾋﾞｽ",
        ("3004", "株式会社ビルサービス", "ビルサービス"),
        ("3005", "ビール株式会社", "ビールサービス"),
    )
    row = only_review(out)
    assert row["理由"].startswith("振込依頼人名が同じくらい合う取引先が 2 社あります")
    assert option_values(out) == ["取引先:3004", "取引先:3005", "該当なし"]


@pytest.mark.parametrize(
    "payer",
    [
        "ｸﾞﾘｰﾝｻｰﾋﾞｽ ﾕｳｹﾞﾝｶﾞｲｼ",  # cut at 20 inside the form spelled out
        "ｸﾞﾘｰﾝｻｰﾋﾞｽ ﾕｳｹ",  # and inside its voiced ｹﾞ (15: a 48 field would not cut it)
    ],
)
def test_a_name_cut_inside_a_spelled_out_form_is_the_name(tmp_path: Path, payer: str) -> None:
    out = _pays(tmp_path, GREEN, payer, 109_560)
    if len(payer) == 20:
        assert matched_pairs(out) == {"1": ["INV-1"]}
        assert column(out, "matched", "理由") == [
            "名義: マスタのカナ（前方一致: 銀行で 20 文字に切れた名前）／金額: 手数料差引 (440 円)"
        ]
    else:  # not at a width: a name that goes on, not a cut one
        assert out["matched"] == []


LONG = "ﾋｶﾞｼﾆﾎﾝﾛｼﾞｽﾃｲｸｽｿﾘﾕｰｼﾖﾝｽﾞ"  # 24 half-width characters the two customers share
NORTH, SOUTH = "ｷﾀｶﾝﾄｳ", "ﾐﾅﾐｶﾝﾄｳ"


def _long_customers() -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    customers = [
        {"取引先コード": code, "取引先名": f"株式会社東日本{place}", "取引先名カナ": LONG + tail}
        for code, place, tail in (("3010", "北関東", NORTH), ("3011", "南関東", SOUTH))
    ]
    # Both owe 100,000 and 220,000: the sum less a fee fits either.
    invoices = [
        invoice(f"INV-{c['取引先コード']}-{n}", c["取引先コード"], c["取引先名"], amount)
        for c in customers
        for n, amount in enumerate((100_000, 220_000), start=1)
    ]
    return customers, invoices


def test_a_name_cut_at_30_where_the_names_differ_is_matched_with_two_invoices(
    tmp_path: Path,
) -> None:
    customers, invoices = _long_customers()
    payer = f"ｶ){LONG}{SOUTH}"[:30]
    assert payer.endswith("ﾐﾅﾐｶ")
    out = one_transfer(tmp_path, invoices, payer, 319_340, customers)
    assert matched_pairs(out) == {"1": ["INV-3011-1", "INV-3011-2"]}
    assert set(column(out, "matched", "理由")) == {
        "名義: マスタのカナ（前方一致: 銀行で 30 文字に切れた名前）／金額: 2 件まとめ・手数料差引 (660 円)"
    }


def test_a_name_cut_at_20_inside_the_shared_start_is_for_a_person(tmp_path: Path) -> None:
    customers, invoices = _long_customers()
    payer = f"ｶ){LONG}{NORTH}"[:20]
    out = one_transfer(tmp_path, invoices, payer, 319_340, customers)
    row = only_review(out)
    assert row["理由"].startswith("振込依頼人名が同じくらい合う取引先が 2 社あります")
    assert option_values(out) == ["取引先:3010", "取引先:3011", "該当なし"]


def test_a_name_cut_between_a_kana_and_its_voiced_mark_still_meets(tmp_path: Path) -> None:
    customers, invoices = _long_customers()
    customers.append(
        {
            "取引先コード": "3012",
            "取引先名": "株式会社中央物流",
            "取引先名カナ": "チユウオウ" + LONG,
        }
    )
    invoices.append(invoice("INV-3012-1", "3012", "株式会社中央物流", 55_000))
    cut = f"ｶ)ﾁﾕｳｵｳ{LONG}"[:30]  # the last ｽ of ｽﾞ kept, its ﾞ cut off
    assert cut.endswith("ｼﾖﾝｽ")
    out = one_transfer(tmp_path, invoices, cut, 55_000, customers)
    assert matched_pairs(out) == {"1": ["INV-3012-1"]}


@pytest.mark.parametrize(
    "payer",
    ["ﾔﾏﾀﾞｼﾖｳﾃﾝ ﾀﾞｲﾋﾖｳ ﾔﾏﾀﾞ ﾀﾛｳ", "ﾔﾏﾀﾞｼﾖｳﾃﾝ ﾀﾞｲﾋﾖｳｼﾔ ﾔﾏﾀﾞ ﾀﾛｳ", "ﾔﾏﾀﾞ ﾀﾛｳ(ﾔﾏﾀﾞｼﾖｳﾃﾝ"],
)
def test_a_sole_proprietor_is_found_by_its_trade_name_or_its_owner(
    tmp_path: Path, payer: str
) -> None:
    for code, name in (("3015", "山田商店"), ("3016", "山田太郎")):
        shop = {"取引先コード": code, "取引先名": name, "取引先名カナ": ""}
        out = _pays(tmp_path, shop, payer, 110_000)
        assert matched_pairs(out) == {"1": ["INV-1"]}
        assert column(out, "matched", "理由") == [
            "名義: 読み（屋号か代表者の名前で一致）／金額: 一致"
        ]


@pytest.mark.parametrize("payer", ["ﾔﾏﾀﾞｼﾖｳﾃﾝ", "ﾔﾏﾀﾞ ﾀﾛｳ", "ﾔﾏﾀﾞｼﾖｳﾃﾝ ﾔﾏﾀﾞ ﾀﾛｳ"])
def test_a_master_holding_trade_name_and_owner_finds_either(tmp_path: Path, payer: str) -> None:
    for name in ("山田商店（山田太郎）", "山田商店 代表 山田太郎", "山田太郎（山田商店）"):
        shop = {"取引先コード": "3015", "取引先名": name, "取引先名カナ": ""}
        out = _pays(tmp_path, shop, payer, 110_000)
        assert matched_pairs(out) == {"1": ["INV-1"]}, name


def test_a_company_with_its_branch_in_parentheses_is_not_a_trade_name(tmp_path: Path) -> None:
    shop = {"取引先コード": "3017", "取引先名": "青葉商事（大阪支店）", "取引先名カナ": ""}
    out = _pays(tmp_path, shop, "ｵｵｻｶｼﾃﾝ", 110_000)
    assert out["matched"] == []


def _small_kana() -> list[tuple[str, str]]:
    """Every small kana in Unicode (katakana, hiragana, half-width) and its large letter, found
    by the characters' names, not by the product's table."""
    pairs = []
    for code in [*range(0x3041, 0x3097), *range(0x30A1, 0x30FB), *range(0xFF67, 0xFF70)]:
        name = unicodedata.name(chr(code), "")
        if " SMALL " in name:
            large = name.replace("SMALL ", "").replace("HALFWIDTH ", "")
            pairs.append((chr(code), unicodedata.lookup(large)))
    return pairs


def test_every_small_kana_is_its_large_kana_as_banks_write_it() -> None:
    pairs = _small_kana()
    assert len(pairs) >= 30
    for small, large in pairs:
        assert fold(f"ﾔﾏ{small}ﾀﾞ") == fold(f"ﾔﾏ{large}ﾀﾞ"), (small, large)
    # The sounds banks and people write either way.
    for one, other in (("ﾁﾞ", "ｼﾞ"), ("ﾂﾞ", "ｽﾞ"), ("ｦ", "ｵ"), ("ヂ", "じ"), ("ヅ", "ず")):
        assert fold(one) == fold(other)
    for mark in ("-", "ｰ", "‐", "－", "―", "─", "ー", "〜"):
        assert fold(f"ｺ{mark}ﾋ{mark}") == "コーヒー", mark
