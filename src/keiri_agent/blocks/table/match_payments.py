"""``table.match_payments``: 入金消込 of bank deposits against open invoices, never a wrong match.

The block reads its tables (:mod:`.payments.tables`), puts the customers and the learned payer
names together (:mod:`.payments.directory`: the master, the invoices' customers, the
``aliases`` input and the learned-names store of :mod:`.payments.learned`), reads a person's
answers about the previous run's 要確認 lines (:mod:`.payments.confirm`) and matches every
bank line (:mod:`.payments.matcher`). The outputs are tables (:mod:`.payments.results`):
``matched`` 消込済, ``review`` 要確認 with ``questions`` (the requirements a
``ui.interactive_input`` asks them with), ``unpaid`` 未入金, ``unknown`` 不明入金, ``learned``
(the names a person asked to remember, for ``table.learn_payer_names``) and ``summary``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, given
from keiri_agent.blocks.inputs import flag
from keiri_agent.blocks.table.payments.amounts import Rules
from keiri_agent.blocks.table.payments.book import OpenInvoices
from keiri_agent.blocks.table.payments.confirm import MAX_QUESTIONS, questions, read_answers
from keiri_agent.blocks.table.payments.directory import Directory, name_id
from keiri_agent.blocks.table.payments.learned import LearnedNames, read_names_csv
from keiri_agent.blocks.table.payments.matcher import match
from keiri_agent.blocks.table.payments.model import Customer, Review
from keiri_agent.blocks.table.payments.results import (
    learned_table,
    matched_table,
    review_table,
    summary,
    unknown_table,
    unpaid_table,
)
from keiri_agent.blocks.table.payments.tables import (
    ROLES,
    InvoiceRows,
    read_aliases,
    read_customers,
    read_deposits,
    read_invoices,
)
from keiri_agent.blocks.table.records import table_from
from keiri_agent.config import load_settings
from keiri_agent.documents import read_table
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import input_error

__all__ = ["DEFAULT_FEE_TOLERANCE", "DEFAULT_MAX_COMBINED", "MAX_COMBINED", "MatchPaymentsBlock"]

# The usual bank transfer fees a customer takes off (先方負担の振込手数料): 440, 660 and 880 円
# are the most common; any shortfall up to this is read as a fee.
DEFAULT_FEE_TOLERANCE = 880
DEFAULT_MAX_COMBINED = 4  # the most invoices one transfer pays (まとめ入金)
MAX_COMBINED = 8  # the most max_combined may be: the search grows with it
_COLUMN_INPUTS = {
    "invoices": "invoice_columns",
    "deposits": "deposit_columns",
    "customers": "customer_columns",
}


@dataclass(frozen=True)
class Config:
    rules: Rules
    use_learned: bool
    columns: dict[str, dict[str, str] | None]


class MatchPaymentsBlock(ProcessingBlock):
    """Matches ``deposits`` to ``invoices``; see the module docstring."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _config(inputs)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        cfg = _config(inputs)
        invoices_table = table_from(inputs.get("invoices"), field="invoices")
        deposits_table = table_from(inputs.get("deposits"), field="deposits")
        invoices = read_invoices(invoices_table, cfg.columns["invoices"], ctx.zone)
        deposits = read_deposits(deposits_table, cfg.columns["deposits"], ctx.zone)
        master = read_customers(
            _optional_table(inputs.get("customers"), "customers", ctx), cfg.columns["customers"]
        )
        pairs = _aliases(inputs.get("aliases"), ctx)
        store = LearnedNames((ctx.settings or load_settings()).learned_payer_names_path())
        if cfg.use_learned:
            pairs += [(name.payer, name.code) for name in store.read()]
        customers = _customers(master, invoices)
        directory = Directory(customers, pairs)
        book = OpenInvoices(invoices.invoices)
        answers = read_answers(inputs.get("confirmations"), deposits.lines, directory, book)
        ctx.check_cancelled()
        result = match(deposits.lines, book, directory, cfg.rules, answers, ctx.check_cancelled)
        reviews = [o for o in result.outcomes if isinstance(o, Review)]
        numbers = summary(result, book.invoices)
        warnings = _warnings(deposits.skipped, invoices.closed, directory, len(reviews))
        numbers.update(
            {
                "questions": min(len(reviews), MAX_QUESTIONS),
                "deposit_rows_without_amount": deposits.skipped,
                "invoices_closed_before": invoices.closed,
                "learned_names": len(pairs),
                "learned_store": str(store.path) if cfg.use_learned else None,
                "fee_tolerance": cfg.rules.tolerance,
                "max_combined": cfg.rules.max_combined,
                "warnings": warnings,
            }
        )
        for warning in warnings:
            ctx.log(warning, level="warning")
        ctx.log(
            f"入金 {numbers['lines']:,} 件を照合しました: 消込済 {numbers['matched']:,} 件、"
            f"要確認 {numbers['review']:,} 件、不明入金 {numbers['unknown']:,} 件"
            f"（消込率 {numbers['match_rate']:.1%}）。未入金の請求 {numbers['unpaid']:,} 件"
        )
        known = directory.customers
        return {
            "matched": matched_table(result, deposits_table, known),
            "review": review_table(result, deposits_table),
            "questions": questions(reviews),
            "unpaid": unpaid_table(book.invoices, invoices_table, known),
            "unknown": unknown_table(result, deposits_table),
            "learned": learned_table(result.learned),
            "summary": numbers,
        }


