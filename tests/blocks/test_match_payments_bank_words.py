"""入金消込 when the bank's own words stand in the payer-name field (``ﾌﾘｺﾐ ｲﾉｳｴ ﾏﾕﾐ``,
``ﾃﾞﾝｼﾝｶ)ｱｵﾊﾞｼﾖｳｼﾞ``, ``ｻﾄｳﾃﾞﾝｷ(ﾕ ﾃｽｳﾘﾖｳ``): never a wrong match, and a known customer's
name beside such a word is found.

Each case is a master of people (common surnames and given names, 取引先名カナ in half-width
or full-width kana; two of one surname) and companies (with or without 取引先名カナ), one open
invoice each, transfers of some customers with ﾌﾘｺﾐ / ﾃﾞﾝｼﾝ / ｶﾞｲﾀﾒ / ATM ... before the name
(spaced, ``*``, a full-width space or glued) or ﾃｽｳﾘﾖｳ / ﾌﾘｺﾐ after it, and transfers of
strangers (a customer's surname with another given name, unknown companies) paying the amount
of another customer's invoice. The lines come from ``tests/support/bank_memo.py``.
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tests.blocks.payments_support import deposit, invoice, match, matched_pairs
from tests.support.bank_memo import COMPANIES, GIVEN, PLACES, SURNAMES, payer_field

CASES_PER_SEED = 25
STRANGER_COMPANIES = ("ｶ)ｱｵﾊﾞｹﾝｾﾂ", "ﾔﾏﾀﾞﾌﾄﾞｳｻﾝ(ﾕ", "ﾄﾞ)ｻｸﾗｼｽﾃﾑ")


def _case(rng: random.Random) -> tuple[list[dict[str, str]], list[Any], list[Any], dict[str, Any]]:
    surnames = rng.sample(SURNAMES, 4)
    people = [(surnames[0], g) for g in rng.sample(GIVEN, 2)]  # two of one family
    people += [(s, rng.choice(GIVEN)) for s in surnames[1:]]
    master: list[dict[str, str]] = []
    payers: list[tuple[str, str]] = []  # (code, as the bank writes the name)
    for n, ((skana, skanji), (gkana, gkanji)) in enumerate(people):
        code = f"P{n:02d}"
        kana = f"{skana} {gkana}"
        written = kana if rng.random() < 0.5 else unicodedata.normalize("NFKC", kana)
        master.append(
            {"取引先コード": code, "取引先名": f"{skanji} {gkanji}", "取引先名カナ": written}
        )
        payers.append((code, kana))
    for n, (name, bank) in enumerate(rng.sample(COMPANIES, 4)):
        code = f"C{n:02d}"
        kana = bank if rng.random() < 0.5 else ""
        master.append({"取引先コード": code, "取引先名": name, "取引先名カナ": kana})
        payers.append((code, bank))
    amounts = rng.sample(range(10_000, 900_000, 1_000), len(payers))
    invoices = [
        invoice(f"INV-{code}", code, row["取引先名"], amount)
        for (code, _), row, amount in zip(payers, master, amounts, strict=True)
    ]
    paying = rng.sample(range(len(payers)), 5)
    deposits: list[Any] = []
    truth: dict[str, Any] = {}
    for index in paying:
        code, name = payers[index]
        field, _ = payer_field(name, rng, rng.choice(PLACES))
        reference = str(len(deposits) + 1)
        deposits.append(deposit(reference, field, amounts[index]))
        truth[reference] = (code, f"INV-{code}", field)
    unpaid = [i for i in range(len(payers)) if i not in paying]
    known = {(s, g) for s, g in people}
    for _ in range(2):  # strangers paying what another customer owes
        if rng.random() < 0.5:
            given = rng.choice([g for g in GIVEN if (surnames[0], g) not in known])
            name = f"{surnames[0][0]} {given[0]}"
        else:
            name = rng.choice(STRANGER_COMPANIES)
        field, _ = payer_field(name, rng, rng.choice(PLACES))
        reference = str(len(deposits) + 1)
        deposits.append(deposit(reference, field, amounts[rng.choice(unpaid)]))
        truth[reference] = (None, None, field)
    return master, invoices, deposits, truth


@pytest.mark.parametrize("seed", [3501, 3502])
def test_bank_words_in_the_payer_field_never_make_a_wrong_match_and_hide_no_customer(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    wrong: list[str] = []
    missed: list[str] = []
    lines = 0
    for number in range(CASES_PER_SEED):
        master, invoices, deposits, truth = _case(rng)
        out = match(tmp_path / str(number), invoices, deposits, customers=master)
        cleared = matched_pairs(out)
        customer = {str(r["照会番号"]): r["取引先コード"] for r in out["matched"]}
        for reference, (code, number_paid, field) in truth.items():
            lines += 1
            if reference in cleared:
                if code != customer[reference] or cleared[reference] != [number_paid]:
                    wrong.append(f"{field!r} → {customer[reference]} {cleared[reference]}")
            elif code is not None:
                missed.append(f"{field!r} ({code})")
    assert wrong == [], f"{len(wrong)} wrong of {lines}:\n" + "\n".join(wrong)
    assert missed == [], f"{len(missed)} missed of {lines}:\n" + "\n".join(missed)


def _cleared(
    tmp_path: Path, customers: list[tuple[str, str, str, int]], payer: str, amount: int
) -> Any:
    """What one transfer clears among customers (code, name, kana, the amount of its invoice)."""
    master = [{"取引先コード": c, "取引先名": n, "取引先名カナ": k} for c, n, k, _ in customers]
    invoices = [invoice(f"INV-{c}", c, n, a) for c, n, _, a in customers]
    out = match(tmp_path, invoices, [deposit("1", payer, amount)], customers=master)
    return matched_pairs(out)


@pytest.mark.parametrize(
    ("payer", "paid"),
    [
        ("ﾌﾘｺﾐｲﾉｳｴ ﾏﾕﾐ", "INV-P1"),
        ("ﾌﾘｺﾐ ｲﾉｳｴ ﾏﾕﾐ", "INV-P1"),
        ("ｲﾉｳｴ ﾏﾕﾐ ﾃｽｳﾘﾖｳ", "INV-P1"),
        ("ﾃﾞﾝｼﾝｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "INV-C1"),
    ],
)
def test_a_customer_beside_a_bank_word_is_matched(tmp_path: Path, payer: str, paid: str) -> None:
    customers = [
        ("P1", "井上 真由美", "ｲﾉｳｴ ﾏﾕﾐ", 30_000),
        ("C1", "株式会社青葉商事", "", 55_000),
    ]
    amount = 30_000 if paid == "INV-P1" else 55_000
    assert _cleared(tmp_path, customers, payer, amount) == {"1": [paid]}


def test_a_customer_whose_name_begins_like_a_bank_word_is_still_found(tmp_path: Path) -> None:
    customers = [
        ("C1", "株式会社ソウキン物流", "ｿｳｷﾝﾌﾞﾂﾘﾕｳ(ｶ", 30_000),
        ("C2", "株式会社物流", "ﾌﾞﾂﾘﾕｳ(ｶ", 30_000),
    ]
    assert _cleared(tmp_path, customers, "ｿｳｷﾝﾌﾞﾂﾘﾕｳ(ｶ", 30_000) == {"1": ["INV-C1"]}
