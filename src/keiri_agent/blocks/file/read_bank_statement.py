"""``file.read_bank_statement``: the deposits of a bank file, as a table 入金消込 takes.

A thin block over :func:`keiri_agent.documents.read_bank_statement`: a 全銀協 振込入金通知 or
入出金取引明細, or the CSV/Excel statement of an Internet bank, becomes ``deposits``, one row
per deposit (入金 that is not a 取消 / 訂正) in file order with the columns of
:data:`DEPOSIT_COLUMNS`. Each row remembers where it is in the file (the record number of a
全銀協 file, the data row of a statement), so a later block names it as the user finds it
(``入金.txt の 3 件目のレコード``). Withdrawals and corrections are counted in ``info``, never
passed on; the file layer's errors (a truncated record, a wrong record length, an unknown
record type: file, record, field, what was expected) reach the user unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import choice, port_file, port_path, sheet_ref
from keiri_agent.documents import BankAccount, BankStatement, read_bank_statement
from keiri_agent.documents.bank_lines import FORMAT_LABELS
from keiri_agent.documents.bank_table import ROLE_LABELS
from keiri_agent.documents.table_value import Table, TableOrigin
from keiri_agent.errors import input_error

__all__ = ["DEPOSIT_COLUMNS", "ReadBankStatementBlock", "deposit_table"]

# The columns of ``deposits``, in order (table.match_payments finds them by these names).
DEPOSIT_COLUMNS = (
    "照会番号",
    "勘定日",
    "入金額",
    "振込依頼人名",
    "EDI情報",
    "仕向銀行",
    "仕向支店",
    "口座",
)
YEAR_STYLES = ("auto", "wareki", "seireki")
# 預金種目 of a 全銀協 header, as a statement names them.
DEPOSIT_TYPES = {"1": "普通", "2": "当座", "4": "貯蓄", "9": "その他"}

_ROLE_NAMES: dict[str, str] = {str(role): label for role, label in ROLE_LABELS.items()}


class ReadBankStatementBlock(ProcessingBlock):
    """Reads ``path`` into ``deposits`` (a positioned table) and ``info`` (what was read)."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        port_path(self.spec, "path", inputs.get("path"))
        _year_style(inputs)
        sheet_ref(inputs.get("sheet"))
        _columns(inputs.get("columns"))

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        path = port_file(self.spec, "path", inputs.get("path"), ctx=ctx)
        ctx.check_cancelled()
        statement = read_bank_statement(
            path,
            year_style=_year_style(inputs),  # type: ignore[arg-type]
            sheet=sheet_ref(inputs.get("sheet")),
            columns=_columns(inputs.get("columns")),
        )
        info = statement_info(statement)
        for warning in statement.warnings:
            ctx.log(warning, level="warning")
        counts = info["counts"]
        ctx.log(
            f"{statement.file}（{info['format']}）から入金 {counts['deposits']:,} 件を読み込みました"
            f"（出金 {counts['withdrawals']:,} 件・取消/訂正 {counts['corrections']:,} 件は対象外）"
        )
        return {"deposits": deposit_table(statement), "info": info}


def deposit_table(statement: BankStatement) -> Table:
    """The deposits of ``statement`` as a table (:data:`DEPOSIT_COLUMNS`), each row positioned
    at its record (全銀協) or data row (CSV/Excel)."""
    lines = statement.deposits
    accounts = [_account_text(a) for a in statement.accounts]
    frame = pd.DataFrame(
        {
            "照会番号": pd.Series([x.reference for x in lines], dtype=object),
            "勘定日": pd.to_datetime(pd.Series([x.date for x in lines], dtype=object)),
            "入金額": pd.Series([x.amount for x in lines], dtype="int64"),
            "振込依頼人名": pd.Series([x.payer for x in lines], dtype=object),
            "EDI情報": pd.Series([x.edi for x in lines], dtype=object),
            "仕向銀行": pd.Series([x.bank_name for x in lines], dtype=object),
            "仕向支店": pd.Series([x.branch_name for x in lines], dtype=object),
            "口座": pd.Series(
                [accounts[x.account] if x.account is not None else "" for x in lines],
                dtype=object,
            ),
        },
        columns=list(DEPOSIT_COLUMNS),
    )
    return Table(
        frame,
        origin=TableOrigin(statement.file, "data_row" if statement.format == "table" else "record"),
        positions=[x.record for x in lines],
    )


def statement_info(statement: BankStatement) -> dict[str, Any]:
    """What was read: the file, its format, the accounts, the counts and totals, warnings."""
    summary = statement.summary()
    return {
        "file": statement.file,
        "format": FORMAT_LABELS[statement.format],
        "format_code": statement.format,
        "encoding": statement.encoding,
        "year_style": statement.year_style,
        "accounts": [_account_info(a) for a in statement.accounts],
        "columns": {_ROLE_NAMES.get(r, r): c for r, c in statement.columns.items()},
        "counts": {
            key: summary[key]["count"] for key in ("deposits", "withdrawals", "corrections")
        },
        "totals": {
            key: summary[key]["total"] for key in ("deposits", "withdrawals", "corrections")
        },
        "position_kind": "data_row" if statement.format == "table" else "record",
        "warnings": list(statement.warnings),
    }


def _account_text(account: BankAccount) -> str:
    kind = DEPOSIT_TYPES.get(account.deposit_type, account.deposit_type)
    return f"{account.bank_name} {account.branch_name} {kind} {account.account_number}".strip()


def _account_info(account: BankAccount) -> dict[str, Any]:
    return {
        "bank_code": account.bank_code,
        "bank_name": account.bank_name,
        "branch_code": account.branch_code,
        "branch_name": account.branch_name,
        "deposit_type": DEPOSIT_TYPES.get(account.deposit_type, account.deposit_type),
        "account_number": account.account_number,
        "account_name": account.account_name,
        "period_from": account.period_from.isoformat() if account.period_from else None,
        "period_to": account.period_to.isoformat() if account.period_to else None,
        "opening_balance": account.opening_balance,
        "closing_balance": account.closing_balance,
    }


def _year_style(inputs: Mapping[str, Any]) -> str:
    return choice(
        inputs,
        "year_style",
        YEAR_STYLES,
        "全銀協ファイルの日付が和暦なら wareki、西暦なら seireki、わからなければ auto",
        default="auto",
    )


def _columns(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items()
    ):
        raise input_error(
            f"columns は {{役割: 見出し}} の形で指定してください（指定: {value!r}）。",
            "例: columns: {date: 取引日, deposit: お預り金額, description: 摘要}"
            "（役割は date・deposit・withdrawal・description・payer・edi）",
            field="columns",
        )
    return {str(k): str(v).strip() for k, v in value.items()}