def _config(inputs: Mapping[str, Any]) -> Config:
    tolerance = given(inputs, "fee_tolerance", DEFAULT_FEE_TOLERANCE)
    if isinstance(tolerance, bool) or not isinstance(tolerance, int) or tolerance < 0:
        raise input_error(
            f"fee_tolerance は 0 以上の整数（円）で指定してください（指定: {tolerance!r}）。",
            f"振込手数料として差し引かれてもよい額の上限です（既定 {DEFAULT_FEE_TOLERANCE} 円、0 なら手数料差引を認めません）。",
            field="fee_tolerance",
        )
    combined = given(inputs, "max_combined", DEFAULT_MAX_COMBINED)
    if (
        isinstance(combined, bool)
        or not isinstance(combined, int)
        or not 1 <= combined <= MAX_COMBINED
    ):
        raise input_error(
            f"max_combined は 1〜{MAX_COMBINED} の整数で指定してください（指定: {combined!r}）。",
            f"1 回の振込でまとめて支払われる請求の件数の上限です（既定 {DEFAULT_MAX_COMBINED}）。",
            field="max_combined",
        )
    use_learned = flag(
        inputs,
        "use_learned",
        True,
        "学習済みの名義（KEIRI_LEARNED_PAYER_NAMES）を使わないときは false。",
    )
    columns: dict[str, dict[str, str] | None] = {}
    for kind, name in _COLUMN_INPUTS.items():
        columns[kind] = _columns(inputs.get(name), name, kind)
    return Config(Rules(tolerance, combined), use_learned, columns)


def _columns(value: Any, name: str, kind: str) -> dict[str, str] | None:
    if value is None:
        return None
    roles = ROLES[kind]
    if (
        not isinstance(value, Mapping)
        or not all(isinstance(v, str) and v.strip() for v in value.values())
        or set(value) - set(roles)
    ):
        raise input_error(
            f"{name} は {{役割: 見出し}} の形で指定してください（指定: {value!r}）。",
            f"役割は {', '.join(roles)} です。例: {name}: {{{next(iter(roles))}: {roles[next(iter(roles))][0]}}}",
            field=name,
        )
    return {str(k): str(v).strip() for k, v in value.items()}


def _optional_table(value: Any, field: str, ctx: BlockContext) -> Table:
    """An optional table input: a table, records, or the path of a CSV / Excel file."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return Table.from_records([])
    if isinstance(value, str):
        return read_table(ctx.access.read(value, field)).table()
    return table_from(value, field=field)


def _aliases(value: Any, ctx: BlockContext) -> list[tuple[str, str]]:
    """The ``aliases`` input: a learned-names CSV (a path), or a table of them."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    if isinstance(value, str):
        return [(n.payer, n.code) for n in read_names_csv(ctx.access.read(value, "aliases"))]
    return read_aliases(table_from(value, field="aliases"), None)


def _customers(master: list[Customer], invoices: InvoiceRows) -> list[Customer]:
    """The master's customers, then the invoices' own. Invoices naming customers without codes
    take the master's code when a master customer has the same name."""
    if invoices.has_codes or not any(c.code for c in master):
        return [*master, *invoices.customers]
    by_name = {name_id(c.name): c for c in master if c.code}
    for invoice in invoices.invoices:
        found = by_name.get(invoice.customer)
        if found is not None:
            invoice.customer = found.id
    return [*master, *(c for c in invoices.customers if c.id not in by_name)]


def _warnings(skipped: int, closed: int, directory: Directory, reviews: int) -> list[str]:
    warnings = []
    if skipped:
        warnings.append(
            f"入金明細の {skipped:,} 行は入金額がない（出金など）ため照合していません。"
        )
    if closed:
        warnings.append(
            f"請求一覧の {closed:,} 件は残高がない（入金済み・0 円以下）ため対象外です。"
        )
    if directory.unknown_learned:
        shown = "、".join(f"{p} → {c}" for p, c in directory.unknown_learned[:5])
        warnings.append(
            f"学習済みの名義 {len(directory.unknown_learned):,} 件は取引先マスタにも請求一覧にもない"
            f"取引先を指すため使っていません（{shown}）。"
        )
    if reviews > MAX_QUESTIONS:
        warnings.append(
            f"要確認 {reviews:,} 件のうち、questions で尋ねるのは最初の {MAX_QUESTIONS} 件です"
            "（残りは review で確認してください）。"
        )
    return warnings
