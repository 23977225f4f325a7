"""The record layouts of the two 全銀協 formats that report money received, field by field.

全銀協 (the Japanese Bankers Association) fixes a 200-byte record for the files a bank sends
about an account: 種別コード 01 振込入金通知 (each incoming transfer) and 種別コード 03 入出金取引明細
(every movement of the account). A file is one or more groups of a header record (データ区分 1),
data records (2) and a trailer record (8), one group per account, and one end record (9). Text
is JIS X 0201 (ASCII and half-width katakana, one byte each: read as CP932, of which it is a
subset); numbers are right-aligned and zero-filled (N), text left-aligned and space-filled (C);
dates are YYMMDD in the Japanese era (和暦), or in the Western year in some banks' variant
(``zengin_dates``). Records may be separated by CR LF or follow each other on one line.

Field positions below are 1-based, as the format's tables number them. Sources:

* 振込入金通知: 阿波銀行「振込入金通知（全銀協制定フォーマット）」
  http://www.awabank.co.jp/houjin/service/fb/zengin/tsuchi/ (header, data record: 照会番号 N6,
  勘定日, 起算日, 金額 N10, うち他店券金額, 振込依頼人コード, 振込依頼人名 C48, 仕向銀行名 C15,
  仕向支店名 C15, 取消区分, EDI情報 C20, ダミー C52), and the record classes of
  github.com/diva-osaka/Diva.Zengin (``Diva.Zengin/Records/振込入金通知*.cs``: trailer 振込合計件数
  N6, 振込合計金額 N12, 取消合計件数 N6, 取消合計金額 N12; end record ダミー C199).
* 入出金取引明細: きらぼし銀行「入出金明細（全銀）明細ファイル・フォーマット（全銀協規定形式）」
  (2018-05-01, header: 作成日・勘定日 in 和暦 YYMMDD, ダミー "000"), Diva.Zengin
  (``Records/入出金取引明細*.cs``: header 口座番号 N10, 取引前残高 N14; data 照会番号 N8, 入払区分,
  取引区分, 取引金額 N12, 振込依頼人名又は契約者番号 C48, 摘要内容 C20, EDI情報 C20; trailer
  入金件数 N6, 入金額合計 N13, 出金件数 N6, 出金額合計 N13, 貸越区分, 取引後残高 N14,
  データ・レコード件数 N7; end record レコード総件数 N10, 口座数 N5). 取引区分: 10 現金,
  11 振込, 12 他店券入金, 13 交換, 14 振替, 15 継続, 18 その他, 19 訂正.

The data layout of 入出金取引明細 given here is the one for 普通・当座・貯蓄預金 (預金種目 1, 2, 4);
time deposits use another data layout, which is not read (see ``zengin``). Every layout is
checked to cover exactly 200 bytes when this module loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DATA",
    "END",
    "HEADER",
    "LAYOUTS",
    "OTHER_TYPE_CODES",
    "RECORD_BYTES",
    "RECORD_KINDS",
    "STATEMENT_DEPOSIT_TYPES",
    "STATEMENT_TRANSACTIONS",
    "TRAILER",
    "TYPE_CODES",
    "Field",
    "Layout",
    "RecordKind",
]

RECORD_BYTES = 200

RecordKind = Literal["1", "2", "8", "9"]
HEADER: RecordKind = "1"
DATA: RecordKind = "2"
TRAILER: RecordKind = "8"
END: RecordKind = "9"
RECORD_KINDS: dict[RecordKind, str] = {
    HEADER: "ヘッダー・レコード",
    DATA: "データ・レコード",
    TRAILER: "トレーラー・レコード",
    END: "エンド・レコード",
}

# 種別コード read here, and their names.
TYPE_CODES: dict[str, str] = {"01": "振込入金通知", "03": "入出金取引明細"}
# 全銀協 request files a user may give by mistake: named in the refusal (all 120-byte records).
OTHER_TYPE_CODES: dict[str, str] = {
    "11": "給与振込",
    "12": "賞与振込",
    "21": "総合振込",
    "71": "給与振込（公務員）",
    "72": "賞与振込（公務員）",
    "91": "預金口座振替",
}

# 預金種目 whose 入出金取引明細 data records have the layout below (普通, 当座, 貯蓄).
STATEMENT_DEPOSIT_TYPES = frozenset({"1", "2", "4"})
STATEMENT_TRANSACTIONS: dict[str, str] = {
    "10": "現金",
    "11": "振込",
    "12": "他店券入金",
    "13": "交換",
    "14": "振替",
    "15": "継続",
    "18": "その他",
    "19": "訂正",
}


@dataclass(frozen=True, slots=True)
class Field:
    """One field: ``key`` in code, ``label`` as the format names it, 1-based ``start``."""

    key: str
    label: str
    start: int
    length: int
    kind: Literal["N", "C"]

    @property
    def end(self) -> int:
        """The 1-based position of the field's last byte."""
        return self.start + self.length - 1

    @property
    def span(self) -> slice:
        """The field's bytes in a 200-byte record (0-based slice)."""
        return slice(self.start - 1, self.start - 1 + self.length)


Layout = dict[str, Field]


# A field as the layouts below list it: key, label, length, kind.
_Spec = tuple[str, str, int, Literal["N", "C"]]


# Every record's first byte: its データ区分 (HEADER, DATA, TRAILER, END).
_KIND: _Spec = ("kind", "データ区分", 1, "N")


