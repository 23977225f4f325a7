"""CSV and Excel statements of Internet banking, read into bank lines by their Japanese headers.

The file is read by ``read_table`` (encoding, delimiter, title rows above the header, Excel),
then its columns are given roles by their header, compared after NFKC, without spaces, without
a unit in brackets (``入金額（円）`` is ``入金額``) and case-folded, against ``COLUMN_NAMES``:

* date (required): 取引日, 日付, 年月日, 勘定日, お取引日, 取扱日, 取引年月日, 入出金日;
* deposit (required): お預り金額, お預かり金額, お預入れ, お預入れ金額, 入金額, 入金金額, 入金,
  預入金額, お預け入れ金額;
* withdrawal: お引出し金額, お引き出し金額, お引出金額, 出金額, 出金金額, 出金, お支払金額,
  お支払い金額, 支払金額, 引出金額;
* description: お取引内容, 取引内容, 摘要, 摘要内容, 内容, お取扱内容;
* payer: 振込依頼人名, 振込依頼人, ご依頼人名, 依頼人名, 振込人名;
* edi: EDI情報, EDI.

A role two columns claim, or a missing date or deposit column, is an error naming the columns
the file has; ``columns`` (role → header) overrides the table. Each row with an amount becomes
one line, its reference the 1-based data row (the first row under the header is 1); a row
with neither amount (a 繰越 line with only a balance) is skipped and counted in a warning; a
row with both, a negative or fractional amount, or no readable date is an error naming the
data row, the column and the value. Dates with the year last (``13/02/2026``) are read in the
order the date column's cells show (``table_date_order``, as ``read_table`` reads them); a
column that shows none, or both, is refused with why.

The payer is the payer column as written, else, for a deposit, the 摘要 without the word of
the bank's that names the kind of transfer before it (the party words of
:data:`keiri_agent.bank_words.BANK_WORD_TABLE`, in any spelling: 振込, 振込入金, ﾌﾘｺﾐ, ﾃﾞﾝｼﾝ,
ｶﾞｲﾀﾒ, ATM ...) and the spaces or ``*`` after it: ``振込　ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``, ``ﾌﾘｺﾐ ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``
and ``ﾃﾞﾝｼﾝ ｶ)ｱｵﾊﾞｼﾖｳｼﾞ`` give ``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``; a 摘要 without one, or that is nothing but
one, is the payer as it is (a withdrawal's 摘要, ``ﾌﾘｺﾐﾃｽｳﾘﾖｳ``, names no payer). Nothing else is changed: normalizing names
is the matcher's work.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd

from keiri_agent.bank_words import leading_party_word
from keiri_agent.documents.bank_lines import BankLine, BankStatement
from keiri_agent.documents.cell_forms import (
    amount_problem,
    is_dash,
    read_amount,
    read_date,
)
from keiri_agent.documents.failures import invalid_input, unreadable
from keiri_agent.documents.table_date_order import ColumnOrder, column_order, order_reason
from keiri_agent.documents.tables import read_table

__all__ = [
    "COLUMN_NAMES",
    "ROLE_LABELS",
    "Role",
    "payer_from_description",
    "read_bank_table",
]

Role = Literal["date", "deposit", "withdrawal", "description", "payer", "edi"]
ROLE_LABELS: dict[Role, str] = {
    "date": "日付",
    "deposit": "入金額",
    "withdrawal": "出金額",
    "description": "摘要",
    "payer": "振込依頼人名",
    "edi": "EDI情報",
}
COLUMN_NAMES: dict[Role, tuple[str, ...]] = {
    "date": ("取引日", "日付", "年月日", "勘定日", "お取引日", "取扱日", "取引年月日", "入出金日"),
    "deposit": (
        "お預り金額",
        "お預かり金額",
        "お預入れ",
        "お預入れ金額",
        "入金額",
        "入金金額",
        "入金",
        "預入金額",
        "お預け入れ金額",
    ),
    "withdrawal": (
        "お引出し金額",
        "お引き出し金額",
        "お引出金額",
        "出金額",
        "出金金額",
        "出金",
        "お支払金額",
        "お支払い金額",
        "支払金額",
        "引出金額",
    ),
    "description": ("お取引内容", "取引内容", "摘要", "摘要内容", "内容", "お取扱内容"),
    "payer": ("振込依頼人名", "振込依頼人", "ご依頼人名", "依頼人名", "振込人名"),
    "edi": ("EDI情報", "EDI"),
}

_NO_DATE = "空欄か、日付として読めません"
_UNIT = re.compile(r"\((?:単位:?)?円\)$|円$")
# What may stand between the transfer word of a 摘要 and the payer's name.
_AFTER_WORD = re.compile(r"[\s*＊:：・]*")


def _header_key(name: str) -> str:
    text = "".join(unicodedata.normalize("NFKC", str(name)).split())
    return _UNIT.sub("", text).casefold()


_ROLE_BY_KEY: dict[str, Role] = {
    _header_key(name): role for role, names in COLUMN_NAMES.items() for name in names
}


def payer_from_description(text: str) -> str:
    """The payer's name in a 摘要, as written: without the transfer word it begins with."""
    stripped = text.strip()
    word = leading_party_word(stripped)
    after = _AFTER_WORD.match(stripped, len(word))
    rest = stripped[after.end() :].strip() if word and after is not None else ""
    return rest or stripped


