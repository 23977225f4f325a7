"""The bounded subset search of 入金消込 finds exactly the sets a brute force finds, and the
due-date rule chooses only when one set is the oldest at every place."""

from __future__ import annotations

import datetime as dt
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from keiri_agent.blocks.table.payments.allocation import allocate
from keiri_agent.blocks.table.payments.model import AmountKind, Invoice
from keiri_agent.blocks.table.payments.search import MAX_SETS, invoice_sets, oldest

DUES = [dt.date(2026, 1, 31), dt.date(2026, 2, 28), dt.date(2026, 3, 31), None]


def invoices(balances: list[int], dues: list[dt.date | None] | None = None) -> list[Invoice]:
    dues = dues or [DUES[n % len(DUES)] for n in range(len(balances))]
    return [
        Invoice(n, n, f"INV-{n}", "C", b, b, due)
        for n, (b, due) in enumerate(zip(balances, dues, strict=True))
    ]


@settings(max_examples=200, deadline=None)
@given(
    balances=st.lists(st.integers(1, 60), min_size=0, max_size=9),
    size=st.integers(1, 4),
    low=st.integers(1, 150),
    width=st.integers(0, 10),
)
def test_the_search_finds_what_a_brute_force_finds(
    balances: list[int], size: int, low: int, width: int
) -> None:
    items = invoices(balances)
    found = invoice_sets(items, size, low, low + width)
    expected = {
        tuple(i.number for i in combo)
        for combo in itertools.combinations(items, size)
        if low <= sum(i.balance for i in combo) <= low + width
    }
    got = {tuple(i.number for i in s) for s in found.sets}
    if found.complete:
        assert got == expected
    else:  # cut short: only sets that fit, and more than can be shown
        assert got <= expected
        assert len(expected) > MAX_SETS


def test_the_oldest_set_is_chosen_only_when_it_is_oldest_at_every_place() -> None:
    jan, feb, mar = DUES[:3]
    a, b, c, d = invoices([10, 10, 10, 10], [jan, feb, mar, feb])
    assert oldest([(b,), (a,), (c,)]) == (a,)  # the January invoice
    assert oldest([(b,), (d,)]) is None  # two February invoices: nobody can tell
    assert oldest([(a, c), (b, d)]) is None  # January+March against February+February
    assert oldest([(a, b), (a, c), (b, c)]) == (a, b)


def test_a_transfer_is_applied_oldest_first() -> None:
    first, second = invoices([30_000, 50_000])
    partial = allocate([second, first], 40_000, 880)
    assert partial.kind is AmountKind.PARTIAL
    assert [(p.invoice.number, p.cash, p.after) for p in partial.parts] == [
        ("INV-0", 30_000, 0),
        ("INV-1", 10_000, 40_000),
    ]
    assert partial.text == "2 件まとめ・一部入金 (残 40,000 円)"
    fee = allocate([first, second], 79_340, 880)
    assert (fee.kind, fee.fee, [p.difference for p in fee.parts]) == (
        AmountKind.FEE,
        660,
        [0, -660],
    )
