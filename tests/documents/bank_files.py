"""Bank files written the way banks write them, for tests: 全銀協 振込入金通知, 入出金取引明細,
and the CSV / Excel statements of Internet banking, all from one list of deposits.

The 全銀協 records are written here field by field from the format's tables (widths listed in
each writer, independently of ``keiri_agent.documents.zengin_layout``), so a test that reads
what these write checks the reader's layout against a second transcription of the format.

Payers are written as the payer's bank writes them (``bank_payer``): half-width katakana,
small kana written large (ショウジ → ｼﾖｳｼﾞ), ー as ``-`` or ``ｰ``, the company form abbreviated
before or after the name (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``, ``ﾎｸﾄｳﾝﾕ(ｶ``), a customer code put first
(``1012ｶ)...``), cut at 48 characters. ``realistic_deposits`` gives deposits with every one of
these forms.
"""

from __future__ import annotations

import datetime as dt
import io
import random
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from openpyxl import Workbook

RECORD = 200
PAYER_CHARS = 48
CRLF = b"\r\n"

# Company forms of the 全銀協 abbreviation list (as written in a 振込依頼人名).
FORMS = {
    "株式会社": "ｶ",
    "有限会社": "ﾕ",
    "合同会社": "ﾄﾞ",
    "医療法人": "ｲ",
    "社会福祉法人": "ﾌｸ",
    "社団法人": "ｼﾔ",
    "学校法人": "ｶﾞｸ",
    "財団法人": "ｻﾞｲ",
}
_SMALL = str.maketrans("ァィゥェォャュョッヮ", "アイウエオヤユヨツワ")


def _half_width_table() -> dict[str, str]:
    """Full-width katakana → half-width, built from NFKC (which maps half to full)."""
    table: dict[str, str] = {}
    for code in range(0xFF61, 0xFFA0):
        half = chr(code)
        table.setdefault(unicodedata.normalize("NFKC", half), half)
        for mark in ("ﾞ", "ﾟ"):
            composed = unicodedata.normalize("NFKC", half + mark)
            if len(composed) == 1:
                table.setdefault(composed, half + mark)
    return table


_HALF = _half_width_table()


def half_width(text: str) -> str:
    """Katakana and ASCII text in half-width (as 全銀協 C fields hold it)."""
    return "".join(_HALF.get(ch, ch) for ch in text.replace("\u3000", " "))


def bank_payer(
    reading: str,
    form: str | None = None,
    *,
    suffix: bool = False,
    code: str = "",
    long_vowel: str = "-",
) -> str:
    """A payer name as a bank writes it from a full-width katakana ``reading``.

    ``form`` is a company form of ``FORMS`` (株式会社...) abbreviated before (``ｶ)NAME``) or,
    with ``suffix``, after the name (``NAME(ｶ``); ``code`` is put first; ``long_vowel`` is how
    ー is written (``-`` or ``ｰ``); the result is cut at 48 characters.
    """
    name = half_width(reading.translate(_SMALL)).replace("ｰ", long_vowel)
    if form is not None:
        abbr = FORMS[form]
        name = f"{name}({abbr}" if suffix else f"{abbr}){name}"
    return (code + name)[:PAYER_CHARS]


@dataclass(frozen=True)
class Deposit:
    """A transfer received: as it appears in every statement of the account."""

    date: dt.date
    amount: int
    payer: str  # as the bank writes it (bank_payer)
    edi: str = ""
    bank_name: str = "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ"
    branch_name: str = "ｼﾝｼﾞﾕｸ"


@dataclass(frozen=True)
class Withdrawal:
    """Money paid out: a transfer fee, a utility bill, a payment to a supplier."""

    date: dt.date
    amount: int
    description: str


@dataclass(frozen=True)
class Account:
    bank_code: str = "0005"
    bank_name: str = "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ"
    branch_code: str = "001"
    branch_name: str = "ﾎﾝﾃﾝ"
    deposit_type: str = "1"
    number: str = "1234567"
    name: str = "ｶ)ｹｲﾘｴ-ｼﾞｴﾝﾄ"
    opening_balance: int = 1_000_000


