"""入金消込 on payer names and amounts in shapes the month tests do not write: never a wrong match.

The cases come from ``tests/support/bank_shapes.py`` (look-alike customers, sister and parent
companies written after a customer's name, branches without a form, spaces, forms spelled out,
full-width and mixed kana, payers' own codes, narrow cuts, a name filling the 全銀 field, a
customer's own fee, one yen off, two invoices within a fee of each other), from
``tests/support/bank_spellings.py`` (its misses are tested one by one in
``test_match_payments_spellings.py``) and from ``tests/support/bank_groups.py`` (branches and
offices billed as customers of their own, forms in every position, office abbreviations,
representatives' titles, a parent paying, every bank fee, 分割・過入金・前受; its wrong matches
one by one in ``test_match_payments_groups.py``) and from ``tests/support/bank_separators.py``
(a period, a middle dot or a slash where a parenthesis or a space belongs; its misses in
``test_match_payments_separators.py``). The property: no
transfer is matched to another customer or other invoices than it paid (it may be 要確認 or
不明入金), and every transfer whose shape the product promises to read is matched. Then one test
per kind of wrong match the generator found, each with the reason a person reads.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.blocks.payments_support import (
    check_property,
    column,
    deposit,
    invoice,
    match,
    matched_pairs,
    only_review,
    option_values,
)
from tests.support import bank_groups, bank_separators, bank_shapes, bank_spellings

# Each property run matches a few hundred generated months: minutes on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(600)

# Every generator of bank-written cases: its cases, how many per seed, the shapes it must draw.
GENERATORS: dict[str, tuple[Callable[[int, int], list[Any]], int, tuple[str, ...]]] = {
    "shapes": (
        bank_shapes.cases,
        200,
        ("sister", "branch_bare", "cut_48", "near_fee", "combined_fee", "installments"),
    ),
    "spellings": (  # tests/support/bank_spellings.py, its misses in test_match_payments_spellings
        bank_spellings.cases,
        150,
        (
            "cut:20",
            "cut:30",
            "first_open",
            "middle_open",
            "mark:none",
            "combined_fee",
            "sister",
            "proprietor_trade_owner_word",
            "proprietor_owner",
            "first_period",
        ),
    ),
    "groups": (  # tests/support/bank_groups.py, its misses in test_match_payments_groups
        bank_groups.cases,
        120,
        (
            "branch_customer",
            "branch_unheld",
            "parent",
            "parent_held",
            "middle",
            "middle_open",
            "middle_office_short",
            "spaced_office_short",
            "title",
            "prepaid",
            "installments",
            "over_fee",
            "overpaid",
            "twice",
        ),
    ),
    "separators": (  # tests/support/bank_separators.py, its misses in test_match_payments_separators
        bank_separators.cases,
        150,
        (
            "first_whole_period",
            "last_words_dot",
            "middle_words_period",
            "middle_whole_slash",
            "branch",
            "branch_unheld",
            "twin",
            "stranger",
            "unheld_sister",
        ),
    ),
}


@pytest.mark.parametrize(
    ("generator", "seed"),
    [
        ("shapes", 1035),
        ("shapes", 2035),
        ("spellings", 3511),
        ("spellings", 3512),
        ("groups", 3535),
        ("groups", 3536),
        ("separators", 4101),
        ("separators", 4102),
    ],
)
def test_no_bank_written_name_or_amount_is_matched_to_anyone_else(
    tmp_path: Path, generator: str, seed: int
) -> None:
    cases, count, shapes = GENERATORS[generator]
    counts = check_property(tmp_path, cases(seed, count), shapes)
    assert counts["transfers"] >= count


# --- the wrong matches the generator found, one by one -------------------------------------

AOBA = ("2001", "株式会社青葉商事")
AOBA_KANA = {
    "取引先コード": "2001",
    "取引先名": "株式会社青葉商事",
    "取引先名カナ": "アオバショウジ",
}


def _aoba_pays(tmp_path: Path, payer: str, amount: int) -> dict[str, Any]:
    """One transfer from ``payer`` against 青葉商事's invoice INV-1 of 110,000 円."""
    return match(
        tmp_path,
        [invoice("INV-1", *AOBA, 110_000)],
        [deposit("1", payer, amount)],
        customers=[AOBA_KANA],
    )


