"""Sets of open invoices whose balances add up to a transfer, found within a bound.

:func:`invoice_sets` finds every set of exactly ``size`` invoices whose balances sum to between
``low`` and ``high`` yen (a transfer, or the transfer plus a bank fee). The invoices are taken
in order of balance and the sets built depth first; a branch stops as soon as its smallest
possible sum is above ``high`` or its largest below ``low``, so sets far from the transfer are
never built, and the last invoice of a set is found by bisection. The work is bounded twice: at most :data:`MAX_SETS` sets are kept and at most
:data:`MAX_STEPS` partial sets tried per search; a search cut short says so (``complete``
False) and the caller does not choose from it.

:func:`oldest` chooses among equally good sets (the same size, the same kind of agreement):
the set whose due dates, oldest first, are each no later than those of every other set
(customers pay their oldest invoices first). When no set is that, two sets are equally good
and nobody can tell which one the customer paid: None.
"""

from __future__ import annotations

import datetime as dt
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from keiri_agent.blocks.table.payments.model import Invoice

__all__ = ["MAX_SETS", "MAX_STEPS", "Found", "Window", "invoice_sets", "oldest"]

# Sets kept from one search: more sets that fit a transfer than a person can compare.
MAX_SETS = 20
# Partial sets tried in one search: 30 invoices taken 4 at a time is 27,405 sets, of which the
# first three are at most 4,060 partial sets (the fourth is found by bisection); the pruning by
# sums visits far fewer for real amounts, this bounds the worst case to a few milliseconds.
MAX_STEPS = 20_000


@dataclass(frozen=True, slots=True)
class Found:
    sets: tuple[tuple[Invoice, ...], ...]  # each oldest first
    complete: bool  # False: cut short by MAX_SETS or MAX_STEPS


class Window:
    """Invoices made ready for the search once (by balance, with running sums), for every
    set size asked about one transfer."""

    def __init__(self, invoices: Sequence[Invoice]) -> None:
        self.items = sorted(invoices, key=lambda i: (i.balance, i.order))
        self.balances = [i.balance for i in self.items]
        self.prefix = [0]
        for balance in self.balances:
            self.prefix.append(self.prefix[-1] + balance)

    def __len__(self) -> int:
        return len(self.items)

    def sets(self, size: int, low: int, high: int) -> Found:
        """Every set of ``size`` invoices whose balances sum to ``low``..``high`` yen."""
        items, balances, prefix = self.items, self.balances, self.prefix
        count = len(items)
        if size < 1 or size > count:
            return Found((), True)
        found: list[tuple[Invoice, ...]] = []
        steps = 0
        complete = True
        chosen: list[int] = []

        def walk(start: int, left: int, total: int) -> None:
            nonlocal steps, complete
            if left == 1:
                # The last invoice: every balance in range, found by bisection.
                first = bisect_left(balances, low - total, start)
                last = bisect_right(balances, high - total, first)
                steps += 1
                for index in range(first, last):
                    picked = [items[i] for i in chosen] + [items[index]]
                    found.append(tuple(sorted(picked, key=_order)))
                    if len(found) > MAX_SETS:
                        complete = False
                        return
                return
            # The largest sum still possible takes the ``left`` largest balances.
            if total + prefix[count] - prefix[count - left] < low:
                return
            for index in range(start, count - left + 1):
                if not complete:
                    return
                steps += 1
                if steps > MAX_STEPS:
                    complete = False
                    return
                smallest = total + prefix[index + left] - prefix[index]
                if smallest > high:
                    return  # balances only grow from here
                chosen.append(index)
                walk(index + 1, left - 1, total + balances[index])
                chosen.pop()

        walk(0, size, 0)
        return Found(tuple(found[:MAX_SETS]), complete)


def invoice_sets(invoices: Sequence[Invoice], size: int, low: int, high: int) -> Found:
    """Every set of ``size`` of ``invoices`` whose balances sum to ``low``..``high`` yen."""
    return Window(invoices).sets(size, low, high)


def oldest(sets: Sequence[tuple[Invoice, ...]]) -> tuple[Invoice, ...] | None:
    """The set paying the oldest invoices, if one is older than every other set at every
    place (see the module docstring); None when two sets are equally good."""
    if not sets:
        return None
    keyed = sorted(((_dates(s), s) for s in sets), key=lambda pair: pair[0])
    first_dates, first = keyed[0]
    for dates, _ in keyed[1:]:
        if dates == first_dates or any(a > b for a, b in zip(first_dates, dates, strict=True)):
            return None
    return first


def _order(invoice: Invoice) -> int:
    return invoice.order


def _dates(invoices: tuple[Invoice, ...]) -> tuple[dt.date, ...]:
    return tuple(sorted(i.due_key for i in invoices))