@dataclass
class Options:
    """How a 全銀協 file is written: its line breaks, date style, creation date, header period,
    a trailer that may be made to disagree (or count cancelled transfers in its 振込合計), an
    end-of-file mark; ``cancelled`` lists the indexes of deposits that a 振込入金通知 reports
    as cancelled (取消区分 1)."""

    newline: bytes = CRLF
    year_style: Literal["wareki", "seireki"] = "wareki"
    created: dt.date | None = None
    cancelled: Sequence[int] = ()
    trailer_count_delta: int = 0
    trailer_total_delta: int = 0
    cancels_in_total: bool = False
    end_mark: bytes = b""
    period: tuple[dt.date, dt.date] | None = None


def yymmdd(date: dt.date, style: Literal["wareki", "seireki"] = "wareki") -> str:
    """A date as 全銀協 writes it: 和暦 (令和) or Western two-digit year, YYMMDD."""
    year = date.year - 2018 if style == "wareki" else date.year % 100
    return f"{year:02d}{date.month:02d}{date.day:02d}"


def _n(value: int | str, width: int) -> bytes:
    text = str(value).rjust(width, "0")
    assert len(text) == width, (value, width)
    assert text.isdigit(), value
    return text.encode("ascii")


def _c(value: str, width: int) -> bytes:
    data = value.encode("cp932")
    assert len(data) <= width, (value, width)
    return data.ljust(width, b" ")


def _record(*parts: bytes) -> bytes:
    record = b"".join(parts)
    assert len(record) == RECORD, len(record)
    return record


def _file(records: list[bytes], options: Options) -> bytes:
    return options.newline.join(records) + options.newline + options.end_mark


def _period(lines: Sequence[Deposit | Withdrawal], options: Options) -> tuple[str, str, str]:
    dates = [line.date for line in lines] or [dt.date(2026, 2, 2)]
    created = options.created or max(dates)
    first, last = options.period or (min(dates), max(dates))
    style = options.year_style
    return yymmdd(created, style), yymmdd(first, style), yymmdd(last, style)


def transfer_notice(
    deposits: Sequence[Deposit], account: Account = Account(), options: Options | None = None
) -> bytes:
    """A 全銀協 振込入金通知 (種別コード 01) reporting ``deposits``."""
    options = options or Options()
    created, first, last = _period(deposits, options)
    header = _record(
        b"1",
        b"01",
        b"0",
        created.encode(),
        first.encode(),
        last.encode(),
        _n(account.bank_code, 4),
        _c(account.bank_name, 15),
        _n(account.branch_code, 3),
        _c(account.branch_name, 15),
        _n(account.deposit_type, 1),
        _n(account.number, 7),
        _c(account.name, 40),
        _c("", 93),
    )
    records = [header]
    for index, deposit in enumerate(deposits):
        day = yymmdd(deposit.date, options.year_style).encode()
        cancel = b"1" if index in options.cancelled else b" "
        records.append(
            _record(
                b"2",
                _n(index + 1, 6),
                day,
                day,
                _n(deposit.amount, 10),
                _n(0, 10),
                _n(0, 10),
                _c(deposit.payer, 48),
                _c(deposit.bank_name, 15),
                _c(deposit.branch_name, 15),
                cancel,
                _c(deposit.edi, 20),
                _c("", 52),
            )
        )
    kept = [d for i, d in enumerate(deposits) if i not in options.cancelled]
    cancelled = [d for i, d in enumerate(deposits) if i in options.cancelled]
    counted = deposits if options.cancels_in_total else kept
    records.append(
        _record(
            b"8",
            _n(len(counted) + options.trailer_count_delta, 6),
            _n(sum(d.amount for d in counted) + options.trailer_total_delta, 12),
            _n(len(cancelled), 6),
            _n(sum(d.amount for d in cancelled), 12),
            _c("", 163),
        )
    )
    records.append(_record(b"9", _c("", 199)))
    return _file(records, options)


