"""Carried balances and totals labelled as books label them (``tests/support/ledger_carries``):
every carry written in 収入/支出 is set aside and named a carry, every total set aside and named
a total (the ledger agent's notes tell them apart by the label, ``is_carry_label``), and the
money columns of the data sum to the entries alone.

Property ("a 繰越 row is never summed as money moved, a 合計 never named a carry"): 前月繰越金,
前年度繰越金, 繰越金, 前期からの繰越, ``*** 前月繰越 ***``, ``前月繰越（2月分）`` are carries;
小計, 合計, 総合計, 計, 月計, 累計 are totals.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from keiri_agent.documents.table_totals import is_carry_label
from keiri_agent.documents.tables import read_table
from tests.support.ledger_carries import FILES, cash_book

SEEDS = 60


def outcome(seed: int, form: str) -> str:
    """``right``; ``summed`` (a carry left among the data: its amount counted as money moved);
    ``misnamed`` (set aside, but named a total for a carry or a carry for a total)."""
    drawn, data, name = cash_book(seed, form)
    result = read_table(data, name=name)
    sums = [pd.to_numeric(result.df[c], errors="coerce").fillna(0).sum() for c in ("収入", "支出")]
    if sums != [drawn.inflow, drawn.outflow]:
        return "summed"
    labels = [t["label"] for t in result.info.totals]
    carries = [label for label in labels if is_carry_label(label)]
    totals = [label for label in labels if not is_carry_label(label)]
    if (len(carries), len(totals)) != (len(drawn.carries), len(drawn.totals)):
        return "misnamed"
    return "right"


def measure(seeds: int = SEEDS) -> Counter[str]:
    return Counter(outcome(seed, form) for seed in range(seeds) for form in FILES)


@pytest.mark.parametrize("form", FILES)
def test_every_carry_is_set_aside_and_named_a_carry(form: str) -> None:
    bad = {seed: outcome(seed, form) for seed in range(SEEDS)}
    assert {s: o for s, o in bad.items() if o != "right"} == {}
