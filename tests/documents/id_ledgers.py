"""Ledgers with identifier columns in every shape they arrive in: a seeded generator.

Accounting teams keep 取引先コード, 伝票番号, 口座番号, 法人番号, 登録番号 (T + 13 digits),
照会番号, 電話番号 and ID columns. Each drawn table (3-120 rows) is a CSV (UTF-8, UTF-8 with
a BOM, or CP932) or a workbook, with two to five such columns beside a date, a name and
amounts:

* ``plain``: digits without a leading zero (1001, 2345678), as typed; in a workbook, numbers;
* ``zero``: digits with leading zeros (口座番号 0012345, 部門コード 001); in a workbook,
  numbers shown through a zero-padding format (``0000000``), as banks' and ERP exports
  write them, or text cells;
* ``long``: 13 digits (法人番号, a JAN code) as numbers; 16-20 digits (照会番号, 受付番号)
  as text in a CSV (a workbook cannot hold them as numbers and stores text);
* ``invoice``: ``T`` + 13 digits (登録番号);
* ``phone``: 電話番号 with or without hyphens (``03-1234-5678``, ``0312345678``), text.

Some columns leave cells blank. Headers are spelled as people and systems write them
(全角/半角, コード/ＣＤ/ｺｰﾄﾞ/No./番号/ID/ＩＤ/TEL, a ``（旧）`` note). ``IdColumn.shown`` is
what the user sees in each cell of the file: the text the report writers must show again.
"""

from __future__ import annotations

import csv
import io
import random
from dataclasses import dataclass
from typing import Literal

from openpyxl import Workbook

__all__ = ["IdColumn", "IdTable", "id_table"]

Shape = Literal["plain", "zero", "long", "invoice", "phone"]
Encoding = Literal["utf-8", "utf-8-sig", "cp932"]
_WIDE = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ.", "ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺ．"
)
# (subject, the digits of its codes)
_SUBJECTS = (
    ("取引先", 4),
    ("得意先", 5),
    ("仕入先", 6),
    ("勘定科目", 3),
    ("伝票", 6),
    ("社員", 5),
    ("顧客", 7),
    ("商品", 8),
)
_ENDS = ("コード", "ｺｰﾄﾞ", "CD", "ＣＤ", "No.", "Ｎｏ．", "番号", "ID", "ＩＤ", "コード（旧）")
_ZERO = (("口座番号", 7), ("部門コード", 3), ("支店コード", 3), ("社員番号", 6), ("取引先CD", 5))
_LONG = (("法人番号", 13), ("JANコード", 13), ("照会番号", 16), ("受付番号", 20), ("記録番号", 18))
_PHONES = ("電話番号", "TEL", "ＴＥＬ", "携帯電話", "FAX番号")
_AMOUNTS = ("金額", "請求金額", "税額", "数量")
_NAMES = ("山田商事", "株式会社テスト", "さくら会計事務所", "ABC商会", "東都電機")
# Digits a workbook's number keeps (Excel: 15 significant digits).
_NUMBER_DIGITS = 15


@dataclass(frozen=True)
class IdColumn:
    header: str
    shape: Shape | None  # None: not an identifier (a date, a name, an amount)
    shown: tuple[str, ...]  # each cell as the file shows it ("" blank)
    cells: tuple[object, ...]  # as stored: text in a CSV, a number or text in a workbook
    number_format: str = "General"  # of a workbook's number cells


@dataclass(frozen=True)
class IdTable:
    name: str  # 台帳.csv or 台帳.xlsx
    columns: tuple[IdColumn, ...]
    encoding: Encoding = "cp932"

    @property
    def workbook(self) -> bool:
        return self.name.endswith(".xlsx")

    @property
    def rows(self) -> int:
        return len(self.columns[0].cells)

    @property
    def identifiers(self) -> tuple[IdColumn, ...]:
        return tuple(c for c in self.columns if c.shape is not None)

    def data(self) -> bytes:
        if self.workbook:
            return self._workbook()
        text = io.StringIO()
        lines = [[c.header for c in self.columns]]
        lines += [[str(c.cells[r]) for c in self.columns] for r in range(self.rows)]
        csv.writer(text, lineterminator="\r\n").writerows(lines)
        return text.getvalue().encode(self.encoding)

    def _workbook(self) -> bytes:
        book = Workbook()
        sheet = book.active
        assert sheet is not None
        sheet.append([c.header for c in self.columns])
        for r in range(self.rows):
            sheet.append([None if c.cells[r] == "" else c.cells[r] for c in self.columns])
        for j, column in enumerate(self.columns, start=1):
            if column.number_format != "General":
                for (cell,) in sheet.iter_rows(min_row=2, min_col=j, max_col=j):
                    cell.number_format = column.number_format
        out = io.BytesIO()
        book.save(out)
        return out.getvalue()


