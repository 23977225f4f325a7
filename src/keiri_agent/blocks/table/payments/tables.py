"""The four tables of 入金消込 read into invoices, bank lines, customers and learned names.

Columns are found by their Japanese headers (:data:`ROLES`: 請求番号, 取引先コード, 取引先名,
請求金額, 支払期日, 入金済額 / 残高 for the 請求一覧; 照会番号, 勘定日 and the other headers of
bank statements (``documents.bank_table.COLUMN_NAMES``) for the deposits; 取引先名カナ for the
master; 振込依頼人名 for learned names), compared after NFKC, without spaces, case-folded; a
``columns`` mapping (role → header) names them where the headers are others. A role two
columns claim is an error, as is a required role no column has.

Cells are read by columns (:mod:`keiri_agent.blocks.table.column_values`); amounts must be
whole yen. Every unreadable cell, every blank invoice number and every invoice number given
twice is reported at once, each where the user finds it (``Table.where``: the file line, the
sheet row, the 全銀 record). A deposits row without an amount (a withdrawal of a statement read
as it is) is not a deposit: it is counted, not matched.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.column_values import read_amounts, read_dates
from keiri_agent.blocks.table.payments.directory import name_id
from keiri_agent.blocks.table.payments.model import Customer, Deposit, Invoice
from keiri_agent.documents.bank_table import COLUMN_NAMES, payer_from_description
from keiri_agent.documents.table_value import Table, json_cell
from keiri_agent.errors import BlockError, input_error

__all__ = [
    "ROLES",
    "DepositRows",
    "InvoiceRows",
    "read_aliases",
    "read_customers",
    "read_deposits",
    "read_invoices",
]

MAX_LISTED = 10  # problems spelled out in one message; all are in the details
_CODE = ("取引先コード", "得意先コード", "顧客コード", "取引先CD", "得意先CD", "コード")
_NAME = ("取引先名", "得意先名", "取引先", "得意先", "顧客名", "請求先", "請求先名")
# Headers of each role of each table (the first role of a tuple is its English name).
ROLES: dict[str, dict[str, tuple[str, ...]]] = {
    "invoices": {
        "number": ("請求番号", "請求書番号", "請求No", "請求No.", "請求書No", "伝票番号", "請求ID"),
        "code": _CODE,
        "name": _NAME,
        "amount": ("請求金額", "請求額", "金額", "請求合計", "税込金額", "請求金額(税込)"),
        "due": ("支払期日", "入金予定日", "期日", "支払期限", "入金期日", "支払予定日"),
        "paid": ("入金済額", "入金済金額", "消込済額", "既入金額"),
        "balance": ("残高", "未入金額", "請求残高", "売掛残高", "未収残高"),
    },
    "deposits": {
        "reference": ("照会番号",),
        "date": COLUMN_NAMES["date"],
        "amount": COLUMN_NAMES["deposit"],
        "payer": COLUMN_NAMES["payer"],
        "description": COLUMN_NAMES["description"],
        "edi": COLUMN_NAMES["edi"],
    },
    "customers": {
        "code": _CODE,
        "name": _NAME,
        "kana": (
            "取引先名カナ",
            "得意先名カナ",
            "取引先カナ",
            "得意先カナ",
            "フリガナ",
            "カナ",
            "ヨミ",
        ),
    },
    "aliases": {
        "payer": (*COLUMN_NAMES["payer"], "振込名義", "名義"),
        "code": _CODE,
        "name": _NAME,
    },
}
_REQUIRED = {
    "invoices": ("number", "amount"),
    "deposits": ("date", "amount"),
    "customers": (),
    "aliases": ("payer",),
}
_LABELS = {
    "invoices": "請求一覧",
    "deposits": "入金明細",
    "customers": "取引先マスタ",
    "aliases": "学習済みの名義",
}


@dataclass(frozen=True)
class InvoiceRows:
    invoices: list[Invoice]
    customers: list[Customer]  # the customers the invoices name (code and the first name)
    closed: int  # rows with nothing open (paid in full, or 0 or less)
    has_codes: bool


@dataclass(frozen=True)
class DepositRows:
    lines: list[Deposit]
    skipped: int  # rows without a deposit amount (withdrawals of a statement)


def _header_key(name: str) -> str:
    return "".join(unicodedata.normalize("NFKC", str(name)).split()).casefold()


def columns_of(table: Table, kind: str, given: Mapping[str, str] | None) -> dict[str, str]:
    """Role → column of ``table`` (a ``kind`` of :data:`ROLES`), ``given`` first."""
    roles = ROLES[kind]
    label = _LABELS[kind]
    found: dict[str, list[str]] = {}
    by_key = {_header_key(h): role for role, headers in roles.items() for h in headers}
    for column in table.columns:
        role = by_key.get(_header_key(column))
        if role is not None:
            found.setdefault(role, []).append(column)
    field = f"{kind}_columns"
    for role, column in (given or {}).items():
        if role not in roles or column not in table.columns:
            raise input_error(
                f"{field} の {role}: {column!r} が使えません（役割は {', '.join(roles)}、"
                f"列は {label}の「{'」「'.join(table.columns)}」のどれかです）。",
                f"{field} には {{役割: {label}の見出し}} を指定してください。",
                field=field,
            )
        found[role] = [column]
    for role, columns in found.items():
        if len(columns) > 1:
            raise input_error(
                f"{label}に {role} にあたる列が {len(columns)} つあります（「{'」「'.join(columns)}」）。",
                f"使う列を {field} で指定してください（例: {field}: {{{role}: {columns[0]}}}）。",
                field=field,
                columns=columns,
            )
    chosen = {role: columns[0] for role, columns in found.items()}
    missing = [r for r in _REQUIRED[kind] if r not in chosen]
    if kind == "invoices" and "code" not in chosen and "name" not in chosen:
        missing.append("code / name")
    if kind == "aliases" and "code" not in chosen and "name" not in chosen:
        missing.append("code / name")
    if missing and len(table):
        wanted = "、".join(
            f"{r}（{'・'.join(roles.get(r, ROLES[kind]['code']))}）" for r in missing
        )
        raise input_error(
            f"{label}に必要な列が見つかりません: {wanted}（見出しは「{'」「'.join(table.columns)}」）。",
            f"見出しをこの名前にするか、{field} で {{役割: 見出し}} を指定してください。",
            field=field,
            missing=missing,
            columns=table.columns,
        )
    return chosen


def read_invoices(
    table: Table, given: Mapping[str, str] | None, zone: dt.tzinfo | None = None
) -> InvoiceRows:
    """The 請求一覧 as invoices (``order``: by due date, then row; a due time with a UTC
    offset is on its day in ``zone``)."""
    columns = columns_of(table, "invoices", given)
    problems: list[str] = []
    numbers = _texts(table, columns.get("number"))
    codes = _texts(table, columns.get("code"))
    names = _texts(table, columns.get("name"))
    amounts = _yen(table, columns["amount"], problems, required=True) if len(table) else []
    paid = _yen(table, columns.get("paid"), problems)
    balance = _yen(table, columns.get("balance"), problems)
    dues = _dates(table, columns.get("due"), problems, zone)
    seen: dict[str, int] = {}
    for row, number in enumerate(numbers):
        if not number:
            problems.append(f"{table.where(row, columns['number'])}: 請求番号が空欄です")
        elif number in seen:
            first = table.where(seen[number])
            problems.append(
                f"{table.where(row, columns['number'])}: 請求番号 {number} が {first} と重複しています"
            )
        else:
            seen[number] = row
        if not codes[row] and not names[row]:
            problems.append(f"{table.where(row)}: 取引先コードも取引先名も空欄です")
    if problems:
        raise _problems("請求一覧", problems)
    has_codes = "code" in columns
    customers: dict[str, Customer] = {}
    rows: list[tuple[dt.date, int, Invoice]] = []
    closed = 0
    for row in range(len(table)):
        amount = amounts[row] or 0
        left = balance[row]
        opening = left if left is not None else amount - (paid[row] or 0)
        ident = codes[row] if has_codes and codes[row] else name_id(names[row])
        customers.setdefault(ident, Customer(ident, codes[row], names[row] or codes[row]))
        if not customers[ident].name and names[row]:
            customers[ident] = Customer(ident, codes[row], names[row])
        if opening <= 0:
            closed += 1
        invoice = Invoice(row, 0, numbers[row], ident, amount, max(opening, 0), dues[row])
        rows.append((invoice.due_key, row, invoice))
    rows.sort(key=lambda item: (item[0], item[1]))
    invoices = []
    for order, (_, _, invoice) in enumerate(rows):
        invoice.order = order
        invoices.append(invoice)
    return InvoiceRows(invoices, list(customers.values()), closed, has_codes)


def read_deposits(
    table: Table, given: Mapping[str, str] | None, zone: dt.tzinfo | None = None
) -> DepositRows:
    """The bank lines of a deposits table (from ``file.read_bank_statement`` or any table; a
    time with a UTC offset is on its day in ``zone``)."""
    columns = columns_of(table, "deposits", given)
    if not len(table):
        return DepositRows([], 0)
    problems: list[str] = []
    amounts = _yen(table, columns["amount"], problems)
    days = _dates(table, columns["date"], problems, zone)
    references = _texts(table, columns.get("reference"))
    payers = _texts(table, columns.get("payer"))
    descriptions = _texts(table, columns.get("description"))
    edis = _texts(table, columns.get("edi"))
    lines: list[Deposit] = []
    skipped = 0
    for row, amount in enumerate(amounts):
        if amount is None or amount == 0:
            skipped += 1
            continue
        if amount < 0:
            problems.append(
                f"{table.where(row, columns['amount'])}: 入金額がマイナスです（{amount:,}）"
            )
            continue
        day = days[row]
        if day is None:
            problems.append(f"{table.where(row, columns['date'])}: 日付が空欄です")
            continue
        payer = payers[row] or payer_from_description(descriptions[row])
        reference = references[row] if "reference" in columns else str(row + 1)
        lines.append(Deposit(row, reference, day, amount, payer, edis[row]))
    if problems:
        raise _problems("入金明細", problems)
    return DepositRows(lines, skipped)


def read_customers(table: Table, given: Mapping[str, str] | None) -> list[Customer]:
    """The customer master (code, name, kana); a row without code and name is left out."""
    columns = columns_of(table, "customers", given)
    if not len(table):
        return []
    if "code" not in columns and "name" not in columns:
        raise input_error(
            f"取引先マスタに取引先コード・取引先名の列がありません（見出しは「{'」「'.join(table.columns)}」）。",
            "取引先マスタには 取引先コード と 取引先名（あれば 取引先名カナ）の列を用意してください。",
            field="customer_columns",
        )
    codes = _texts(table, columns.get("code"))
    names = _texts(table, columns.get("name"))
    kanas = _texts(table, columns.get("kana"))
    customers = []
    for code, name, kana in zip(codes, names, kanas, strict=True):
        if code or name:
            ident = code if "code" in columns and code else name_id(name)
            customers.append(Customer(ident, code, name or code, kana))
    return customers


def read_aliases(table: Table, given: Mapping[str, str] | None) -> list[tuple[str, str]]:
    """Learned payer names: (振込依頼人名, 取引先コード or 取引先名), blank rows left out."""
    columns = columns_of(table, "aliases", given)
    if not len(table):
        return []
    payers = _texts(table, columns["payer"])
    codes = _texts(table, columns.get("code"))
    names = _texts(table, columns.get("name"))
    return [
        (payer, code or name)
        for payer, code, name in zip(payers, codes, names, strict=True)
        if payer and (code or name)
    ]


def _texts(table: Table, column: str | None) -> list[str]:
    """A column as stripped texts ("" for blanks), each distinct cell converted once."""
    if column is None:
        return [""] * len(table)
    codes, uniques = pd.factorize(table.frame[column], use_na_sentinel=True)
    texts = [_text(value) for value in uniques.tolist()]
    texts.append("")  # code -1: a blank cell
    return [texts[code] for code in codes.tolist()]


def _text(value: object) -> str:
    cell = json_cell(value)
    return "" if cell is None else str(cell).strip()


def _yen(
    table: Table, column: str | None, problems: list[str], *, required: bool = False
) -> list[int | None]:
    """Whole-yen amounts of a column (None for blanks); unreadable cells are problems."""
    if column is None:
        return [None] * len(table)
    values, bad = read_amounts(table.frame[column])
    array = values.to_numpy(dtype="float64")
    out: list[int | None] = []
    for row, (value, unreadable) in enumerate(zip(array.tolist(), bad.tolist(), strict=True)):
        if unreadable:
            cell = table.frame[column].iloc[row]
            problems.append(f"{table.where(row, column)}: 「{cell}」は金額として読めません")
            out.append(None)
        elif value != value:  # NaN: blank
            if required:
                problems.append(f"{table.where(row, column)}: 金額が空欄です")
            out.append(None)
        elif value != int(value):
            problems.append(f"{table.where(row, column)}: 円未満の端数があります（{value}）")
            out.append(None)
        else:
            out.append(int(value))
    return out


def _dates(
    table: Table, column: str | None, problems: list[str], zone: dt.tzinfo | None
) -> list[dt.date | None]:
    if column is None:
        return [None] * len(table)
    days, bad = read_dates(table.frame[column], zone)
    out: list[dt.date | None] = (
        pd.to_datetime(days).to_numpy(dtype="datetime64[D]").astype(object).tolist()
    )
    for row in np.flatnonzero(bad).tolist():
        cell = table.frame[column].iloc[row]
        problems.append(f"{table.where(row, column)}: 「{cell}」は日付として読めません")
        out[row] = None
    return out


def _problems(label: str, problems: Sequence[str]) -> BlockError:
    listed = "、".join(problems[:MAX_LISTED])
    more = len(problems) - MAX_LISTED
    return input_error(
        f"{label}に読めない値が {len(problems)} 件あります: {listed}"
        + (f" ほか {more} 件" if more > 0 else ""),
        "金額は 110000、¥110,000、110,000円 のように、日付は 2026-02-28、2026/2/28、令和8年2月28日 の"
        "ように書いてください。請求番号は空欄にせず、1 つの請求に 1 つの番号にしてください。",
        problems=list(problems),
        table=label,
    )
