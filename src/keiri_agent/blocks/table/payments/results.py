"""The outcome of a run as the tables an accountant reads: 消込済, 要確認, 未入金, 不明入金.

Each table is built by columns (one list per column, then one DataFrame), so 100,000 lines
cost a few hundred milliseconds, and rows of the bank file and of the 請求一覧 say where they
are (``位置``: ``入金.txt の 3 件目のレコード``, ``請求一覧.xlsx のシート「請求」の 5 行目``).
``unpaid`` keeps the invoices' file positions, so a later block names them as the user finds
them. :func:`summary` counts lines and yen of each outcome and the match rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.payments.matcher import Learned, MatchRun
from keiri_agent.blocks.table.payments.model import (
    AmountKind,
    Customer,
    Deposit,
    Invoice,
    Matched,
    Review,
    Unknown,
)
from keiri_agent.documents.table_value import Table

__all__ = [
    "LEARNED_COLUMNS",
    "MATCHED_COLUMNS",
    "REVIEW_COLUMNS",
    "UNKNOWN_COLUMNS",
    "UNPAID_COLUMNS",
    "learned_table",
    "matched_table",
    "review_table",
    "summary",
    "unknown_table",
    "unpaid_table",
]

MATCHED_COLUMNS = (
    "照会番号", "勘定日", "振込依頼人名", "取引先コード", "取引先名", "請求番号", "支払期日",
    "入金額", "請求金額", "消込前残高", "消込額", "差額", "消込後残高", "理由", "位置",
)  # fmt: skip
REVIEW_COLUMNS = (
    "確認ID", "照会番号", "勘定日", "振込依頼人名", "入金額", "EDI情報", "理由", "候補", "候補数", "位置",
)  # fmt: skip
UNKNOWN_COLUMNS = (
    "確認ID", "照会番号", "勘定日", "振込依頼人名", "入金額", "EDI情報", "取引先コード", "取引先名",
    "理由", "位置",
)  # fmt: skip
UNPAID_COLUMNS = (
    "請求番号", "取引先コード", "取引先名", "支払期日", "請求金額", "入金済額", "残高", "状態", "位置",
)  # fmt: skip
LEARNED_COLUMNS = ("振込依頼人名", "取引先コード", "取引先名", "確認ID", "照会番号")
CANDIDATE_SEPARATOR = " ／ "
_ROWS = "__rows"  # the deposits row of each output row (kept aside, not a column)


def matched_table(run: MatchRun, deposits: Table, customers: dict[str, Customer]) -> Table:
    """消込済: one row per bank line and invoice, in processing order."""
    cells: dict[str, list[Any]] = {name: [] for name in (*MATCHED_COLUMNS, _ROWS)}
    for outcome in run.outcomes:
        if not isinstance(outcome, Matched):
            continue
        line = outcome.line
        for part in outcome.allocation.parts:
            invoice = part.invoice
            customer = customers[invoice.customer]
            _line_cells(cells, line, deposits)
            cells["取引先コード"].append(customer.code)
            cells["取引先名"].append(customer.name)
            cells["請求番号"].append(invoice.number)
            cells["支払期日"].append(invoice.due)
            cells["請求金額"].append(invoice.amount)
            cells["消込前残高"].append(part.before)
            cells["消込額"].append(part.cash)
            cells["差額"].append(part.difference)
            cells["消込後残高"].append(part.after)
            cells["理由"].append(outcome.reason)
    return _table(cells, MATCHED_COLUMNS, deposits, dates=("勘定日", "支払期日"), ints=_MONEY)


def review_table(run: MatchRun, deposits: Table) -> Table:
    """要確認: one row per line, its candidates and why."""
    cells: dict[str, list[Any]] = {name: [] for name in (*REVIEW_COLUMNS, _ROWS)}
    for outcome in run.outcomes:
        if isinstance(outcome, Review):
            _question_cells(cells, outcome.line, deposits)
            cells["理由"].append(outcome.why)
            cells["候補"].append(CANDIDATE_SEPARATOR.join(c.label for c in outcome.candidates))
            cells["候補数"].append(len(outcome.candidates))
    return _table(cells, REVIEW_COLUMNS, deposits, dates=("勘定日",), ints=("入金額", "候補数"))


def unknown_table(run: MatchRun, deposits: Table) -> Table:
    """不明入金: one row per line nobody (or only its customer) could be found for."""
    cells: dict[str, list[Any]] = {name: [] for name in (*UNKNOWN_COLUMNS, _ROWS)}
    for outcome in run.outcomes:
        if isinstance(outcome, Unknown):
            _question_cells(cells, outcome.line, deposits)
            cells["取引先コード"].append(outcome.customer.code if outcome.customer else "")
            cells["取引先名"].append(outcome.customer.name if outcome.customer else "")
            cells["理由"].append(outcome.why)
    return _table(cells, UNKNOWN_COLUMNS, deposits, dates=("勘定日",), ints=("入金額",))


def unpaid_table(
    invoices: Sequence[Invoice], source: Table, customers: dict[str, Customer]
) -> Table:
    """未入金: the invoices still open after the run, oldest first, at their file positions."""
    open_invoices = [i for i in invoices if i.balance > 0]
    rows = [i.row for i in open_invoices]
    frame = pd.DataFrame(
        {
            "請求番号": pd.Series([i.number for i in open_invoices], dtype=object),
            "取引先コード": pd.Series(
                [customers[i.customer].code for i in open_invoices], dtype=object
            ),
            "取引先名": pd.Series(
                [customers[i.customer].name for i in open_invoices], dtype=object
            ),
            "支払期日": pd.to_datetime(pd.Series([i.due for i in open_invoices], dtype=object)),
            "請求金額": pd.Series([i.amount for i in open_invoices], dtype="int64"),
            "入金済額": pd.Series([i.amount - i.balance for i in open_invoices], dtype="int64"),
            "残高": pd.Series([i.balance for i in open_invoices], dtype="int64"),
            "状態": pd.Series(
                ["一部入金" if i.balance < i.amount else "未入金" for i in open_invoices],
                dtype=object,
            ),
            "位置": pd.Series([source.where(r) for r in rows], dtype=object),
        },
        columns=list(UNPAID_COLUMNS),
    )
    positions = (
        None if source.positions is None else source.positions[np.asarray(rows, dtype=np.int64)]
    )
    return Table(frame, origin=source.origin, positions=positions)


def learned_table(learned: Sequence[Learned]) -> Table:
    """The payer names confirmed in this run, as the learned-names store keeps them."""
    frame = pd.DataFrame(
        {
            "振込依頼人名": [x.line.payer for x in learned],
            "取引先コード": [x.customer.code or x.customer.id for x in learned],
            "取引先名": [x.customer.name for x in learned],
            "確認ID": [x.line.question_id for x in learned],
            "照会番号": [x.line.reference for x in learned],
        },
        columns=list(LEARNED_COLUMNS),
        dtype=object,
    )
    return Table(frame)


def summary(run: MatchRun, invoices: Sequence[Invoice]) -> dict[str, Any]:
    """Counts and yen of each outcome, the match rate, fees and overpayments."""
    kinds: Counter[str] = Counter()
    money: Counter[str] = Counter()
    names: Counter[str] = Counter()
    amounts: Counter[str] = Counter()
    fees = over = 0
    for outcome in run.outcomes:
        kind = {Matched: "matched", Review: "review", Unknown: "unknown"}[type(outcome)]
        kinds[kind] += 1
        money[kind] += outcome.line.amount
        if isinstance(outcome, Matched):
            allocation = outcome.allocation
            names[outcome.basis.kind.value] += 1
            amounts[allocation.kind.value] += 1
            if len(allocation.parts) > 1:
                amounts["まとめ入金"] += 1
            fees += allocation.fee if allocation.kind is AmountKind.FEE else 0
            over += allocation.over
    lines = len(run.outcomes)
    open_after = [i for i in invoices if i.balance > 0]
    opened = [i for i in invoices if i.opening > 0]
    return {
        "lines": lines,
        "deposit_total": sum(money.values()),
        "matched": kinds["matched"],
        "matched_total": money["matched"],
        "review": kinds["review"],
        "review_total": money["review"],
        "unknown": kinds["unknown"],
        "unknown_total": money["unknown"],
        "match_rate": round(kinds["matched"] / lines, 4) if lines else 0.0,
        "confirmed": run.confirmed,
        "learned": len(run.learned),
        "by_name": dict(names),
        "by_amount": dict(amounts),
        "fees": fees,
        "overpaid": over,
        "invoices": len(invoices),
        "invoices_open_before": len(opened),
        "invoices_cleared": sum(1 for i in opened if i.balance == 0),
        "invoices_partly_paid": sum(1 for i in open_after if i.balance < i.opening),
        "unpaid": len(open_after),
        "unpaid_total": sum(i.balance for i in open_after),
    }


_MONEY = ("入金額", "請求金額", "消込前残高", "消込額", "差額", "消込後残高")


def _line_cells(cells: dict[str, list[Any]], line: Deposit, deposits: Table) -> None:
    cells[_ROWS].append(line.row)
    cells["照会番号"].append(line.reference)
    cells["勘定日"].append(line.date)
    cells["振込依頼人名"].append(line.payer)
    cells["入金額"].append(line.amount)
    cells["位置"].append(deposits.where(line.row))


def _question_cells(cells: dict[str, list[Any]], line: Deposit, deposits: Table) -> None:
    """A line a person is asked about (要確認, 不明入金): the line, its 確認ID and EDI情報."""
    _line_cells(cells, line, deposits)
    cells["確認ID"].append(line.question_id)
    cells["EDI情報"].append(line.edi)


def _table(
    cells: dict[str, list[Any]],
    columns: Sequence[str],
    deposits: Table,
    *,
    dates: Sequence[str],
    ints: Sequence[str],
) -> Table:
    data: dict[str, pd.Series] = {}
    for name in columns:
        if name in dates:
            data[name] = pd.to_datetime(pd.Series(cells[name], dtype=object))
        elif name in ints:
            data[name] = pd.Series(cells[name], dtype="int64")
        else:
            data[name] = pd.Series(cells[name], dtype=object)
    frame = pd.DataFrame(data, columns=list(columns))
    return deposits.derive(frame, cells[_ROWS])
