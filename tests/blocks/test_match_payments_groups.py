"""入金消込 when a company's branches and offices are customers of their own: one test per kind of
wrong match or miss the generator ``tests/support/bank_groups.py`` found (its property runs in
``test_match_payments_shapes.py`` beside the other generators'), each with what a person reads.

Every entity of the group owes the same amount here, so only the payer's name can tell who paid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.blocks import payments_support as support
from tests.blocks.payments_support import invoice, matched_pairs, one_transfer

HEAD = {"取引先コード": "3000", "取引先名": "青葉商事株式会社", "取引先名カナ": "アオバショウジ"}
OSAKA = {
    "取引先コード": "3001",
    "取引先名": "青葉商事株式会社 大阪支店",
    "取引先名カナ": "アオバショウジ オオサカシテン",
}
NAGOYA = {
    "取引先コード": "3002",
    "取引先名": "青葉商事株式会社 名古屋営業所",
    "取引先名カナ": "ｱｵﾊﾞｼﾖｳｼﾞ ﾅｺﾞﾔｴｲｷﾞﾖｳｼﾖ",
}


def _group_pays(tmp_path: Path, payer: str, amount: int, owing: list[dict[str, str]]) -> Any:
    """``payer`` sends ``amount`` while each of ``owing`` has one invoice of 220,000 円."""
    invoices = [
        invoice(f"INV-{c['取引先コード']}", c["取引先コード"], c["取引先名"], 220_000)
        for c in owing
    ]
    return one_transfer(tmp_path, invoices, payer, amount, customers=[HEAD, OSAKA, NAGOYA])


@pytest.mark.parametrize(
    ("payer", "invoice_number"),
    [
        ("ｱｵﾊﾞｼﾖｳｼﾞ(ｶ)ｵｵｻｶｼﾃﾝ", "INV-3001"),  # 青葉商事株式会社大阪支店, the 全銀 way
        ("ｱｵﾊﾞｼﾖｳｼﾞ(ｶ ｵｵｻｶｼﾃﾝ", "INV-3001"),  # the middle form closed by a space
        ("ｱｵﾊﾞｼﾖｳｼﾞ(ｶ)ﾅｺﾞﾔ(ｴｲ", "INV-3002"),  # 営業所 written short
        ("ｱｵﾊﾞｼﾖｳｼﾞ(ｶ)ﾅｺﾞﾔｴｲｷﾞﾖｳｼﾖ", "INV-3002"),
        ("ｱｵﾊﾞｼﾖｳｼﾞ(ｶ ﾅｺﾞﾔ(ｴｲ", "INV-3002"),
    ],
)
def test_a_branch_written_after_a_middle_form_is_the_branch_not_its_head_office(
    tmp_path: Path, payer: str, invoice_number: str
) -> None:
    # The middle form's branch was dropped before: the head office's invoice was cleared.
    out = _group_pays(tmp_path, payer, 220_000, [HEAD, OSAKA, NAGOYA])
    assert matched_pairs(out) == {"1": [invoice_number]}
    assert support.column(out, "matched", "理由") == ["名義: マスタのカナ／金額: 一致"]


@pytest.mark.parametrize("payer", ["ｱｵﾊﾞｼﾖｳｼﾞ(ｶ)ﾅｺﾞﾔ(ｴｲ", "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ)ｵｵｻｶｼﾃﾝ"])
def test_a_branch_with_nothing_open_does_not_take_its_head_offices_invoice(
    tmp_path: Path, payer: str
) -> None:
    # 前受 or a double payment of the branch; the head office owes the very amount.
    out = _group_pays(tmp_path, payer, 220_000, [HEAD])
    assert out["matched"] == []
    assert support.column(out, "unpaid", "請求番号") == ["INV-3000"]
    assert "この取引先の未入金の請求がありません" in out["unknown"][0]["理由"]


@pytest.mark.parametrize(
    "payer",
    [
        "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ ﾌｸｵｶ(ｴｲ",  # an office the master does not hold, written short
        "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ)ｾﾝﾀﾞｲ(ｼﾕﾂ",  # 出張所
        "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ ﾀﾞｲﾋﾖｳﾄﾘｼﾏﾘﾔｸ ﾔﾏﾀﾞ ﾀﾛｳ",  # the account holds the representative's name
        "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ ﾄﾘｼﾏﾘﾔｸｼﾔﾁﾖｳ ｽｽﾞｷ ﾊﾅｺ",
    ],
)
def test_an_unheld_office_or_a_representative_after_the_name_is_the_company(
    tmp_path: Path, payer: str
) -> None:
    # Proposals only before (the word before (ｴｲ, or the title, was no branch word).
    out = _group_pays(tmp_path, payer, 219_340, [HEAD, OSAKA, NAGOYA])
    assert matched_pairs(out) == {"1": ["INV-3000"]}
    assert support.column(out, "matched", "理由") == [
        "名義: マスタのカナ（後ろの支店名などを除いて一致）／金額: 手数料差引 (660 円)"
    ]


def test_a_title_of_an_organization_is_not_the_name_of_a_person(tmp_path: Path) -> None:
    clinic = {"取引先コード": "3100", "取引先名": "医療法人社団 さくら会", "取引先名カナ": ""}
    invoices = [invoice("INV-1", "3100", "医療法人社団 さくら会", 55_000)]
    out = one_transfer(tmp_path, invoices, "ｲ)ｻｸﾗｶｲ ﾘｼﾞﾁﾖｳ ｻﾄｳ ｹﾝｲﾁ", 54_835, customers=[clinic])
    assert matched_pairs(out) == {"1": ["INV-1"]}


def test_a_branch_of_a_name_one_long_mark_from_another_is_for_a_person(tmp_path: Path) -> None:
    # ﾋﾞﾙｻﾋﾞｽ is ビルサビス written as it is and ビールサービス without its long marks; its
    # branch said ビルサビス alone before, and that customer's invoice was cleared.
    customers = [
        {"取引先コード": "3004", "取引先名": "株式会社ビルサビス", "取引先名カナ": "ビルサビス"},
        {"取引先コード": "3005", "取引先名": "ビールサービス株式会社", "取引先名カナ": ""},
    ]
    invoices = [
        invoice("INV-4", "3004", "株式会社ビルサビス", 110_000),
        invoice("INV-5", "3005", "ビールサービス株式会社", 110_000),
    ]
    for payer in ("ﾋﾞﾙｻﾋﾞｽ(ｶ ｵｵｻｶｼﾃﾝ", "ｶ)ﾋﾞﾙｻﾋﾞｽ ｵｵｻｶｼﾃﾝ"):
        out = one_transfer(tmp_path, invoices, payer, 110_000, customers=customers)
        row = support.only_review(out)
        assert row["理由"].startswith("振込依頼人名が同じくらい合う取引先が 2 社あります")
        assert support.option_values(out) == ["取引先:3004", "取引先:3005", "該当なし"]