def _find_columns(
    label: str, names: list[str], override: Mapping[str, str] | None
) -> dict[Role, str]:
    claims: dict[Role, list[str]] = {}
    for name in names:
        role = _ROLE_BY_KEY.get(_header_key(name))
        if role is not None:
            claims.setdefault(role, []).append(name)
    roles: dict[str, Role] = {role: role for role in get_args(Role)}
    for role_name, column in (override or {}).items():
        if role_name not in roles or column not in names:
            raise invalid_input(
                label,
                f"列の指定 {role_name}={column!r} が使えません（役割は {', '.join(get_args(Role))}、"
                f"列は「{'」「'.join(names)}」のどれかです）。",
                "役割と、ファイルの見出しにある列名を指定してください。",
                role=role_name,
                column=column,
            )
        claims[roles[role_name]] = [column]
    for role, columns in claims.items():
        if len(columns) > 1:
            raise unreadable(
                label,
                f"「{label}」では{ROLE_LABELS[role]}にあたる列が {len(columns)} つあります"
                f"（「{'」「'.join(columns)}」）。どれを使うか決められません。",
                "使わない列の見出しを変えて保存し直してください。",
                role=role,
                columns=columns,
            )
    missing = [ROLE_LABELS[r] for r in ("date", "deposit") if r not in claims]
    if missing:
        accepted = "、".join(
            f"{ROLE_LABELS[r]}: {'・'.join(COLUMN_NAMES[r])}" for r in ("date", "deposit")
        )
        raise unreadable(
            label,
            f"「{label}」に{'・'.join(missing)}の列が見つかりません（見出しは「{'」「'.join(names)}」）。",
            f"入出金明細の見出しに次のどれかを使ってください（{accepted}）。入金と出金が 1 つの金額列と"
            "区分の列に分かれている明細は読めません。",
            columns=names,
        )
    return {role: columns[0] for role, columns in claims.items()}


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NaT or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _amount(value: Any) -> int | str | None:
    """A yen amount (None for no amount), or why the cell is not one (Japanese)."""
    if _is_missing(value):
        return None
    if isinstance(value, str):
        if not value.strip() or is_dash(value):
            return None
        parsed = read_amount(value)
        if parsed is None:
            return amount_problem(value)
        value = parsed
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "金額として読めません"
    if value < 0:
        return "マイナスの金額です（入金と出金は別の列に書かれているはずです）"
    if value != int(value):
        return "円未満の端数があります"
    return int(value) or None


def _amount_column(label: str, column: str, series: pd.Series) -> list[int | None]:
    """Every cell of an amount column in yen (None: no amount); the first bad cell refused.
    A column ``read_table`` already made numbers is checked in one pass."""
    if series.dtype.kind in "iuf":
        values = series.to_numpy(dtype="float64", na_value=np.nan)
        known = ~np.isnan(values)
        bad = known & ((values < 0) | (values != np.floor(values)))
        if bad.any():
            index = int(np.argmax(bad))
            value = series.iloc[index]
            raise _cell_error(label, index + 1, column, value, str(_amount(float(value))))
        return [
            int(v) if k and v else None
            for v, k in zip(values.tolist(), known.tolist(), strict=True)
        ]
    amounts: list[int | None] = []
    for index, value in enumerate(series.tolist()):
        read = _amount(value)
        if isinstance(read, str):
            raise _cell_error(label, index + 1, column, value, read)
        amounts.append(read)
    return amounts


