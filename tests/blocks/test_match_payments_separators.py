"""入金消込 on payer names written with a period, a middle dot or a slash where banks write a
parenthesis or a space (``ｱｵﾊﾞｼﾖｳｼﾞ.ｶ.ｵｵｻｶｼﾃﾝ``, ``ｶ.ｱｵﾊﾞ.ｼﾖｳｼﾞ``, ``ﾕ･ｻｸﾗｻﾝｷﾞﾖｳ``,
``ｱｵﾊﾞｼﾖｳｼﾞ/ｶ``). The generator is ``tests/support/bank_separators.py`` (look-alike customers:
the same name with another legal form, another word after the same stem, a sister, a parent,
branches held or not); its property runs in ``test_match_payments_shapes.py``. Before the
separators were read, 171 of its 349 promised transfers (seeds 4101–4104) were 要確認 or 不明入金:
the form between separators was read as part of the name. Here: one test per kind of miss,
each with the outcome a person reads, and the look-alikes that must stay apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.table.names import PayerName
from tests.blocks import payments_support as pay

AOBA = {"取引先コード": "2001", "取引先名": "株式会社青葉商事", "取引先名カナ": "アオバショウジ"}
AOBA_YU = {"取引先コード": "2002", "取引先名": "有限会社青葉商事", "取引先名カナ": "ｱｵﾊﾞｼﾖｳｼﾞ"}
AOBA_OSAKA = {
    "取引先コード": "2003",
    "取引先名": "株式会社青葉商事 大阪支店",
    "取引先名カナ": "アオバショウジ オオサカシテン",
}
AOBA_LEASE = {"取引先コード": "2004", "取引先名": "青葉商事リース株式会社", "取引先名カナ": ""}


def _owe(tmp_path: Path, payer: str, amount: int, *customers: dict[str, str]) -> dict[str, Any]:
    """One transfer from ``payer`` while each of ``customers`` owes 110,000 円 (INV-<code>)."""
    invoices = [
        pay.invoice(f"INV-{c['取引先コード']}", c["取引先コード"], c["取引先名"], 110_000)
        for c in customers
    ]
    return pay.match(
        tmp_path, invoices, [pay.deposit("1", payer, amount)], customers=list(customers)
    )


@pytest.mark.parametrize(
    "payer",
    ["ｱｵﾊﾞｼﾖｳｼﾞ.ｶ.ｵｵｻｶｼﾃﾝ", "ｱｵﾊﾞ.ｼﾖｳｼﾞ.ｶ.ｵｵｻｶｼﾃﾝ", "ｱｵﾊﾞｼﾖｳｼﾞ･ｶ･ｵｵｻｶｼﾃﾝ", "ｱｵﾊﾞｼﾖｳｼﾞ/ｶ/ｵｵｻｶｼﾃﾝ"],
)
def test_a_form_between_separators_before_a_branch_is_the_form(tmp_path: Path, payer: str) -> None:
    out = _owe(tmp_path, payer, 109_340, AOBA, AOBA_YU, AOBA_OSAKA)
    assert pay.matched_pairs(out) == {"1": ["INV-2003"]}
    assert pay.column(out, "matched", "理由") == ["名義: マスタのカナ／金額: 手数料差引 (660 円)"]


@pytest.mark.parametrize("payer", ["ｱｵﾊﾞｼﾖｳｼﾞ.ｶ.ﾅｺﾞﾔｼﾃﾝ", "ｶ.ｱｵﾊﾞｼﾖｳｼﾞ.ﾅｺﾞﾔｼﾃﾝ", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ/ﾅｺﾞﾔｼﾃﾝ"])
def test_a_branch_the_master_does_not_hold_after_a_separator_is_the_company(
    tmp_path: Path, payer: str
) -> None:
    out = _owe(tmp_path, payer, 110_000, AOBA, AOBA_YU, AOBA_OSAKA)
    assert pay.matched_pairs(out) == {"1": ["INV-2001"]}
    assert pay.column(out, "matched", "理由") == [
        "名義: マスタのカナ（後ろの支店名などを除いて一致）／金額: 一致"
    ]


@pytest.mark.parametrize(
    ("payer", "paid"),
    [
        ("ｶ･ｱｵﾊﾞｼﾖｳｼﾞ", "INV-2001"),
        ("ｶ.ｱｵﾊﾞ.ｼﾖｳｼﾞ", "INV-2001"),
        ("ｱｵﾊﾞｼﾖｳｼﾞ/ｶ", "INV-2001"),
        ("ﾕ･ｱｵﾊﾞｼﾖｳｼﾞ", "INV-2002"),
        ("ｱｵﾊﾞ.ｼﾖｳｼﾞ.ﾕ", "INV-2002"),
    ],
)
def test_the_form_between_separators_tells_two_companies_of_one_name_apart(
    tmp_path: Path, payer: str, paid: str
) -> None:
    out = _owe(tmp_path, payer, 110_000, AOBA, AOBA_YU)
    assert pay.matched_pairs(out) == {"1": [paid]}


@pytest.mark.parametrize("payer", ["ｶ.ｱｵﾊﾞｼﾖｳｼﾞ.ﾘｰｽ", "ｱｵﾊﾞ･ｼﾖｳｼﾞ･ﾎｰﾙﾃﾞｲﾝｸﾞｽ･ｶ"])
def test_a_company_named_after_a_customer_behind_a_separator_is_proposed_never_matched(
    tmp_path: Path, payer: str
) -> None:
    out = _owe(tmp_path, payer, 110_000, AOBA)
    row = pay.only_review(out)
    assert row["理由"].startswith("振込依頼人名の先頭の語が取引先の名前と同じですが")
    assert pay.column(out, "unpaid", "請求番号") == ["INV-2001"]


def test_a_sister_company_the_master_holds_is_matched_by_its_own_name(tmp_path: Path) -> None:
    out = _owe(tmp_path, "ｱｵﾊﾞ.ｼﾖｳｼﾞ.ﾘｰｽ.ｶ", 110_000, AOBA, AOBA_LEASE)
    assert pay.matched_pairs(out) == {"1": ["INV-2004"]}


@pytest.mark.parametrize(
    ("raw", "name", "form"),
    [
        ("ｴｽ.ｹｲ.ｼﾖｳｼﾞ", "エスケイシヨウジ", None),  # no abbreviation between the separators
        ("ｴｽ･ｹｲ･ｼﾖｳｼﾞ.ｶ", "エスケイシヨウジ", "カ"),
        ("ﾕ/ｻｸﾗ/ｻﾝｷﾞﾖｳ", "サクラサンギヨウ", "ユ"),
    ],
)
def test_only_an_abbreviation_between_separators_is_a_form(
    raw: str, name: str, form: str | None
) -> None:
    payer = PayerName.parse(raw)
    assert payer.name == name
    assert (payer.form.abbreviation if payer.form else None) == form
