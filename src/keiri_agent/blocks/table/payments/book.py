"""The open invoices during a run, found by customer, by balance and by number.

:class:`OpenInvoices` keeps, for each customer, its invoices in order of due date and the
balances of its open ones sorted (``singles``: the invoices whose balance lies in a range, by
bisection), and for all customers a table of the balances invoices opened with
(``any_singles``: what a payer nobody knows may be paying). Applying a line changes a few
balances; each structure is updated for those invoices only, so a run costs O(lines × log n)
however many customers there are. ``by_number`` finds an invoice by its number as a payer may
write it (``INV-2026-0001``, ``inv20260001``: :func:`identifier`).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable

from keiri_agent.blocks.table.payments.allocation import apply
from keiri_agent.blocks.table.payments.model import Allocation, Invoice

__all__ = ["OpenInvoices", "identifier"]

_NOT_ALNUM = re.compile(r"[^0-9A-Z]")


def identifier(text: str) -> str:
    """An invoice number or a code as compared: NFKC, upper case, letters and digits only."""
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", text).upper())


class OpenInvoices:
    """Every invoice of the run, and the open ones by customer and balance."""

    def __init__(self, invoices: Iterable[Invoice]) -> None:
        self.invoices = sorted(invoices, key=lambda i: i.order)
        self.by_number: dict[str, Invoice] = {}
        self._customers: dict[str, list[Invoice]] = {}
        self._front: dict[str, int] = {}
        self._balances: dict[str, list[tuple[int, int]]] = {}
        for invoice in self.invoices:
            self.by_number.setdefault(identifier(invoice.number), invoice)
            self._customers.setdefault(invoice.customer, []).append(invoice)
        for customer, items in self._customers.items():
            self._front[customer] = 0
            self._balances[customer] = sorted((i.balance, i.order) for i in items if i.balance > 0)
        self._opening = sorted((i.balance, i.order) for i in self.invoices if i.balance > 0)

    def open(self, customer: str, limit: int | None = None) -> list[Invoice]:
        """The open invoices of ``customer``, oldest first (the ``limit`` oldest)."""
        items = self._customers.get(customer, [])
        start = self._front.get(customer, 0)
        while start < len(items) and items[start].balance <= 0:
            start += 1  # cleared invoices gather at the front: skip them once
        if customer in self._front:
            self._front[customer] = start
        found: list[Invoice] = []
        for invoice in items[start:]:
            if invoice.balance > 0:
                found.append(invoice)
                if limit is not None and len(found) >= limit:
                    break
        return found

    def open_count(self, customer: str) -> int:
        return len(self._balances.get(customer, ()))

    def open_total(self, customer: str) -> int:
        return sum(balance for balance, _ in self._balances.get(customer, ()))

    def singles(self, customer: str, low: int, high: int) -> list[Invoice]:
        """The open invoices of ``customer`` whose balance is ``low``..``high`` yen."""
        balances = self._balances.get(customer, [])
        start = bisect_left(balances, (low, -1))
        end = bisect_right(balances, (high, len(self.invoices)))
        return sorted((self.invoices[order] for _, order in balances[start:end]), key=_order)

    def any_singles(self, low: int, high: int, limit: int) -> tuple[list[Invoice], bool]:
        """Untouched invoices of any customer whose balance is ``low``..``high`` yen, oldest
        first, and whether there were more than ``limit``."""
        start = bisect_left(self._opening, (low, -1))
        end = bisect_right(self._opening, (high, len(self.invoices)))
        found = []
        for balance, order in self._opening[start:end]:
            invoice = self.invoices[order]
            if invoice.balance == balance:
                found.append(invoice)
        found.sort(key=_order)
        return found[:limit], len(found) > limit

    def apply(self, allocation: Allocation) -> None:
        """Apply ``allocation`` and keep the balances by customer in step."""
        for part in allocation.parts:
            balances = self._balances[part.invoice.customer]
            index = bisect_left(balances, (part.before, part.invoice.order))
            if index < len(balances) and balances[index] == (part.before, part.invoice.order):
                del balances[index]
            if part.after > 0:
                insort(balances, (part.after, part.invoice.order))
        apply(allocation)


def _order(invoice: Invoice) -> int:
    return invoice.order