def _spelled(rng: random.Random, header: str) -> str:
    return header.translate(_WIDE) if rng.random() < 0.2 else header


def _identifier(rng: random.Random, shape: Shape, rows: int, workbook: bool) -> IdColumn:
    blanks = rng.random() < 0.4
    header, digits = "", 0
    if shape == "plain":
        subject, digits = rng.choice(_SUBJECTS)
        header = _spelled(rng, subject) + rng.choice(_ENDS)
    elif shape == "zero":
        header, digits = rng.choice(_ZERO)
    elif shape == "long":
        header, digits = rng.choice(_LONG)
    elif shape == "invoice":
        header, digits = (
            rng.choice(("登録番号", "インボイス番号", "適格請求書発行事業者登録番号")),
            13,
        )
    else:
        header = rng.choice(_PHONES)
    shown: list[str] = []
    for _ in range(rows):
        if blanks and rng.random() < 0.15:
            shown.append("")
        elif shape == "zero":
            shown.append(str(rng.randrange(10 ** (digits - 2))).zfill(digits))
        elif shape == "invoice":
            shown.append(f"T{rng.randrange(10**12, 10**13)}")
        elif shape == "phone":
            area, local = rng.choice((("03", 4), ("06", 4), ("090", 4), ("0120", 3)))
            middle, last = rng.randrange(10**3, 10**4), rng.randrange(10**3, 10**4)
            sep = rng.choice(("-", ""))
            shown.append(f"{area}{sep}{str(middle)[:local]}{sep}{last}")
        else:
            shown.append(str(rng.randrange(10 ** (digits - 1), 10**digits)))
    number_format = "General"
    cells: list[object] = list(shown)
    if workbook and shape in ("plain", "long") and digits <= _NUMBER_DIGITS:
        cells = [int(s) if s else "" for s in shown]
    elif workbook and shape == "zero" and rng.random() < 0.7:
        cells = [int(s) if s else "" for s in shown]
        number_format = "0" * digits
    return IdColumn(header, shape, tuple(shown), tuple(cells), number_format)


def id_table(seed: int) -> IdTable:
    """Table ``seed``: a header line and 3-120 rows; about a third are workbooks."""
    rng = random.Random(seed)
    rows = rng.choice((rng.randrange(3, 10), rng.randrange(10, 40), rng.randrange(40, 121)))
    workbook = rng.random() < 0.35
    days = sorted(f"2026/{rng.randrange(1, 13)}/{rng.randrange(1, 29)}" for _ in range(rows))
    columns = [IdColumn("日付", None, tuple(days), tuple(days))]
    headers: set[str] = set()
    shapes: tuple[Shape, ...] = ("plain", "plain", "zero", "long", "invoice", "phone")
    for _ in range(rng.randrange(2, 6)):
        column = _identifier(rng, rng.choice(shapes), rows, workbook)
        if column.header not in headers:
            headers.add(column.header)
            columns.append(column)
    names = tuple(rng.choice(_NAMES) for _ in range(rows))
    columns.append(IdColumn("取引先名", None, names, names))
    for header in rng.sample(_AMOUNTS, rng.randrange(1, 3)):
        amounts = [rng.randrange(1, 3_000_000) for _ in range(rows)]
        cells: tuple[object, ...] = tuple(amounts) if workbook else tuple(map(str, amounts))
        columns.append(IdColumn(header, None, tuple(map(str, amounts)), cells))
    encoding: Encoding = rng.choice(("utf-8", "utf-8-sig", "cp932"))
    return IdTable(f"台帳.{'xlsx' if workbook else 'csv'}", tuple(columns), encoding)
