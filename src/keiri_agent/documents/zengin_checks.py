"""What a 全銀協 group's trailer and header say about its data records, compared with them.

Pure functions over the lines of one account's group (header, data records, trailer), used by
``zengin``: the trailer's counts and totals must agree with the data (a disagreement is an
error there, see its docstring), the header's period and balances should (a disagreement is a
warning: the lines themselves are sound).

振込入金通知: 振込合計件数/金額 agree with the data records that are not cancelled (取消区分 1)
or with all of them, as banks differ; 取消合計件数/金額 with the cancelled ones (when given).
入出金取引明細: 入金件数/入金額合計 with the records of 入払区分 1, 出金件数/出金額合計 with 2
(corrections included: the bank counts them by 入払区分), データ・レコード件数 with all data
records (when given); 取引前残高 + 入金 - 出金 = 取引後残高 when both balances are given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from keiri_agent.documents.bank_lines import BankAccount, BankLine

__all__ = [
    "Disagreement",
    "balance_warning",
    "period_warning",
    "statement_disagreements",
    "transfer_disagreements",
]


@dataclass(frozen=True)
class Disagreement:
    """A trailer field (``key`` in the layout) that states ``stated`` where the data count
    ``counted``, in ``unit`` (件 or 円)."""

    key: str
    stated: int
    counted: int
    unit: Literal["件", "円"]


def _total(lines: Sequence[BankLine]) -> int:
    return sum(line.amount for line in lines)


def _compare(
    key: str, stated: int | None, counted: int, unit: Literal["件", "円"]
) -> list[Disagreement]:
    return [] if stated is None or stated == counted else [Disagreement(key, stated, counted, unit)]


def transfer_disagreements(
    lines: Sequence[BankLine], trailer: dict[str, int | None]
) -> list[Disagreement]:
    """A 振込入金通知 group's trailer against its lines (see the module docstring)."""
    kept = [line for line in lines if not line.correction]
    cancelled = [line for line in lines if line.correction]
    stated = (trailer["count"], trailer["total"])
    problems: list[Disagreement] = []
    if stated not in ((len(kept), _total(kept)), (len(lines), _total(lines))):
        problems += _compare("count", trailer["count"], len(kept), "件")
        problems += _compare("total", trailer["total"], _total(kept), "円")
    problems += _compare("cancel_count", trailer["cancel_count"], len(cancelled), "件")
    problems += _compare("cancel_total", trailer["cancel_total"], _total(cancelled), "円")
    return problems


def statement_disagreements(
    lines: Sequence[BankLine], trailer: dict[str, int | None]
) -> list[Disagreement]:
    """An 入出金取引明細 group's trailer against its lines (see the module docstring)."""
    deposits = [line for line in lines if line.direction == "deposit"]
    withdrawals = [line for line in lines if line.direction == "withdrawal"]
    return [
        *_compare("deposit_count", trailer["deposit_count"], len(deposits), "件"),
        *_compare("deposit_total", trailer["deposit_total"], _total(deposits), "円"),
        *_compare("withdrawal_count", trailer["withdrawal_count"], len(withdrawals), "件"),
        *_compare("withdrawal_total", trailer["withdrawal_total"], _total(withdrawals), "円"),
        *_compare("record_count", trailer["record_count"], len(lines), "件"),
    ]


def period_warning(label: str, account: BankAccount, lines: Sequence[BankLine]) -> str | None:
    """A warning when lines lie outside the header's 勘定日(自)-(至)."""
    first, last = account.period_from, account.period_to
    if first is None or last is None:
        return None
    outside = [line for line in lines if not first <= line.date <= last]
    if not outside:
        return None
    example = outside[0]
    return (
        f"「{label}」の口座 {account.account_number} の勘定日が、ヘッダーの期間 {first.isoformat()}〜"
        f"{last.isoformat()} の外にあるデータが {len(outside):,} 件あります（最初は "
        f"{example.position.where()} の {example.date.isoformat()}）。"
    )


def balance_warning(label: str, account: BankAccount, lines: Sequence[BankLine]) -> str | None:
    """A warning when 取引前残高 + movements is not 取引後残高 (both given)."""
    if account.opening_balance is None or account.closing_balance is None:
        return None
    moved = sum(line.amount if line.direction == "deposit" else -line.amount for line in lines)
    expected = account.opening_balance + moved
    if expected == account.closing_balance:
        return None
    return (
        f"「{label}」の口座 {account.account_number} の取引後残高 {account.closing_balance:,} 円が、"
        f"取引前残高 {account.opening_balance:,} 円に入出金を加えた {expected:,} 円と一致しません。"
    )
