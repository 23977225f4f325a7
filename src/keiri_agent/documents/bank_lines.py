"""Bank lines: what a bank statement says, in one shape whatever file it came from.

A 全銀協 振込入金通知, a 全銀協 入出金取引明細 and the CSV/Excel statement of an Internet bank
are read (``zengin``, ``bank_table``) into the same :class:`BankStatement`: one
:class:`BankLine` per transaction, in file order, with what 入金消込 needs (date, yen amount,
direction, the payer's name as the bank wrote it, EDI information) and where the line is in the
file (:class:`LinePosition`), so a person can find it.

The lines are a tuple of frozen dataclasses: typed, positioned, and cheap enough at 100,000
lines; :meth:`BankStatement.to_frame` gives the same data as a DataFrame for vectorized work.

Which lines are matched: :attr:`BankStatement.deposits` (入金 that are not corrections).
Withdrawals (出金) and corrections (振込入金通知's 取消, 入出金取引明細's 取引区分 19 訂正, either
direction) are kept, counted and reported (:meth:`BankStatement.summary`), never matched.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

__all__ = [
    "DIRECTION_LABELS",
    "FORMAT_LABELS",
    "BankAccount",
    "BankLine",
    "BankStatement",
    "Direction",
    "LinePosition",
    "StatementFormat",
]

Direction = Literal["deposit", "withdrawal"]
DIRECTION_LABELS: dict[Direction, str] = {"deposit": "入金", "withdrawal": "出金"}

# zengin_transfer: 全銀協 振込入金通知 (種別コード 01); zengin_statement: 全銀協 入出金取引明細
# (種別コード 03); table: a CSV or Excel statement with Japanese headers.
StatementFormat = Literal["zengin_transfer", "zengin_statement", "table"]
FORMAT_LABELS: dict[StatementFormat, str] = {
    "zengin_transfer": "全銀協 振込入金通知",
    "zengin_statement": "全銀協 入出金取引明細",
    "table": "入出金明細（CSV・Excel）",
}


@dataclass(frozen=True, slots=True)
class LinePosition:
    """Where a line is in its file.

    全銀 files: ``record`` is the 1-based record number in the file (header and trailer records
    count), ``offset`` the 0-based byte offset of the record, ``line`` the text line when the
    records are separated by line breaks (else None). Tables: ``record`` is the 1-based data
    row (the first row under the header is 1), ``offset`` and ``line`` are None.
    """

    record: int
    offset: int | None = None
    line: int | None = None

    def where(self) -> str:
        """The position as a person looks for it (Japanese)."""
        if self.offset is None:
            return f"データ {self.record} 行目"
        on_line = f"{self.line} 行目、" if self.line is not None else ""
        return f"{self.record} 件目のレコード（{on_line}先頭から {self.offset + 1:,} バイト目）"


@dataclass(frozen=True, slots=True)
class BankLine:
    """One transaction of a statement.

    ``reference`` is the 全銀 照会番号 as written ("" when the bank left it blank, which the
    format allows) or, for tables, the 1-based data row. ``amount`` is in yen, never negative;
    ``direction`` says which way the money went. ``payer`` is the 振込依頼人名 exactly as the
    bank wrote it (half-width kana, abbreviations, cut at 48 characters): nothing is
    normalized here (a 入出金取引明細 withdrawal holds the 契約者番号 or 収納企業名 there). For a
    table it is the 振込依頼人名 column, or a deposit's 摘要 without its leading transaction
    word (``振込　ｶ)ｱｵﾊﾞｼﾖｳｼﾞ`` → ``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``). ``description`` is the 摘要
    (入出金取引明細's 摘要内容, a table's 摘要 column). ``transaction`` is the 取引区分 code of
    入出金取引明細 (``"11"`` 振込...), else "". ``correction`` marks a 取消 / 訂正 line.
    ``account`` indexes :attr:`BankStatement.accounts` (None for tables). ``record``,
    ``offset`` and ``line`` say where the line is (:class:`LinePosition`, also as
    :attr:`position`); they are fields of their own so that 100,000 lines are 100,000 objects.
    """

    reference: str
    date: dt.date
    amount: int
    direction: Direction
    payer: str
    record: int
    offset: int | None = None
    line: int | None = None
    value_date: dt.date | None = None
    description: str = ""
    edi: str = ""
    payer_code: str = ""
    bank_name: str = ""
    branch_name: str = ""
    transaction: str = ""
    correction: bool = False
    account: int | None = None

    @property
    def position(self) -> LinePosition:
        """Where the line is in its file (``record``, ``offset``, ``line``)."""
        return LinePosition(self.record, self.offset, self.line)

    @property
    def is_deposit(self) -> bool:
        """A deposit to match: 入金 and not a correction."""
        return self.direction == "deposit" and not self.correction


@dataclass(frozen=True, slots=True)
class BankAccount:
    """The account a 全銀 header record describes (codes kept as written, zero-padded).

    ``period_from`` / ``period_to`` are the header's 勘定日(自)/(至) (None when the bank left
    them zero); ``opening_balance`` / ``closing_balance`` are 入出金取引明細's 取引前残高 and
    取引後残高, signed by 貸越区分 (None in a 振込入金通知).
    """

    bank_code: str
    bank_name: str
    branch_code: str
    branch_name: str
    deposit_type: str
    account_number: str
    account_name: str
    created: dt.date | None = None
    period_from: dt.date | None = None
    period_to: dt.date | None = None
    opening_balance: int | None = None
    closing_balance: int | None = None


@dataclass(frozen=True)
class BankStatement:
    """A bank file read by ``read_bank_statement``: its lines and how it was read.

    ``encoding`` is the text encoding the file was decoded with; ``year_style`` how a 全銀
    file's six-digit dates were read ("wareki": 和暦 YYMMDD, the format's own; "seireki": the
    Western-year variant some banks write), None for tables; ``columns`` maps the roles a
    table's columns were taken for (date, deposit, withdrawal, description, payer, edi) to
    their header; ``warnings`` are Japanese one-liners about what was read but looks odd.
    """

    file: str
    format: StatementFormat
    lines: tuple[BankLine, ...]
    accounts: tuple[BankAccount, ...] = ()
    encoding: str | None = None
    year_style: Literal["wareki", "seireki"] | None = None
    columns: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def deposits(self) -> tuple[BankLine, ...]:
        """The lines to match: deposits that are not corrections."""
        return tuple(line for line in self.lines if line.is_deposit)

    @property
    def withdrawals(self) -> tuple[BankLine, ...]:
        """Withdrawals that are not corrections (counted and reported, not matched)."""
        return tuple(
            line for line in self.lines if line.direction == "withdrawal" and not line.correction
        )

    @property
    def corrections(self) -> tuple[BankLine, ...]:
        """取消 / 訂正 lines, either direction (counted and reported, not matched)."""
        return tuple(line for line in self.lines if line.correction)

    def summary(self) -> dict[str, Any]:
        """Counts and yen totals of deposits, withdrawals and corrections, for a report."""
        parts = {
            "deposits": self.deposits,
            "withdrawals": self.withdrawals,
            "corrections": self.corrections,
        }
        result: dict[str, Any] = {"file": self.file, "format": FORMAT_LABELS[self.format]}
        for key, lines in parts.items():
            result[key] = {"count": len(lines), "total": sum(line.amount for line in lines)}
        return result

    def to_frame(self) -> pd.DataFrame:
        """The lines as a DataFrame, one row per line in file order.

        Columns: the :class:`BankLine` fields, ``date`` and ``value_date`` as datetimes.
        """
        frame = pd.DataFrame(
            {name: [getattr(item, name) for item in self.lines] for name in _FRAME_FIELDS}
        )
        frame["date"] = pd.to_datetime(frame["date"])
        frame["value_date"] = pd.to_datetime(frame["value_date"])
        frame["amount"] = frame["amount"].astype("int64")
        for name in ("account", "offset", "line"):
            frame[name] = frame[name].astype("Int64")
        return frame


_FRAME_FIELDS = (
    "reference",
    "date",
    "value_date",
    "amount",
    "direction",
    "payer",
    "description",
    "edi",
    "payer_code",
    "bank_name",
    "branch_name",
    "transaction",
    "correction",
    "account",
    "record",
    "offset",
    "line",
)
