"""``read_bank_statement``: any bank file a user downloads, read into one ``BankStatement``.

What the file is decides the reader, not its name: a file that starts like a 全銀協 header
record (データ区分 1, a two-digit 種別コード, コード区分 0/1, no comma or tab in the first record)
is read by ``zengin`` (振込入金通知, 入出金取引明細; the other 全銀協 kinds and EBCDIC are refused
with what they are); anything else by ``bank_table`` as a CSV/TSV/Excel statement with Japanese
headers. Both give the same lines (``bank_lines``) for the same deposits.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from keiri_agent.documents.bank_lines import BankStatement
from keiri_agent.documents.bank_table import read_bank_table
from keiri_agent.documents.failures import invalid_input
from keiri_agent.documents.source import read_source
from keiri_agent.documents.zengin import read_zengin
from keiri_agent.documents.zengin_dates import YEAR_STYLES, YearStyle
from keiri_agent.documents.zengin_records import is_ebcdic_zengin, looks_like_zengin

__all__ = ["read_bank_statement"]

UNNAMED = "<bytes>"


def read_bank_statement(
    source: Path | str | bytes,
    *,
    name: str | None = None,
    year_style: Literal["auto", "wareki", "seireki"] = "auto",
    today: dt.date | None = None,
    sheet: str | int | None = None,
    columns: Mapping[str, str] | None = None,
) -> BankStatement:
    """Read a bank file: a 全銀協 振込入金通知 / 入出金取引明細, or a CSV/Excel statement.

    ``source`` is a path or the file's bytes (``name`` then names it in messages and gives a
    table its extension). For 全銀協 files, ``year_style`` says how six-digit dates are
    written ("wareki" 和暦, the format's own; "seireki" the Western-year variant; "auto"
    decides from the file's dates relative to ``today``, default the local date). For
    tables, ``sheet`` chooses the Excel sheet and ``columns`` maps roles (date, deposit,
    withdrawal, description, payer, edi) to headers where the headers are not the usual ones.

    Raises ``FileProcessingError`` (FILE_UNREADABLE for a malformed file, located;
    UNSUPPORTED_FORMAT for a file that is not a statement; FILE_TOO_LARGE;
    INPUT_VALIDATION_FAILED for a bad ``year_style`` or ``columns``).
    """
    if isinstance(source, bytes | bytearray | memoryview):
        label = name or UNNAMED
    else:
        label = name or Path(source).name
    if year_style != "auto" and year_style not in YEAR_STYLES:
        raise invalid_input(
            label,
            f"year_style={year_style!r} は使えません（auto・wareki・seireki のどれかです）。",
            "全銀協ファイルの日付が和暦なら wareki、西暦なら seireki、わからなければ auto を指定してください。",
            year_style=year_style,
        )
    data = read_source(source, label=label)
    if looks_like_zengin(data) or is_ebcdic_zengin(data):
        style: YearStyle | None = None if year_style == "auto" else year_style
        return read_zengin(data, label, year_style=style, today=today or dt.date.today())
    return read_bank_table(data, name=label, sheet=sheet, columns=columns)