def statement(
    deposits: Sequence[Deposit],
    withdrawals: Sequence[Withdrawal] = (),
    account: Account = Account(),
    options: Options | None = None,
) -> bytes:
    """A 全銀協 入出金取引明細 (種別コード 03): deposits and withdrawals in date order."""
    options = options or Options()
    lines: list[Deposit | Withdrawal] = sorted([*deposits, *withdrawals], key=lambda x: x.date)
    created, first, last = _period(lines, options)
    header = _record(
        b"1",
        b"03",
        b"0",
        created.encode(),
        first.encode(),
        last.encode(),
        _n(account.bank_code, 4),
        _c(account.bank_name, 15),
        _n(account.branch_code, 3),
        _c(account.branch_name, 15),
        b"000",
        _n(account.deposit_type, 1),
        _n(account.number, 10),
        _c(account.name, 40),
        b"1",
        b"1",
        _n(account.opening_balance, 14),
        _c("", 71),
    )
    records = [header]
    balance = account.opening_balance
    for index, line in enumerate(lines):
        day = yymmdd(line.date, options.year_style).encode()
        if isinstance(line, Deposit):
            direction, kind, payer, bank, branch = (
                b"1",
                b"11",
                line.payer,
                line.bank_name,
                line.branch_name,
            )
            description, edi = "ﾌﾘｺﾐ", line.edi
            balance += line.amount
        else:
            direction, kind, payer, bank, branch = b"2", b"14", "", "", ""
            description, edi = line.description, ""
            balance -= line.amount
        records.append(
            _record(
                b"2",
                _n(index + 1, 8),
                day,
                day,
                direction,
                kind,
                _n(line.amount, 12),
                _n(0, 12),
                _n(0, 6),
                _n(0, 6),
                b"0",
                _n(0, 7),
                _n(0, 3),
                _n(0, 10),
                _c(payer, 48),
                _c(bank, 15),
                _c(branch, 15),
                _c(description, 20),
                _c(edi, 20),
                b" ",
            )
        )
    ins = [x for x in lines if isinstance(x, Deposit)]
    outs = [x for x in lines if isinstance(x, Withdrawal)]
    records.append(
        _record(
            b"8",
            _n(len(ins) + options.trailer_count_delta, 6),
            _n(sum(x.amount for x in ins) + options.trailer_total_delta, 13),
            _n(len(outs), 6),
            _n(sum(x.amount for x in outs), 13),
            b"1",
            _n(balance, 14),
            _n(len(lines), 7),
            _c("", 139),
        )
    )
    records.append(_record(b"9", _n(len(records) + 1, 10), _n(1, 5), _c("", 184)))
    return _file(records, options)


def patch(
    data: bytes, record: int, position: int, text: bytes, *, stride: int = RECORD + 2
) -> bytes:
    """``data`` with the bytes at 1-based ``position`` of 1-based ``record`` replaced by
    ``text`` (records ``stride`` bytes apart: 202 with CR LF, 200 without line breaks)."""
    at = (record - 1) * stride + position - 1
    return data[:at] + text + data[at + len(text) :]


# Header styles of Internet banking statements (roles: date, description, deposit, withdrawal).
CSV_STYLES: dict[str, tuple[str, str, str, str]] = {
    "a": ("取引日", "お取引内容", "お預り金額", "お引出し金額"),
    "b": ("日付", "摘要", "入金額", "出金額"),
    "c": ("年月日", "内容", "お預入れ", "お支払金額"),
}


def _statement_rows(
    deposits: Sequence[Deposit], withdrawals: Sequence[Withdrawal], word: str, opening: int
) -> list[tuple[dt.date, str, int | None, int | None, int, str]]:
    rows: list[tuple[dt.date, str, int | None, int | None, int, str]] = []
    balance = opening
    lines: list[Deposit | Withdrawal] = sorted([*deposits, *withdrawals], key=lambda x: x.date)
    for line in lines:
        if isinstance(line, Deposit):
            balance += line.amount
            rows.append((line.date, f"{word}{line.payer}", line.amount, None, balance, line.edi))
        else:
            balance -= line.amount
            rows.append((line.date, line.description, None, line.amount, balance, ""))
    return rows


