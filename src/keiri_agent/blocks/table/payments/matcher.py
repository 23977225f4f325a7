"""入金消込 of one run: every bank line, in order, to 消込済, 要確認 or 不明入金.

:func:`match` takes the lines in a fixed order (勘定日, then 照会番号, then place in the file),
so the same data always gives the same result, and for each line:

1. a person's answer (``confirmations``) decides first: a customer, invoices, or 該当なし;
2. else the customer is identified (:mod:`.identify`) and its invoices chosen
   (:mod:`.amounts`); a line is 消込済 only when both are certain;
3. when the customer is uncertain, each candidate customer's invoices are shown; when nobody
   is known, open invoices of any customer whose balance fits the transfer are offered
   (:meth:`.book.OpenInvoices.any_singles`), else the line is 不明入金.

A 要確認 line does not take invoices, but it may be paying them: its candidates' invoices are
*contested*. A later line that would take a contested invoice only because it is the oldest of
equally fitting ones (the due-date rule) goes to 要確認 too: the earlier line may have paid it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from keiri_agent.blocks.table.payments.allocation import allocate
from keiri_agent.blocks.table.payments.amounts import AmountChoice, Rules, choose
from keiri_agent.blocks.table.payments.book import OpenInvoices
from keiri_agent.blocks.table.payments.confirm import (
    CUSTOMER_PREFIX,
    INVOICE_PREFIX,
    Answer,
    AnswerKind,
)
from keiri_agent.blocks.table.payments.directory import Directory
from keiri_agent.blocks.table.payments.identify import Identity, identify
from keiri_agent.blocks.table.payments.model import (
    Basis,
    BasisKind,
    Candidate,
    Customer,
    Deposit,
    Invoice,
    Matched,
    Outcome,
    Review,
    Unknown,
)

__all__ = ["MAX_AMOUNT_CANDIDATES", "Learned", "MatchRun", "line_order", "match"]

# Invoices of any customer offered for a payer nobody knows; more fit the amount: 不明入金.
MAX_AMOUNT_CANDIDATES = 5
CANCEL_CHECK_LINES = 1_000  # lines between two looks at a cancellation


@dataclass(frozen=True, slots=True)
class Learned:
    """A payer name a person confirmed in this run and asked to remember."""

    line: Deposit
    customer: Customer


@dataclass
class MatchRun:
    outcomes: list[Outcome] = field(default_factory=list)  # in processing order
    learned: list[Learned] = field(default_factory=list)
    confirmed: int = 0  # lines decided by a person's answer


def line_order(line: Deposit) -> tuple[object, ...]:
    """The order lines are processed in: 勘定日, 照会番号 (as a number when it is one), row."""
    reference = line.reference
    number = int(reference) if reference.isdigit() else -1
    return (line.date, number, reference, line.row)


def match(
    lines: Sequence[Deposit],
    book: OpenInvoices,
    directory: Directory,
    rules: Rules,
    answers: Mapping[str, Answer],
    check_cancelled: Callable[[], None],
) -> MatchRun:
    """Every line's outcome (see the module docstring); invoices' balances are applied."""
    run = MatchRun()
    matcher = _Matcher(book, directory, rules)
    for number, line in enumerate(sorted(lines, key=line_order)):
        if number % CANCEL_CHECK_LINES == 0:
            check_cancelled()
        answer = answers.get(line.question_id) if answers else None
        if answer is not None:
            run.confirmed += 1
            outcome = matcher.answered(line, answer)
            if answer.remember:
                run.learned.extend(Learned(line, c) for c in _customers_of(answer, directory))
        else:
            outcome = matcher.line(line)
        run.outcomes.append(outcome)
    return run


class _Matcher:
    def __init__(self, book: OpenInvoices, directory: Directory, rules: Rules) -> None:
        self.book = book
        self.directory = directory
        self.rules = rules
        self.contested: set[int] = set()  # orders of invoices 要確認 lines may be paying

    def line(self, line: Deposit) -> Outcome:
        identity = identify(line, self.directory, self.book)
        if identity.customer is not None and identity.basis is not None:
            return self.known(line, identity.customer, identity.basis, identity.invoices)
        if identity.candidates:
            candidates = [self.customer_candidate(line, c, b) for c, b in identity.candidates]
            return self.review(line, identity.why, candidates)
        return self.nobody(line, identity)

    def answered(self, line: Deposit, answer: Answer) -> Outcome:
        confirmed = Basis(BasisKind.CONFIRMED)
        if answer.kind is AnswerKind.NONE:
            return Unknown(line, "確認済み: 該当なし", confirmed=True)
        if answer.kind is AnswerKind.CUSTOMER:
            return self.known(line, self.directory.customers[answer.customer], confirmed, ())
        closed = [i.number for i in answer.invoices if i.balance <= 0]
        if closed:
            return self.review(
                line,
                f"選んだ請求 {'、'.join(closed)} はこの実行で先に消込済みです（二重払いの可能性）。",
                [],
            )
        customers = {i.customer for i in answer.invoices}
        customer = self.directory.customers[customers.pop()] if len(customers) == 1 else None
        allocation = allocate(answer.invoices, line.amount, self.rules.tolerance)
        self.book.apply(allocation)
        return Matched(line, customer, confirmed, allocation)

    def known(
        self, line: Deposit, customer: Customer, basis: Basis, named: tuple[Invoice, ...]
    ) -> Outcome:
        if named:
            closed = [i.number for i in named if i.balance <= 0]
            if closed:
                return self.review(
                    line,
                    f"{basis.text}の請求 {'、'.join(closed)} は消込済みです（二重払いの可能性）。",
                    [self.customer_candidate(line, customer, basis)],
                )
            plan = allocate(named, line.amount, self.rules.tolerance)
            self.book.apply(plan)
            return Matched(line, customer, basis, plan)
        choice = choose(self.book, customer.id, line.amount, self.rules)
        allocation = choice.allocation
        if allocation is None:
            if not choice.alternatives:
                return Unknown(line, f"{customer.shown}（{basis.text}）: {choice.why}", customer)
            sets = [self.set_candidate(s, line.amount) for s in choice.alternatives]
            return self.review(line, f"{customer.shown}（{basis.text}）: {choice.why}", sets)
        if choice.by_due_date and self.contested.intersection(i.order for i in allocation.invoices):
            sets = [self.set_candidate(s, line.amount) for s in choice.alternatives]
            why = (
                f"{customer.shown}（{basis.text}）: 金額の合う請求が {len(sets)} 通りあり、"
                "支払期日の古いものに当たりますが、先の要確認の入金がその請求への入金の可能性があります。"
            )
            return self.review(line, why, sets)
        self.book.apply(allocation)
        return Matched(line, customer, basis, allocation)

    def nobody(self, line: Deposit, identity: Identity) -> Outcome:
        """A line whose payer nobody knows: open invoices that fit its amount, if few."""
        found, more = self.book.any_singles(
            line.amount, line.amount + self.rules.tolerance, MAX_AMOUNT_CANDIDATES
        )
        if found and not more:
            sets = [self.set_candidate((i,), line.amount) for i in found]
            why = identity.why + " 金額の合う請求があります（名義は一致しません）。"
            return self.review(line, why, sets)
        if more:
            return Unknown(
                line,
                identity.why
                + f" 金額の合う請求が {MAX_AMOUNT_CANDIDATES} 件より多く、候補を絞れません。",
            )
        return Unknown(line, identity.why)

    def review(self, line: Deposit, why: str, candidates: list[Candidate]) -> Review:
        for candidate in candidates:
            self.contested.update(i.order for i in candidate.invoices)
        return Review(line, why, tuple(_unique(candidates)))

    def customer_candidate(self, line: Deposit, customer: Customer, basis: Basis) -> Candidate:
        """A customer a person may choose, with the invoices the transfer would pay."""
        choice = choose(self.book, customer.id, line.amount, self.rules)
        label = f"{customer.shown}（{basis.text}）— {_preview(choice)}"
        invoices = _invoices_of(choice)
        return Candidate(f"{CUSTOMER_PREFIX}{customer.id}", label, (customer,), invoices)

    def set_candidate(self, invoices: tuple[Invoice, ...], amount: int) -> Candidate:
        """A set of invoices a person may choose, with how the transfer meets them."""
        allocation = allocate(invoices, amount, self.rules.tolerance)
        customers = tuple(
            self.directory.customers[i] for i in dict.fromkeys(i.customer for i in invoices)
        )
        numbers = ",".join(i.number for i in invoices)
        shown = "、".join(_invoice_text(i) for i in invoices)
        label = f"{shown} — {'・'.join(c.shown for c in customers)}（{allocation.text}）"
        return Candidate(f"{INVOICE_PREFIX}{numbers}", label, customers, invoices)


def _preview(choice: AmountChoice) -> str:
    if choice.allocation is not None:
        allocation = choice.allocation
        return f"{'、'.join(_invoice_text(i) for i in allocation.invoices)}（{allocation.text}）"
    if choice.alternatives:
        return f"金額の合う請求の組み合わせが {len(choice.alternatives)} 通り"
    return "金額の合う未入金の請求なし"


def _invoices_of(choice: AmountChoice) -> tuple[Invoice, ...]:
    if choice.allocation is not None:
        return choice.allocation.invoices
    return tuple(dict.fromkeys(i for s in choice.alternatives for i in s))


def _invoice_text(invoice: Invoice) -> str:
    due = f"、期日 {invoice.due.isoformat()}" if invoice.due else ""
    return f"{invoice.number}（残 {invoice.balance:,} 円{due}）"


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    """Each answer once, where it first appears."""
    seen: dict[str, Candidate] = {}
    for candidate in candidates:
        seen.setdefault(candidate.value, candidate)
    return list(seen.values())


def _customers_of(answer: Answer, directory: Directory) -> list[Customer]:
    if answer.kind is AnswerKind.CUSTOMER:
        return [directory.customers[answer.customer]]
    ids = dict.fromkeys(i.customer for i in answer.invoices)
    return [directory.customers[i] for i in ids]
