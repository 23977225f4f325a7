"""入金消込 on payer names spelled as banks and statement exports spell them, beyond the shapes
of ``test_match_payments_shapes``: a form closed by a space or spelled out, long marks written
any way or left out (on either side), small kana, ヂ/ヅ written ジ/ズ, names cut at 48, 30 or 20
characters (inside a form, inside a voiced kana), まとめ入金 with a fee while look-alike
customers owe the same amounts. The property: no transfer is matched to another customer or
other invoices than it paid, and every transfer the product promises to read is matched. Then
one test per kind of miss the generator found, each with the outcome a person reads.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.blocks.payments_support import deposit, match, matched_pairs
from tests.support.bank_spellings import Case, cases

CASES_PER_SEED = 150


def _deposits(case: Case) -> list[dict[str, Any]]:
    return [
        deposit(str(n + 1), t.payer, t.amount, f"2026-06-{10 + n:02d}")
        for n, t in enumerate(case.transfers)
    ]


def judge(tmp_path: Path, seed: int) -> tuple[Counter[str], list[str], list[str]]:
    """Counts, wrong matches and promised misses of the cases of ``seed``."""
    counts: Counter[str] = Counter()
    wrong: list[str] = []
    missed: list[str] = []
    for case in cases(seed, CASES_PER_SEED):
        out = match(tmp_path, case.invoices, _deposits(case), customers=case.master)
        cleared = matched_pairs(out)
        customer = {str(r["照会番号"]): r["取引先コード"] for r in out["matched"]}
        for number, transfer in enumerate(case.transfers, start=1):
            truth, reference = transfer.truth, str(number)
            counts["transfers"] += 1
            counts["promised"] += truth.promised
            for part in truth.shape.split("/"):
                counts[part] += 1
            if reference in cleared:
                counts["matched"] += 1
                right = (
                    truth.code == customer[reference]
                    and tuple(cleared[reference]) in truth.acceptable
                )
                if not right:
                    wrong.append(f"{transfer} → {customer[reference]} {cleared[reference]}")
            elif truth.promised:
                missed.append(str(transfer))
    return counts, wrong, missed


@pytest.mark.parametrize("seed", [3511, 3512])
def test_no_spelling_of_a_payer_is_matched_to_anyone_else_and_promised_ones_are_found(
    tmp_path: Path, seed: int
) -> None:
    counts, wrong, missed = judge(tmp_path, seed)
    assert wrong == [], f"{len(wrong)} wrong of {counts}"
    assert missed == [], f"{len(missed)} missed of {counts}"
    assert counts["promised"] >= counts["transfers"] // 3  # the property is not empty
    for shape in ("cut:20", "cut:30", "first_open", "middle_open", "mark:none", "combined_fee"):
        assert counts[shape] > 0, shape
