"""The record layouts of the two 全銀協 formats that report money received, field by field.

全銀協 (the Japanese Bankers Association) fixes a 200-byte record for the files a bank sends
about an account: 種別コード 01 振込入金通知 (each incoming transfer) and 種別コード 03 入出金取引明細
(every movement of the account). A file is one or more groups of a header record (データ区分 1),
data records (2) and a trailer record (8), one group per account, and one end record (9). Text
is JIS X 0201 (ASCII and half-width katakana, one byte each: read as CP932, of which it is a
subset); numbers are right-aligned and zero-filled (N), text left-aligned and space-filled (C);
dates are YYMMDD in the Japanese era (和暦), or in the Western year in some banks' variant
(``zengin_dates``). Records may be separated by CR LF or follow each other on one line.

The layouts themselves are package data, ``zengin_fields.csv`` beside this module: one row a
field, as the format's tables list them (種別コード, データ区分, 1-based position, length in
bytes, N or C, the field's name in code and in the format), so that a row can be compared with
the published table it was copied from. Sources:

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
time deposits use another data layout, which is not read (see ``zengin``). The table is read
and checked once, when this module loads: every field starts where the one before it ended
(position against lengths), and every layout covers exactly 200 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from keiri_agent.documents.bundled_table import BundledTable

__all__ = [
    "DATA",
    "END",
    "HEADER",
    "LAYOUTS",
    "LAYOUT_FILE",
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
    "load_layouts",
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

LAYOUT_FILE = "zengin_fields.csv"  # package data beside this module
_TABLE = BundledTable(
    __package__,
    LAYOUT_FILE,
    "全銀協のレコード様式の表",
    ("type_code", "record", "start", "length", "kind", "key", "label"),
    hint="表は 1 行に 1 項目（type_code,record,start,length,kind,key,label）で、各レコードの項目を"
    f" 1 バイト目から順に、合わせて {RECORD_BYTES} バイトになるように書いてください。",
)
_FIELD_KINDS: tuple[Literal["N", "C"], ...] = ("N", "C")


def load_layouts(text: str) -> dict[tuple[str, RecordKind], Layout]:
    """The layouts of a table in :data:`LAYOUT_FILE`'s layout, by (種別コード, データ区分).

    One row a field, in record order: ``type_code`` (a :data:`TYPE_CODES` key), ``record`` (a
    :data:`RECORD_KINDS` key), 1-based ``start`` and ``length`` in bytes, ``kind`` (N or C),
    ``key`` (its name in code) and ``label`` (its name in the format). Each field must start
    where the one before it ended, every layout must cover exactly :data:`RECORD_BYTES` bytes,
    and every 種別コード must have all four records. BlockError naming the line otherwise."""
    layouts: dict[tuple[str, RecordKind], Layout] = {}
    for line, (code, record, start, length, kind, key, label) in _TABLE.rows(text):
        if code not in TYPE_CODES or record not in RECORD_KINDS:
            raise _TABLE.error(
                line, f"種別コード {code}・データ区分 {record} は読む対象ではありません"
            )
        if not start.isdecimal() or not length.isdecimal() or int(length) == 0:
            raise _TABLE.error(line, f"位置「{start}」・桁数「{length}」が正の整数ではありません")
        if kind not in _FIELD_KINDS or not key or not label:
            raise _TABLE.error(line, "kind が N・C のどちらでもないか、key・label が空です")
        layout = layouts.setdefault((code, record), {})
        if key in layout:
            raise _TABLE.error(line, f"key {key} が同じレコードに二度あります")
        expected = sum(field.length for field in layout.values()) + 1
        if int(start) != expected:
            raise _TABLE.error(
                line, f"{key} の位置が {start} です（前の項目から続く {expected} のはずです）"
            )
        layout[key] = Field(key, label, int(start), int(length), kind)
    for code in TYPE_CODES:
        for record in RECORD_KINDS:
            covered = sum(field.length for field in layouts.get((code, record), {}).values())
            if covered != RECORD_BYTES:
                raise _TABLE.error(
                    None,
                    f"種別コード {code} の{RECORD_KINDS[record]}が {covered} バイトです"
                    f"（{RECORD_BYTES} バイトのはずです）",
                )
    return layouts


# (種別コード, データ区分) -> layout.
LAYOUTS: dict[tuple[str, RecordKind], Layout] = load_layouts(_TABLE.text())
