"""Ledgers whose header is two rows, a row of groups over a row of columns, as accounting
teams keep them and as Excel saves them: a seeded generator of whole files (CSV in UTF-8, with
a BOM, or CP932; workbooks with the groups merged or not), each with the column names and
values ``read_table`` must give back.

The other generators write one header row (or a merged one: ``tests/documents/kept_ledgers``).
Here the upper row names groups over blank cells (``借方 | | 貸方 |`` over ``科目 | 金額 | 科目
| 金額``; ``4月 | | 5月 |`` over ``予算 | 実績``; ``入金 | | 出金 |`` over ``件数 | 金額``), as
Excel writes a merged header to CSV and as many books are typed; a column outside the groups
(日付, 伝票番号, 摘要) is written in the upper row over a blank, or in both rows. A title row
(``仕訳帳``, ``2026年2月分``) may stand above. The columns must read as ``借方_科目``,
``借方_金額``..., each with its values.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass

__all__ = ["FILES", "Book", "book_file", "draw"]

FILES = ("utf8", "utf8_bom", "cp932", "xlsx", "xlsx_merged")

# Groups and the columns under each (the same columns under every group of a header).
_GROUPS = (
    (("借方", "貸方"), ("科目", "金額")),
    (("借方", "貸方"), ("勘定科目", "補助科目", "金額")),
    (("借方", "貸方"), ("勘定科目", "金額", "税区分")),
    (("4月", "5月", "6月"), ("予算", "実績")),
    (("当月", "前月"), ("売上", "原価")),
    (("入金", "出金"), ("件数", "金額")),
    (("税抜", "税込"), ("数量", "金額")),
)
_ACCOUNTS = ("旅費交通費", "消耗品費", "普通預金", "現金", "売掛金", "買掛金", "会議費", "通信費")
_SUBS = ("三井住友", "みずほ", "山田商事", "鈴木工業", "")
_TAXES = ("課税仕入10%", "対象外", "課税売上10%", "非課税")
_MEMOS = ("タクシー代", "文具", "振込手数料", "2月分 売上", "電話代")
_TITLES = ("仕訳帳", "2026年2月分", "振替伝票一覧", "部門別 予算実績表")


@dataclass
class Book:
    """A drawn ledger: its two header rows, its data rows, the names its columns must read as
    and each column's values as they must read."""

    upper: list[str]
    lower: list[str]
    title: str | None
    rows: list[list[object]]
    names: list[str]
    merged: list[tuple[int, int]]  # the upper row's groups, as (first column, last column)


def _cell(rng: random.Random, column: str, day: dt.date) -> object:
    if column in ("科目", "勘定科目"):
        return rng.choice(_ACCOUNTS)
    if column == "補助科目":
        return rng.choice(_SUBS) or None
    if column == "税区分":
        return rng.choice(_TAXES)
    if column in ("件数", "数量"):
        return rng.randrange(1, 40)
    return rng.randrange(1, 5000) * 100


def draw(seed: int, rows: int = 14) -> Book:
    """A ledger drawn from ``seed``."""
    rng = random.Random(f"ledger-headers-{seed}")
    named, columns = rng.choice(_GROUPS)
    groups = named[: rng.randrange(2, len(named) + 1)]
    before = rng.choice((["日付"], ["日付", "伝票番号"], ["伝票日付"]))
    after = rng.choice(([], ["摘要"], ["摘要", "部門"]))
    repeat = rng.random() < 0.3  # the single columns written in both rows
    upper: list[str] = list(before)
    lower: list[str] = list(before) if repeat else [""] * len(before)
    names: list[str] = list(before)
    merged: list[tuple[int, int]] = []
    for group in groups:
        merged.append((len(upper), len(upper) + len(columns) - 1))
        upper += [group] + [""] * (len(columns) - 1)
        lower += list(columns)
        names += [f"{group}_{c}" for c in columns]
    upper += after
    lower += list(after) if repeat else [""] * len(after)
    names += after
    data: list[list[object]] = []
    for n in range(rows):
        day = dt.date(2026, 2, 1) + dt.timedelta(days=n % 28)
        row: list[object] = []
        for name in names:
            base = name.split("_")[-1]
            if base in ("日付", "伝票日付"):
                row.append(f"{day:%Y/%m/%d}")
            elif base == "伝票番号":
                row.append(1000 + n)
            elif base == "摘要":
                row.append(rng.choice(_MEMOS))
            elif base == "部門":
                row.append(rng.choice(("営業部", "総務部", "製造部")))
            else:
                row.append(_cell(rng, base, day))
        data.append(row)
    title = rng.choice(_TITLES) if rng.random() < 0.4 else None
    return Book(upper, lower, title, data, names, merged)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, int) and value >= 1000 and random.Random(value).random() < 0.5:
        return f'"{value:,}"'  # an amount as Excel's CSV writes a formatted cell
    return str(value)


def book_file(book: Book, form: str) -> tuple[bytes, str]:
    """``(bytes, name)``: ``book`` in ``form`` (``FILES``)."""
    width = len(book.names)
    head = ([[book.title] + [""] * (width - 1)] if book.title else []) + [book.upper, book.lower]
    if form.startswith("xlsx"):
        from openpyxl import Workbook

        workbook = Workbook()
        sheet = workbook.active
        assert sheet is not None
        for line in head:
            sheet.append([v or None for v in line])
        for row in book.rows:
            sheet.append(row)
        if form == "xlsx_merged":
            top = len(head) - 1  # the upper row, 1-based
            for first, last in book.merged:
                sheet.merge_cells(
                    start_row=top, start_column=first + 1, end_row=top, end_column=last + 1
                )
            for j, lower in enumerate(book.lower):
                if not lower:
                    sheet.merge_cells(
                        start_row=top, start_column=j + 1, end_row=top + 1, end_column=j + 1
                    )
        out = io.BytesIO()
        workbook.save(out)
        return out.getvalue(), "ledger.xlsx"
    lines = [",".join(line) for line in head]
    lines += [",".join(_text(v) for v in row) for row in book.rows]
    text = "\r\n".join(lines) + "\r\n"
    if form == "cp932":
        return text.encode("cp932"), "ledger.csv"
    return ("\ufeff" if form == "utf8_bom" else "").encode() + text.encode(), "ledger.csv"