def bank_csv(
    deposits: Sequence[Deposit],
    withdrawals: Sequence[Withdrawal] = (),
    *,
    style: str = "a",
    word: str = "振込\u3000",
    encoding: str = "cp932",
    edi_column: bool = False,
    title: bool = True,
    opening: int = 1_000_000,
) -> bytes:
    """An Internet banking statement CSV: title rows, a Japanese header, amounts as "1,234"
    in quotes, dates as 2026/2/3, the payer inside the 摘要 after ``word``."""
    date_h, text_h, in_h, out_h = CSV_STYLES[style]
    out = io.StringIO()
    if title:
        out.write("入出金明細\r\n口座,普通 1234567\r\n\r\n")
    out.write(
        f"{date_h},{text_h},{in_h},{out_h},残高" + (",EDI情報" if edi_column else "") + "\r\n"
    )
    for day, text, amount_in, amount_out, balance, edi in _statement_rows(
        deposits, withdrawals, word, opening
    ):
        cells = [
            f"{day.year}/{day.month}/{day.day}",
            text,
            f'"{amount_in:,}"' if amount_in else "",
            f'"{amount_out:,}"' if amount_out else "",
            f'"{balance:,}"',
        ]
        if edi_column:
            cells.append(edi)
        out.write(",".join(cells) + "\r\n")
    return out.getvalue().encode(encoding)


def bank_xlsx(
    deposits: Sequence[Deposit],
    withdrawals: Sequence[Withdrawal] = (),
    *,
    style: str = "b",
    word: str = "ﾌﾘｺﾐ ",
    opening: int = 1_000_000,
) -> bytes:
    """An Internet banking statement as an Excel workbook: dates and numbers as cells."""
    date_h, text_h, in_h, out_h = CSV_STYLES[style]
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["入出金明細"])
    sheet.append([date_h, text_h, in_h, out_h, "残高"])
    for day, text, amount_in, amount_out, balance, _edi in _statement_rows(
        deposits, withdrawals, word, opening
    ):
        sheet.append(
            [dt.datetime(day.year, day.month, day.day), text, amount_in, amount_out, balance]
        )
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


# Customers as a master file names them (full-width kana readings) and how their payments are
# written: (reading, form, suffix, code, long vowel).
PAYER_FORMS: tuple[tuple[str, str | None, bool, str, str], ...] = (
    ("アオバショウジ", "株式会社", False, "", "-"),
    ("ホクトウンユ", "株式会社", True, "", "-"),
    ("サクライセイサクショ", "有限会社", False, "", "-"),
    ("サクラシカ", "医療法人", False, "", "-"),
    ("ヤマトホールディングス", "株式会社", False, "", "-"),
    ("マルヤマート", "株式会社", False, "", "ｰ"),
    ("アオバショウジ", "株式会社", False, "1012", "-"),
    ("ミドリノカイ", "社会福祉法人", False, "", "-"),
    ("ヒカリガクエン", "学校法人", False, "", "-"),
    ("ニシキテクノロジー", "合同会社", True, "", "ｰ"),
    (
        "ニッポンコクサイロジスティクスアンドサプライチェーンマネジメントソリューションズ",
        "株式会社",
        False,
        "",
        "-",
    ),
    ("タナカ　タロウ", None, False, "", "-"),
)


def realistic_deposits(count: int = 36, *, seed: int = 35) -> list[Deposit]:
    """``count`` deposits in February 2026, in date order, from payers written in every form
    above, with a bank fee taken off some amounts and an EDI number on some."""
    rng = random.Random(seed)
    deposits = []
    for index in range(count):
        reading, form, suffix, code, long_vowel = PAYER_FORMS[index % len(PAYER_FORMS)]
        payer = bank_payer(reading, form, suffix=suffix, code=code, long_vowel=long_vowel)
        amount = rng.randrange(10_000, 2_000_000, 10) - rng.choice((0, 0, 440, 660, 880))
        edi = f"INV-2026{index:04d}" if index % 4 == 0 else ""
        day = dt.date(2026, 2, 2 + index % 25)
        deposits.append(Deposit(day, amount, payer, edi))
    return sorted(deposits, key=lambda deposit: deposit.date)


SAMPLE_WITHDRAWALS = (
    Withdrawal(dt.date(2026, 2, 5), 660, "ﾌﾘｺﾐﾃｽｳﾘﾖｳ"),
    Withdrawal(dt.date(2026, 2, 10), 38_500, "ﾃﾞﾝｷﾀﾞｲ"),
    Withdrawal(dt.date(2026, 2, 25), 1_250_000, "ｿｳｺﾞｳﾌﾘｺﾐ"),
)