@pytest.mark.parametrize("payer", ["ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾘｰｽ", "ｱｵﾊﾞｼﾖｳｼﾞ ﾎｰﾙﾃﾞｲﾝｸﾞｽ(ｶ"])
def test_a_company_named_after_a_customer_is_proposed_never_matched(
    tmp_path: Path, payer: str
) -> None:
    # 青葉商事リース / 青葉商事ホールディングス: a sister or a parent company, another payer.
    out = _aoba_pays(tmp_path, payer, 110_000)
    row = only_review(out)
    assert row["理由"].startswith("振込依頼人名の先頭の語が取引先の名前と同じですが")
    assert "2001 株式会社青葉商事（マスタのカナ（先頭の語だけ一致））" in row["候補"]
    assert column(out, "unpaid", "請求番号") == ["INV-1"]


@pytest.mark.parametrize("payer", ["ｱｵﾊﾞｼﾖｳｼﾞ ｵｵｻｶｼﾃﾝ", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ｹｲﾘﾌﾞ"])
def test_a_branch_after_the_name_is_not_the_name_with_or_without_a_form(
    tmp_path: Path, payer: str
) -> None:
    out = _aoba_pays(tmp_path, payer, 109_340)
    assert matched_pairs(out) == {"1": ["INV-1"]}
    assert column(out, "matched", "理由") == [
        "名義: マスタのカナ（後ろの支店名などを除いて一致）／金額: 手数料差引 (660 円)"
    ]


def test_two_invoices_within_a_fee_of_each_other_are_for_a_person(tmp_path: Path) -> None:
    # 109,340 is INV-1 less 660 or INV-2 less 860: the due date does not tell which.
    invoices = [
        invoice("INV-1", *AOBA, 110_000, due="2026-01-31"),
        invoice("INV-2", *AOBA, 110_200, due="2026-02-28"),
    ]
    out = match(tmp_path, invoices, [deposit("1", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 109_340)])
    row = only_review(out)
    assert (
        "振込手数料を差し引いて合う 1 件の請求が 2 通りあり、差し引かれた額がそれぞれ違う"
        in (row["理由"])
    )
    assert option_values(out) == ["請求:INV-1", "請求:INV-2", "該当なし"]


def test_equal_invoices_paid_less_the_same_fee_still_go_oldest_first(tmp_path: Path) -> None:
    invoices = [
        invoice("INV-2", *AOBA, 110_000, due="2026-02-28"),
        invoice("INV-1", *AOBA, 110_000, due="2026-01-31"),
    ]
    out = match(tmp_path, invoices, [deposit("1", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 109_340)])
    assert matched_pairs(out) == {"1": ["INV-1"]}


def test_a_name_filling_the_field_may_be_a_longer_name_cut(tmp_path: Path) -> None:
    # ｶ) and the first customer's kana are exactly 48 half-width characters: the bank wrote the
    # second customer's name cut at 48, or the first one's whole; nobody can tell.
    short_kana = "ヒガシニホンロジスティクスソリューションズキタカントウトチギグンマイバラキソウコ"
    customers = [
        {"取引先コード": "2019", "取引先名": "株式会社東日本物流倉庫", "取引先名カナ": short_kana},
        {
            "取引先コード": "2020",
            "取引先名": "株式会社東日本物流倉庫管理",
            "取引先名カナ": short_kana + "カンリ",
        },
    ]
    payer = "ｶ)ﾋｶﾞｼﾆﾎﾝﾛｼﾞｽﾃｲｸｽｿﾘﾕｰｼﾖﾝｽﾞｷﾀｶﾝﾄｳﾄﾁｷﾞｸﾞﾝﾏｲﾊﾞﾗｷｿｳｺ"
    assert len(payer) == 48
    invoices = [
        invoice("INV-1", "2019", "株式会社東日本物流倉庫", 330_000),
        invoice("INV-2", "2020", "株式会社東日本物流倉庫管理", 330_000),
    ]
    out = match(tmp_path, invoices, [deposit("1", payer, 330_000)], customers=customers)
    row = only_review(out)
    assert row["理由"].startswith("振込依頼人名が同じくらい合う取引先が 2 社あります")
    assert row["候補数"] == 2
