"""A transfer applied to a set of invoices: exact, less a fee, in part, or more than was open.

:func:`allocate` plans how ``amount`` yen clear ``invoices`` (oldest first) on their balances
now, without changing them; :func:`apply` carries a plan out. The money is applied in order of
due date, each invoice cleared in full before the next:

- the balances add up to the amount: every invoice is cleared (一致, or N 件まとめ);
- they add up to more, by at most the fee tolerance: every invoice is cleared and the
  difference is the bank fee the customer took off (手数料差引, 差額 -fee on the last invoice);
- they add up to more than that: the money runs out at one invoice, which keeps the rest open
  (一部入金, 差額 -rest); invoices the money does not reach are left out of the plan;
- they add up to less: every invoice is cleared and the rest of the money is kept as an
  overpayment (過入金, 差額 +over on the last invoice).
"""

from __future__ import annotations

from collections.abc import Iterable

from keiri_agent.blocks.table.payments.model import Allocation, AmountKind, Applied, Invoice

__all__ = ["allocate", "apply"]


def allocate(invoices: Iterable[Invoice], amount: int, tolerance: int) -> Allocation:
    """The plan for ``amount`` yen against ``invoices`` (see the module docstring)."""
    ordered = sorted(invoices, key=lambda i: i.order)
    if not ordered:
        raise ValueError("a transfer is allocated to at least one invoice")
    total = sum(i.balance for i in ordered)
    short = total - amount
    if short <= tolerance:
        # Exact, a fee, or an overpayment: every invoice is cleared, the last one takes the
        # difference.
        parts = [Applied(i, i.balance, i.balance, 0) for i in ordered[:-1]]
        last = ordered[-1]
        parts.append(Applied(last, last.balance, last.balance - short, 0))
        if short == 0:
            return Allocation(amount, tuple(parts), AmountKind.EXACT)
        if short > 0:
            return Allocation(amount, tuple(parts), AmountKind.FEE, fee=short)
        return Allocation(amount, tuple(parts), AmountKind.OVER, over=-short)
    parts = []
    cash = amount
    for invoice in ordered:
        if cash <= 0:
            break
        paid = min(cash, invoice.balance)
        parts.append(Applied(invoice, invoice.balance, paid, invoice.balance - paid))
        cash -= paid
    return Allocation(amount, tuple(parts), AmountKind.PARTIAL, rest=short)


def apply(allocation: Allocation) -> None:
    """Carry out ``allocation``: each invoice's balance becomes what the plan left open."""
    for part in allocation.parts:
        if part.invoice.balance != part.before:
            raise RuntimeError(
                f"invoice {part.invoice.number} changed between planning and applying"
            )
        part.invoice.balance = part.after
