"""Which open invoices of a known customer a transfer pays, or why that cannot be told.

For a customer and a transfer of A yen (:func:`choose`), sets of open invoices are tried from
the smallest up to ``max_combined`` invoices; at each size a set whose balances add up to A
exactly comes before one that adds up to A plus a bank fee (up to ``tolerance`` yen):

1. one invoice: every open invoice of the customer (by bisection on its balances);
2. two or more (まとめ入金): among the customer's :data:`MAX_WINDOW` oldest open invoices
   (:class:`..search.Window`).

The smallest size with a set decides. Several sets of that size: the one paying the oldest
invoices (:func:`..search.oldest`), else the line is for a person. The due dates decide only
between sets of one total (equal invoices, the same fee): sets that fit less a fee but leave
different fees (109,340 is 110,000 less 660 or 110,200 less 860) are two readings of the
transfer, and so is a fee set while a larger exact set also fits: for a person. With no set:

- the transfer is more than everything open (at most ``max_combined`` invoices): all are
  cleared and the rest kept as 過入金;
- the customer has one open invoice: the transfer is applied to it and the rest stays open
  (一部入金);
- else which invoice a part payment is for cannot be told: a person chooses.
"""

from __future__ import annotations

from dataclasses import dataclass

from keiri_agent.blocks.table.payments.allocation import allocate
from keiri_agent.blocks.table.payments.book import OpenInvoices
from keiri_agent.blocks.table.payments.model import Allocation, Invoice
from keiri_agent.blocks.table.payments.search import Window, oldest

__all__ = ["MAX_SHOWN", "MAX_WINDOW", "AmountChoice", "Rules", "choose"]

# まとめ入金 is looked for among this many of a customer's oldest open invoices: customers pay
# their oldest invoices, and 30 taken 4 at a time bound the search (search.MAX_STEPS).
MAX_WINDOW = 30
# Invoices offered one by one to a person choosing where a part payment goes.
MAX_SHOWN = 10


@dataclass(frozen=True, slots=True)
class Rules:
    tolerance: int  # the largest bank fee taken off a transfer (yen)
    max_combined: int  # the most invoices one transfer may pay


@dataclass(frozen=True, slots=True)
class AmountChoice:
    """The allocation chosen, or the equally good sets and why none was chosen.

    ``alternatives`` holds the sets chosen among; with an allocation, more than one means the
    choice was made by due dates (the oldest invoices), which a person's answer about an
    earlier line may undo.
    """

    allocation: Allocation | None
    alternatives: tuple[tuple[Invoice, ...], ...] = ()
    why: str = ""

    @property
    def by_due_date(self) -> bool:
        return self.allocation is not None and len(self.alternatives) > 1


def choose(book: OpenInvoices, customer: str, amount: int, rules: Rules) -> AmountChoice:
    """The invoices of ``customer`` that ``amount`` yen pays (see the module docstring)."""
    count = book.open_count(customer)
    if count == 0:
        return AmountChoice(
            None, why="この取引先の未入金の請求がありません（前受金・二重払いの可能性）。"
        )
    high = amount + rules.tolerance
    window: Window | None = None  # made only when one invoice does not do
    for size in range(1, rules.max_combined + 1):
        if size == 1:
            found: list[tuple[Invoice, ...]] = [(i,) for i in book.singles(customer, amount, high)]
            complete = True
            exact = [s for s in found if _total(s) == amount]
            if exact:
                return _pick(exact, amount, rules, "ちょうど")
            window = Window(book.open(customer, MAX_WINDOW))
        elif window is not None and size <= len(window):
            result = window.sets(size, amount, high)
            found, complete = list(result.sets), result.complete
        else:
            break
        if not complete:
            return AmountChoice(
                None,
                tuple(found),
                f"金額の合う {size} 件の請求の組み合わせが多すぎて、どれか決められません。",
            )
        exact = [s for s in found if _total(s) == amount]
        if exact:
            return _pick(exact, amount, rules, "ちょうど")
        if found:
            larger, searched = _exact_larger(window, size, amount, rules)
            if not searched:
                return AmountChoice(
                    None,
                    tuple(found + larger),
                    "手数料を差し引いて合う請求はありますが、ちょうど合う組み合わせを探しきれません。",
                )
            if larger:
                return AmountChoice(
                    None,
                    tuple(found + larger),
                    f"振込手数料を差し引いた {size} 件の請求と、ちょうど合う"
                    f" {len(larger[0])} 件の組み合わせの両方が当てはまります。",
                )
            if len({_total(s) for s in found}) > 1:
                return AmountChoice(
                    None,
                    tuple(found),
                    f"振込手数料を差し引いて合う {size} 件の請求が {len(found)} 通りあり、"
                    "差し引かれた額がそれぞれ違うため、どれへの入金か決められません。",
                )
            return _pick(found, amount, rules, "手数料を差し引いて")
    return _no_set(book, customer, amount, rules, count)


def _pick(sets: list[tuple[Invoice, ...]], amount: int, rules: Rules, how: str) -> AmountChoice:
    if len(sets) == 1:
        return AmountChoice(allocate(sets[0], amount, rules.tolerance), tuple(sets))
    chosen = oldest(sets)
    if chosen is None:
        return AmountChoice(
            None,
            tuple(sets),
            f"{how}金額の合う請求の組み合わせが {len(sets)} 通りあり、支払期日でも決められません。",
        )
    return AmountChoice(allocate(chosen, amount, rules.tolerance), tuple(sets))


def _exact_larger(
    window: Window | None, size: int, amount: int, rules: Rules
) -> tuple[list[tuple[Invoice, ...]], bool]:
    """The smallest sets larger than ``size`` whose balances add up to ``amount`` exactly,
    and whether the search was complete."""
    if window is None:
        return [], True
    for larger in range(size + 1, min(rules.max_combined, len(window)) + 1):
        result = window.sets(larger, amount, amount)
        if result.sets or not result.complete:
            return list(result.sets), result.complete
    return [], True


def _no_set(
    book: OpenInvoices, customer: str, amount: int, rules: Rules, count: int
) -> AmountChoice:
    total = book.open_total(customer)
    open_invoices = book.open(customer)
    if amount > total:
        if count <= rules.max_combined:
            return AmountChoice(allocate(open_invoices, amount, rules.tolerance))
        return AmountChoice(
            None,
            tuple((i,) for i in open_invoices[:MAX_SHOWN]),
            f"入金額が未入金の請求 {count} 件の合計を超えますが、1 回の振込でまとめる件数の上限"
            f"（{rules.max_combined} 件）を超えるため充当先を決められません。",
        )
    if count == 1:
        return AmountChoice(allocate(open_invoices, amount, rules.tolerance))
    return AmountChoice(
        None,
        tuple((i,) for i in open_invoices[:MAX_SHOWN]),
        f"金額の合う請求がなく、一部入金とみられますが、未入金の請求が {count} 件あり"
        "どの請求への入金か決められません。",
    )


def _total(invoices: tuple[Invoice, ...]) -> int:
    return sum(i.balance for i in invoices)
