"""Read a 全銀協 振込入金通知 or 入出金取引明細 file into bank lines, refusing what is malformed.

The layouts and their sources are in ``zengin_layout``, how the bytes become records in
``zengin_records``, how six-digit dates are read in ``zengin_dates``, what the trailers are
checked against in ``zengin_checks``. Here the records are put together and nothing half-read
is returned: each of these is a ``FileProcessingError`` naming the file, the record (number,
line, byte offset), the field (its name and byte positions), what was found and what was
expected:

* a record type (データ区分) other than 1, 2, 8, 9, or records out of order (data before a
  header, a header before the previous group's trailer, no trailer, no end record, records
  after the end record);
* a numeric field that is not digits, a date that is no real day, a 入払区分 or 取消区分 with
  another value, bytes that are not JIS / Shift_JIS text;
* a trailer whose counts or totals differ from the data records of its group. An error, not a
  warning: a mismatch means records are missing or two files were joined, and matching a
  partial statement would report paid invoices as unpaid;
* another 全銀協 kind (総合振込, 給与振込, 口座振替...: requests, not statements), an EBCDIC
  file, and 入出金取引明細 of time deposits (預金種目 other than 普通・当座・貯蓄, whose data
  records have another layout).

Warnings (``BankStatement.warnings``; the lines themselves are sound): a 勘定日 outside the
header's period, a closing balance that is not the opening balance plus the movements, data
records without a 照会番号 (the format allows it). コード区分 and the end record's counts are
not checked: the bytes decide the code, and banks fill the end record differently.

A 振込入金通知 record with 取消区分 1 and an 入出金取引明細 record with 取引区分 19 (訂正) are
corrections (``BankLine.correction``); a cancelled transfer notice takes money back, so its
direction is withdrawal, as the 入払区分 of an 入出金取引明細 deposit correction is.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from keiri_agent.documents.bank_lines import BankAccount, BankLine, BankStatement, Direction
from keiri_agent.documents.failures import unreadable, unsupported
from keiri_agent.documents.zengin_checks import (
    Disagreement,
    balance_warning,
    period_warning,
    statement_disagreements,
    transfer_disagreements,
)
from keiri_agent.documents.zengin_dates import (
    YEAR_STYLES,
    YearStyle,
    choose_year_style,
    read_yymmdd,
)
from keiri_agent.documents.zengin_layout import (
    DATA,
    HEADER,
    LAYOUTS,
    OTHER_TYPE_CODES,
    STATEMENT_DEPOSIT_TYPES,
    TRAILER,
    TYPE_CODES,
    Layout,
    RecordKind,
)
from keiri_agent.documents.zengin_records import (
    RawRecord,
    RecordGroup,
    RecordTable,
    group_records,
    is_ebcdic_zengin,
    refuse_record,
    split_records,
)
from keiri_agent.errors import FileProcessingError

__all__ = ["ENCODING", "read_zengin"]

# JIS X 0201 (ASCII + half-width katakana) is a subset of CP932, which also reads the
# double-byte characters some banks put into text fields.
ENCODING = "cp932"
_NO_DATE = frozenset({"", "000000"})
_DIRECTIONS: dict[str, Direction] = {"1": "deposit", "2": "withdrawal"}
# One regular expression per layout cuts a decoded record into its fields in one call (100,000
# records are read in well under a second).
_SPLITTERS: dict[tuple[str, RecordKind], tuple[re.Pattern[str], tuple[str, ...]]] = {
    key: (
        re.compile("".join(f"(.{{{spec.length}}})" for spec in layout.values()), re.DOTALL),
        tuple(layout),
    )
    for key, layout in LAYOUTS.items()
}


def read_zengin(
    data: bytes, label: str, *, year_style: YearStyle | None = None, today: dt.date
) -> BankStatement:
    """Read a 全銀協 振込入金通知 (種別コード 01) or 入出金取引明細 (03) into a statement.

    ``year_style`` forces how dates are read ("wareki" / "seireki"); None decides from the
    file's dates relative to ``today`` (``zengin_dates``).
    """
    if is_ebcdic_zengin(data):
        raise unsupported(
            label,
            f"「{label}」は EBCDIC で書かれた全銀協ファイルで、読み込めません。",
            "インターネットバンキングのダウンロード画面で文字コード「JIS」（Shift_JIS）を選んで"
            "ダウンロードし直してください。",
        )
    # The first header's 種別コード, checked before the records are (a 総合振込 request has
    # 120-byte records: its length is not what is wrong with it). A file that does not start
    # with a header is refused where its records are put in order.
    code = data[1:3].decode("ascii", "replace") if data[:1] == HEADER.encode() else "01"
    if code not in TYPE_CODES:
        other = OTHER_TYPE_CODES.get(code)
        what = f"全銀協の{other}の依頼ファイル" if other else f"種別コード {code} の全銀協ファイル"
        raise unsupported(
            label,
            f"「{label}」は{what}で、入金の明細ではありません（読めるのは種別コード 01 の振込入金通知と"
            " 03 の入出金取引明細です）。",
            "銀行からダウンロードした振込入金通知か入出金明細（全銀協規定形式）、または入出金明細の "
            "CSV・Excel を指定してください。",
            type_code=code,
        )
    kind = TYPE_CODES[code] if data[:1] == HEADER.encode() else "全銀協の明細ファイル"
    table = split_records(data, label, kind)
    return _Reader(label, code, today).read(table, group_records(table, label), year_style)


@dataclass(frozen=True, slots=True)
class _Record:
    """A record's fields as text (``layout`` keys), with the record for error messages."""

    raw: RawRecord
    layout: Layout
    fields: dict[str, str]