def _date(value: Any, order: ColumnOrder) -> dt.date | str:
    """The date of a cell of the date column, whose dates with the year last (``13/02/2026``)
    are read in ``order`` (``column_order``), or why it is not one (Japanese)."""
    if _is_missing(value):
        # read_table may have blanked a cell it could not read as a date (and said so in its
        # warnings): the cell is then empty here either way.
        return _NO_DATE
    if isinstance(value, dt.datetime | pd.Timestamp):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and value == int(value):
        value = str(int(value))  # 20260203 read as a number
    if isinstance(value, str):
        parsed = read_date(value, order.order)
        if parsed is None:
            return order_reason(value, order)
        return parsed.date() if isinstance(parsed, dt.datetime) else parsed
    return "日付として読めません"


def _cell_error(label: str, row: int, column: str, value: Any, problem: str) -> Exception:
    cell = f"列「{column}」が" if problem == _NO_DATE else f"列「{column}」の「{value}」: "
    return unreadable(
        label,
        f"「{label}」のデータ {row} 行目、{cell}{problem}。",
        "銀行からダウンロードしたままのファイルを指定するか、その行を直して保存し直してください。",
        row=row,
        column=column,
        value=str(value),
        problem=problem,
    )


def _text(value: Any) -> str:
    return "" if _is_missing(value) else str(value).strip()


def read_bank_table(
    source: Path | str | bytes,
    *,
    name: str | None = None,
    sheet: str | int | None = None,
    columns: Mapping[str, str] | None = None,
) -> BankStatement:
    """Read a CSV/Excel statement (see the module docstring) into a ``BankStatement``."""
    table = read_table(source, name=name, sheet=sheet)
    frame, info = table.df, table.info
    label = info.file
    roles = _find_columns(label, [str(c) for c in frame.columns], columns)
    warnings = list(info.warnings)
    if "payer" not in roles and "description" not in roles:
        warnings.append(
            f"「{label}」に振込依頼人名・摘要の列がないため、入金者の名前は空になります。"
        )
    empty: list[Any] = [None] * len(frame)
    deposits = _amount_column(label, roles["deposit"], frame[roles["deposit"]])
    withdrawals = (
        _amount_column(label, roles["withdrawal"], frame[roles["withdrawal"]])
        if "withdrawal" in roles
        else empty
    )
    cells = {role: frame[column].tolist() for role, column in roles.items()}
    dates: dict[Any, dt.date | str] = {}  # a statement has few distinct dates
    order = column_order(frame[roles["date"]].dropna())
    skipped: list[int] = []
    lines: list[BankLine] = []
    for index, (deposit, withdrawal) in enumerate(zip(deposits, withdrawals, strict=True)):
        row = index + 1
        if deposit is None and withdrawal is None:
            skipped.append(row)
            continue
        if deposit is not None and withdrawal is not None:
            both = f"「{roles['deposit']}」と「{roles['withdrawal']}」"
            raise _cell_error(
                label, row, roles["deposit"], deposit, f"{both}の両方に金額があります"
            )
        cell = cells["date"][index]
        date = dates.get(cell) if isinstance(cell, Hashable) else None
        if date is None:
            date = _date(cell, order)
            if isinstance(cell, Hashable):
                dates[cell] = date
        if isinstance(date, str):
            raise _cell_error(label, row, roles["date"], _text(cell), date)
        description = _text(cells.get("description", empty)[index])
        payer = _text(cells["payer"][index]) if "payer" in roles else ""
        lines.append(
            BankLine(
                reference=str(row),
                date=date,
                amount=deposit if deposit is not None else withdrawal,
                direction="deposit" if deposit is not None else "withdrawal",
                payer=payer or (payer_from_description(description) if deposit else ""),
                record=row,
                description=description,
                edi=_text(cells.get("edi", empty)[index]),
            )
        )
    if skipped:
        shown = "、".join(map(str, skipped[:5])) + (" ほか" if len(skipped) > 5 else "")
        warnings.append(
            f"「{label}」の入金額・出金額のない {len(skipped):,} 行（データ {shown} 行目）は"
            "読み飛ばしました。"
        )
    return BankStatement(
        file=label,
        format="table",
        lines=tuple(lines),
        encoding=info.encoding,
        columns={role: str(column) for role, column in roles.items()},
        warnings=tuple(warnings),
    )