def _layout(*fields: _Spec) -> Layout:
    """The record's fields after データ区分 in record order (key, label, length, kind),
    positions computed; データ区分 first, 200 bytes in all."""
    layout: Layout = {}
    start = 1
    for key, label, length, kind in (_KIND, *fields):
        layout[key] = Field(key, label, start, length, kind)
        start += length
    if start - 1 != RECORD_BYTES:
        raise AssertionError(f"layout covers {start - 1} bytes, not {RECORD_BYTES}")
    return layout


# The header fields both formats start with: who made the file, for which period and bank.
_HEADER_START: tuple[_Spec, ...] = (
    ("type_code", "種別コード", 2, "N"),
    ("code_kind", "コード区分", 1, "N"),
    ("created", "作成日", 6, "N"),
    ("period_from", "勘定日（自）", 6, "N"),
    ("period_to", "勘定日（至）", 6, "N"),
    ("bank_code", "銀行コード", 4, "N"),
    ("bank_name", "銀行名", 15, "C"),
    ("branch_code", "支店コード", 3, "N"),
    ("branch_name", "支店名", 15, "C"),
)

_TRANSFER_HEADER = _layout(
    *_HEADER_START,
    ("deposit_type", "預金種目", 1, "N"),
    ("account_number", "口座番号", 7, "N"),
    ("account_name", "口座名", 40, "C"),
    ("dummy", "ダミー", 93, "C"),
)
_TRANSFER_DATA = _layout(
    ("reference", "照会番号", 6, "N"),
    ("date", "勘定日", 6, "N"),
    ("value_date", "起算日", 6, "N"),
    ("amount", "金額", 10, "N"),
    ("other_bank_amount", "うち他店券金額", 10, "N"),
    ("payer_code", "振込依頼人コード", 10, "N"),
    ("payer", "振込依頼人名", 48, "C"),
    ("bank_name", "仕向銀行名", 15, "C"),
    ("branch_name", "仕向支店名", 15, "C"),
    ("cancel", "取消区分", 1, "C"),
    ("edi", "EDI情報", 20, "C"),
    ("dummy", "ダミー", 52, "C"),
)
_TRANSFER_TRAILER = _layout(
    ("count", "振込合計件数", 6, "N"),
    ("total", "振込合計金額", 12, "N"),
    ("cancel_count", "取消合計件数", 6, "N"),
    ("cancel_total", "取消合計金額", 12, "N"),
    ("dummy", "ダミー", 163, "C"),
)
_TRANSFER_END = _layout(("dummy", "ダミー", 199, "C"))

_STATEMENT_HEADER = _layout(
    *_HEADER_START,
    ("dummy1", "ダミー", 3, "C"),
    ("deposit_type", "預金種目", 1, "N"),
    ("account_number", "口座番号", 10, "N"),
    ("account_name", "口座名", 40, "C"),
    ("overdraft", "貸越区分", 1, "N"),
    ("passbook", "通帳・証書区分", 1, "N"),
    ("opening_balance", "取引前残高", 14, "N"),
    ("dummy", "ダミー", 71, "C"),
)
_STATEMENT_DATA = _layout(
    ("reference", "照会番号", 8, "N"),
    ("date", "勘定日", 6, "N"),
    ("value_date", "預入・払出日", 6, "N"),
    ("direction", "入払区分", 1, "N"),
    ("transaction", "取引区分", 2, "N"),
    ("amount", "取引金額", 12, "N"),
    ("other_bank_amount", "うち他店券金額", 12, "N"),
    ("exchange_date", "交換呈示日", 6, "N"),
    ("returned_date", "不渡返還日", 6, "N"),
    ("bill_kind", "手形・小切手区分", 1, "N"),
    ("bill_number", "手形・小切手番号", 7, "N"),
    ("branch_ref", "僚店番号", 3, "N"),
    ("payer_code", "振込依頼人コード", 10, "N"),
    ("payer", "振込依頼人名又は契約者番号", 48, "C"),
    ("bank_name", "仕向銀行名", 15, "C"),
    ("branch_name", "仕向店名", 15, "C"),
    ("description", "摘要内容", 20, "C"),
    ("edi", "EDI情報", 20, "C"),
    ("dummy", "ダミー", 1, "C"),
)
_STATEMENT_TRAILER = _layout(
    ("deposit_count", "入金件数", 6, "N"),
    ("deposit_total", "入金額合計", 13, "N"),
    ("withdrawal_count", "出金件数", 6, "N"),
    ("withdrawal_total", "出金額合計", 13, "N"),
    ("overdraft", "貸越区分", 1, "N"),
    ("closing_balance", "取引後残高", 14, "N"),
    ("record_count", "データ・レコード件数", 7, "N"),
    ("dummy", "ダミー", 139, "C"),
)
_STATEMENT_END = _layout(
    ("record_total", "レコード総件数", 10, "N"),
    ("account_count", "口座数", 5, "N"),
    ("dummy", "ダミー", 184, "C"),
)

# (種別コード, データ区分) -> layout.
LAYOUTS: dict[tuple[str, RecordKind], Layout] = {
    ("01", HEADER): _TRANSFER_HEADER,
    ("01", DATA): _TRANSFER_DATA,
    ("01", TRAILER): _TRANSFER_TRAILER,
    ("01", END): _TRANSFER_END,
    ("03", HEADER): _STATEMENT_HEADER,
    ("03", DATA): _STATEMENT_DATA,
    ("03", TRAILER): _STATEMENT_TRAILER,
    ("03", END): _STATEMENT_END,
}