class _Reader:
    def __init__(self, label: str, code: str, today: dt.date) -> None:
        self.label, self.code, self.today = label, code, today
        self.style: YearStyle = "wareki"
        self.warnings: list[str] = []

    def refuse(self, raw: RawRecord, message: str, **details: object) -> FileProcessingError:
        return refuse_record(self.label, raw, message, **details)

    def bad_field(self, rec: _Record, key: str, expected: str) -> FileProcessingError:
        spec, found = rec.layout[key], rec.fields[key]
        return self.refuse(
            rec.raw,
            f"{spec.label}（{spec.start}〜{spec.end} バイト目）が「{found}」で、{expected}"
            "になっていません。",
            field=spec.label,
            found=found,
            expected=expected,
        )

    def decode(self, raw: RawRecord, kind: RecordKind) -> _Record:
        """The record's fields as text. Half-width text is one byte a character, so the whole
        record is decoded once; double-byte text is decoded field by field."""
        layout = LAYOUTS[(self.code, kind)]
        try:
            text = raw.data.decode(ENCODING)
        except UnicodeDecodeError:
            text = ""
        if len(text) == len(raw.data):
            pattern, keys = _SPLITTERS[(self.code, kind)]
            match = pattern.fullmatch(text)
            assert match is not None  # 200 characters always match
            return _Record(raw, layout, dict(zip(keys, match.groups(), strict=True)))
        fields: dict[str, str] = {}
        for key, spec in layout.items():
            try:
                fields[key] = raw.data[spec.span].decode(ENCODING)
            except UnicodeDecodeError as exc:
                at = spec.start + exc.start
                raise self.refuse(
                    raw,
                    f"{spec.label}（{spec.start}〜{spec.end} バイト目）の {at} バイト目"
                    f"（0x{raw.data[at - 1]:02X}）が JIS・Shift_JIS の文字として読めません。",
                    field=spec.label,
                    expected="JIS の文字（半角カナ・英数字）",
                ) from exc
        return _Record(raw, layout, fields)

    # -- fields ---------------------------------------------------------------------------

    def number(self, rec: _Record, key: str, *, optional: bool = False) -> int | None:
        """A numeric field; None when ``optional`` and blank."""
        text = rec.fields[key]
        if text.isascii() and text.isdigit():
            return int(text)
        if optional and not text.strip():
            return None
        spec = rec.layout[key]
        raise self.bad_field(rec, key, f"{spec.length} 桁の数字（右詰め、残りは 0）")

    def amount(self, rec: _Record, key: str) -> int:
        value = self.number(rec, key)
        assert value is not None  # a required field
        return value

    def date(self, rec: _Record, key: str, *, optional: bool = False) -> dt.date | None:
        text = rec.fields[key]
        if optional and text.strip() in _NO_DATE:
            return None
        date = read_yymmdd(text, self.style, self.today)
        if date is None:
            raise self.bad_field(
                rec, key, f"YYMMDD（{YEAR_STYLES[self.style]}の年・月・日）の実在する日付"
            )
        return date

    @staticmethod
    def text(rec: _Record, key: str) -> str:
        """A text field as written, without the padding after it."""
        return rec.fields[key].rstrip(" \u3000")

    @staticmethod
    def code_text(rec: _Record, key: str) -> str:
        """An optional code: "" when blank or all zeros."""
        text = rec.fields[key].strip()
        return "" if not text.strip("0") else text

    # -- the statement --------------------------------------------------------------------

    def read(
        self, table: RecordTable, groups: list[RecordGroup], year_style: YearStyle | None
    ) -> BankStatement:
        ends = [
            (
                self.decode(table.record(g.header), HEADER),
                self.decode(table.record(g.trailer), TRAILER),
            )
            for g in groups
        ]
        for header, _trailer in ends:
            if header.fields["type_code"] != self.code:
                raise self.bad_field(
                    header, "type_code", f"最初のヘッダーと同じ種別コード {self.code}"
                )
        self.style = year_style or self._choose_style(table, groups, ends) or "wareki"
        accounts: list[BankAccount] = []
        lines: list[BankLine] = []
        for index, (group, (header, trailer)) in enumerate(zip(groups, ends, strict=True)):
            account = self.account(header, trailer)
            # Each record is decoded and dropped as soon as its line is made.
            group_lines = [self.line(self.decode(table.record(i), DATA), index) for i in group.data]
            self.check(trailer, group_lines)
            for warning in (
                period_warning(self.label, account, group_lines),
                balance_warning(self.label, account, group_lines),
            ):
                if warning:
                    self.warnings.append(warning)
            accounts.append(account)
            lines.extend(group_lines)
        unnumbered = sum(1 for line in lines if not line.reference)
        if unnumbered:
            self.warnings.append(
                f"「{self.label}」の {unnumbered:,} 件のデータ・レコードに照会番号がありません"
                "（レコード番号で区別してください）。"
            )
        return BankStatement(
            file=self.label,
            format="zengin_transfer" if self.code == "01" else "zengin_statement",
            lines=tuple(lines),
            accounts=tuple(accounts),
            encoding=ENCODING,
            year_style=self.style,
            warnings=tuple(self.warnings),
        )

    def _choose_style(
        self, table: RecordTable, groups: list[RecordGroup], ends: list[tuple[_Record, _Record]]
    ) -> YearStyle | None:
        """The year style of every date in the file (read straight from the bytes)."""
        texts = {
            header.fields[key]
            for header, _trailer in ends
            for key in ("created", "period_from", "period_to")
        }
        layout = LAYOUTS[(self.code, DATA)]
        for span in (layout["date"].span, layout["value_date"].span):
            for group in groups:
                texts.update(table.field(i, span).decode("ascii", "replace") for i in group.data)
        return choose_year_style((t for t in texts if t.strip() not in _NO_DATE), self.today)

    def account(self, header: _Record, trailer: _Record) -> BankAccount:
        statement = self.code == "03"
        if statement and header.fields["deposit_type"] not in STATEMENT_DEPOSIT_TYPES:
            raise unsupported(
                self.label,
                f"「{self.label}」の {header.raw.where()}: 預金種目「{header.fields['deposit_type']}」の"
                "入出金取引明細は読めません（読めるのは 1 普通預金・2 当座預金・4 貯蓄預金です）。",
                "入金の明細が入る普通預金・当座預金の口座の明細を指定してください。",
                record=header.raw.number,
                deposit_type=header.fields["deposit_type"],
            )
        return BankAccount(
            bank_code=header.fields["bank_code"],
            bank_name=self.text(header, "bank_name"),
            branch_code=header.fields["branch_code"],
            branch_name=self.text(header, "branch_name"),
            deposit_type=header.fields["deposit_type"],
            account_number=header.fields["account_number"],
            account_name=self.text(header, "account_name"),
            created=self.date(header, "created", optional=True),
            period_from=self.date(header, "period_from", optional=True),
            period_to=self.date(header, "period_to", optional=True),
            opening_balance=self.balance(header, "opening_balance") if statement else None,
            closing_balance=self.balance(trailer, "closing_balance") if statement else None,
        )

    def balance(self, rec: _Record, key: str) -> int | None:
        value = self.number(rec, key, optional=True)
        if value is None:
            return None
        sign = rec.fields["overdraft"]
        if sign.strip() not in ("", "1", "2"):
            raise self.bad_field(rec, "overdraft", "1（プラス）か 2（マイナス）")
        return -value if sign == "2" else value

    def line(self, rec: _Record, account: int) -> BankLine:
        statement = self.code == "03"
        if statement:
            direction = _DIRECTIONS.get(rec.fields["direction"])
            if direction is None:
                raise self.bad_field(rec, "direction", "1（入金）か 2（出金）")
            transaction = rec.fields["transaction"]
            if not (transaction.isascii() and transaction.isdigit()):
                raise self.bad_field(rec, "transaction", "2 桁の取引区分（11 振込など）")
            correction = transaction == "19"
        else:
            cancel = rec.fields["cancel"].strip()
            if cancel not in ("", "0", "1"):
                raise self.bad_field(rec, "cancel", "空白か 0（通常）、1（取消）")
            correction = cancel == "1"
            direction = "withdrawal" if correction else "deposit"
            transaction = ""
        date = self.date(rec, "date")
        assert date is not None  # a required field
        return BankLine(
            reference=rec.fields["reference"].strip(),
            date=date,
            amount=self.amount(rec, "amount"),
            direction=direction,
            payer=self.text(rec, "payer"),
            record=rec.raw.number,
            offset=rec.raw.offset,
            line=rec.raw.line,
            value_date=self.date(rec, "value_date", optional=True),
            description=self.text(rec, "description") if statement else "",
            edi=self.text(rec, "edi"),
            payer_code=self.code_text(rec, "payer_code"),
            bank_name=self.text(rec, "bank_name"),
            branch_name=self.text(rec, "branch_name"),
            transaction=transaction,
            correction=correction,
            account=account,
        )

    def check(self, trailer: _Record, lines: list[BankLine]) -> None:
        """The trailer's counts and totals against the group's lines (``zengin_checks``)."""
        required: tuple[str, ...] = ("count", "total")
        optional: tuple[str, ...] = ("cancel_count", "cancel_total")
        if self.code == "03":
            required = ("deposit_count", "deposit_total", "withdrawal_count", "withdrawal_total")
            optional = ("record_count",)
        stated = {key: self.number(trailer, key) for key in required}
        stated |= {key: self.number(trailer, key, optional=True) for key in optional}
        found = (transfer_disagreements if self.code == "01" else statement_disagreements)(
            lines, stated
        )
        if found:
            raise self._disagreement(trailer, found[0])

    def _disagreement(self, trailer: _Record, problem: Disagreement) -> FileProcessingError:
        spec = trailer.layout[problem.key]
        return unreadable(
            self.label,
            f"「{self.label}」の {trailer.raw.where()}（トレーラー）: {spec.label}は "
            f"{problem.stated:,} {problem.unit}ですが、この口座のデータ・レコードでは "
            f"{problem.counted:,} {problem.unit}です。レコードが欠けているか、別のファイルと"
            "つながっている可能性があります。",
            "銀行のサイトからもう一度ダウンロードし、そのまま指定してください。",
            record=trailer.raw.number,
            offset=trailer.raw.offset,
            line=trailer.raw.line,
            field=spec.label,
            stated=problem.stated,
            counted=problem.counted,
        )
