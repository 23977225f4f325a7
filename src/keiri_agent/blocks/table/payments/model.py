"""What 入金消込 works with: customers, open invoices, bank lines, and how a line ended.

An :class:`Invoice` is the one mutable thing: its ``balance`` (残高) falls as lines are applied
to it during a run. Everything else is frozen. A line ends in one of three outcomes:
:class:`Matched` (消込済: its customer, how the customer was known, the allocation to its
invoices), :class:`Review` (要確認: why, and the candidates a person chooses from) or
:class:`Unknown` (不明入金: why, and the customer when only that was known).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "Allocation",
    "AmountKind",
    "Applied",
    "Basis",
    "BasisKind",
    "Candidate",
    "Customer",
    "Deposit",
    "Invoice",
    "Matched",
    "Outcome",
    "Review",
    "Unknown",
]

# Sorts after every due date: an invoice without one is the newest.
NO_DUE = dt.date.max


@dataclass(frozen=True, slots=True)
class Customer:
    """A customer: ``id`` is its code, or its name key when the invoices have no codes."""

    id: str
    code: str
    name: str
    kana: str = ""

    @property
    def shown(self) -> str:
        """How a person reads it: ``1001 株式会社山田商事``."""
        return f"{self.code} {self.name}".strip() if self.code != self.name else self.name


@dataclass(slots=True, eq=False)
class Invoice:
    """An invoice of the 請求一覧; ``balance`` is what is still open, changed as lines apply."""

    row: int  # 0-based row of the invoices table
    order: int  # place among all invoices by due date, then row (0 is the oldest)
    number: str
    customer: str  # Customer.id
    amount: int  # 請求金額 (yen)
    opening: int  # 残高 before this run
    due: dt.date | None
    balance: int = 0  # 残高 now

    def __post_init__(self) -> None:
        self.balance = self.opening

    @property
    def due_key(self) -> dt.date:
        return self.due or NO_DUE


@dataclass(frozen=True, slots=True)
class Deposit:
    """A bank line to match: a deposit of the bank statement."""

    row: int  # 0-based row of the deposits table
    reference: str  # 全銀 照会番号, or the 1-based data row
    date: dt.date
    amount: int
    payer: str  # 振込依頼人名 as the bank wrote it
    edi: str = ""

    @property
    def question_id(self) -> str:
        """The id of this line's question and answer (``確認_12_20260203_110000``): the data
        row, the date and the amount, so an answer never lands on another line."""
        return f"確認_{self.row + 1}_{self.date:%Y%m%d}_{self.amount}"

    @property
    def remember_id(self) -> str:
        """The id of this line's 「この名義を覚える」 answer."""
        return "覚える_" + self.question_id.removeprefix("確認_")


class BasisKind(StrEnum):
    """How the customer of a line was known (its Japanese label is shown as 名義)."""

    INVOICE = "請求番号"
    CODE = "コード"
    CONFIRMED = "確認済み"
    LEARNED = "学習済み"
    KANA = "マスタのカナ"
    READING = "読み"
    NAME = "取引先名"


@dataclass(frozen=True, slots=True)
class Basis:
    kind: BasisKind
    detail: str = ""  # where or how: （EDI情報）, （前方一致: 銀行で切れた名前）...

    @property
    def text(self) -> str:
        return f"{self.kind.value}{self.detail}"


class AmountKind(StrEnum):
    EXACT = "一致"
    FEE = "手数料差引"
    PARTIAL = "一部入金"
    OVER = "過入金"


@dataclass(frozen=True, slots=True)
class Applied:
    """One invoice's part of a line: 残高 before, the money applied, 差額, 残高 after."""

    invoice: Invoice
    before: int
    cash: int  # the part of the transfer applied to this invoice
    after: int

    @property
    def difference(self) -> int:
        """差額: money against what was open (a fee or a partial payment below 0, an
        overpayment above), on the line's last invoice; 0 on the others."""
        return self.cash - self.before


@dataclass(frozen=True, slots=True)
class Allocation:
    """How a transfer of ``amount`` yen is applied to ``parts`` (oldest first)."""

    amount: int
    parts: tuple[Applied, ...]
    kind: AmountKind
    fee: int = 0
    rest: int = 0  # 一部入金: what stays open
    over: int = 0  # 過入金: what is more than was open

    @property
    def invoices(self) -> tuple[Invoice, ...]:
        return tuple(part.invoice for part in self.parts)

    @property
    def text(self) -> str:
        """The amount reason: 一致 / 2 件まとめ / 手数料差引 (660 円) / 一部入金 (残 N 円) ..."""
        words = [f"{len(self.parts)} 件まとめ"] if len(self.parts) > 1 else []
        if self.kind is AmountKind.FEE:
            words.append(f"手数料差引 ({self.fee:,} 円)")
        elif self.kind is AmountKind.PARTIAL:
            words.append(f"一部入金 (残 {self.rest:,} 円)")
        elif self.kind is AmountKind.OVER:
            words.append(f"過入金 ({self.over:,} 円)")
        return "・".join(words) or AmountKind.EXACT.value


@dataclass(frozen=True, slots=True)
class Candidate:
    """One answer a person may give for a 要確認 line: a customer or a set of invoices."""

    value: str  # the answer: 取引先:<id> or 請求:<number>,<number>
    label: str  # what the person reads
    customers: tuple[Customer, ...]
    invoices: tuple[Invoice, ...] = ()


@dataclass(frozen=True, slots=True)
class Matched:
    line: Deposit
    customer: Customer | None  # None: invoices of several customers (a person chose them)
    basis: Basis
    allocation: Allocation

    @property
    def reason(self) -> str:
        return f"名義: {self.basis.text}／金額: {self.allocation.text}"


@dataclass(frozen=True, slots=True)
class Review:
    line: Deposit
    why: str
    candidates: tuple[Candidate, ...] = ()


@dataclass(frozen=True, slots=True)
class Unknown:
    line: Deposit
    why: str
    customer: Customer | None = None
    confirmed: bool = False  # a person answered 該当なし


Outcome = Matched | Review | Unknown
