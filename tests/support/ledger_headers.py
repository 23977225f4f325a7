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

Shapes (``SHAPES``): ``two``, as above; ``text``, the same header over rows of text alone (a
table of journal patterns or of accounts: ``借方 | | 貸方 |`` over ``勘定科目 | 補助科目 | …``,
dates and words, no amount); ``three``, a header of three rows written without merging
(``借方 | | | 貸方`` over ``科目 | | 金額 | 科目`` over ``勘定 | 補助 | | 勘定``), read as
``借方_科目_勘定``, ``借方_科目_補助``, ``借方_金額``.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass

__all__ = ["FILES", "SHAPES", "Book", "book_file", "draw"]

FILES = ("utf8", "utf8_bom", "cp932", "xlsx", "xlsx_merged")
SHAPES = ("two", "text", "three")

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
# Groups over text columns only (``text``).
_TEXT_GROUPS = (
    (("借方", "貸方"), ("勘定科目", "補助科目")),
    (("借方", "貸方"), ("科目", "補助科目", "税区分")),
    (("請求先", "送付先"), ("会社名", "担当者")),
)
# Groups over columns, some of them groups over sub-columns (``three``): a column's sub-columns,
# or () where it spans the two lower rows.
_THREE_GROUPS: tuple[tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    (("借方", "貸方"), (("科目", ("勘定", "補助")), ("金額", ()))),
    (("借方", "貸方"), (("科目", ("コード", "名称")), ("金額", ("税抜", "消費税")))),
    (("4月", "5月", "6月"), (("売上", ("予算", "実績")), ("差異", ()))),
    (("入金", "出金"), (("現金", ("件数", "金額")), ("振込", ("件数", "金額")))),
)
_ACCOUNTS = ("旅費交通費", "消耗品費", "普通預金", "現金", "売掛金", "買掛金", "会議費", "通信費")
_SUBS = ("三井住友", "みずほ", "山田商事", "鈴木工業", "")
_TAXES = ("課税仕入10%", "対象外", "課税売上10%", "非課税")
_MEMOS = ("タクシー代", "文具", "振込手数料", "2月分 売上", "電話代")
_TITLES = ("仕訳帳", "2026年2月分", "振替伝票一覧", "部門別 予算実績表")


@dataclass
class Book:
    """A drawn ledger: its header rows, its data rows, the names its columns must read as and
    each column's values as they must read."""

    head: list[list[str]]
    title: str | None
    rows: list[list[object]]
    names: list[str]
    # The merges a workbook keeps for the header (``xlsx_merged``): 0-based (first row, first
    # column, last row, last column) within ``head``.
    merged: list[tuple[int, int, int, int]]


def _cell(rng: random.Random, column: str) -> object:
    if column in ("科目", "勘定科目", "勘定", "名称"):
        return rng.choice(_ACCOUNTS)
    if column in ("補助科目", "補助"):
        return rng.choice(_SUBS) or None
    if column == "税区分":
        return rng.choice(_TAXES)
    if column in ("会社名",):
        return rng.choice(("山田商事", "鈴木工業", "佐藤物産", "田中建設"))
    if column == "担当者":
        return rng.choice(("経理部 山田", "総務 鈴木", "佐藤様", "")) or None
    if column == "コード":
        return rng.randrange(1000, 9000)
    if column in ("件数", "数量"):
        return rng.randrange(1, 40)
    return rng.randrange(1, 5000) * 100


def _columns(rng: random.Random, shape: str) -> tuple[list[str], list[list[str]]]:
    """``(groups, under)``: the groups of a header of ``shape`` and the header rows under each
    group (one row of columns; for ``three`` two, blank below a column without sub-columns)."""
    if shape == "three":
        named, middle = rng.choice(_THREE_GROUPS)
        rows: list[list[str]] = [[], []]
        for column, subs in middle:
            rows[0] += [column] + [""] * (max(len(subs), 1) - 1)
            rows[1] += list(subs) or [""]
        return list(named[: rng.randrange(2, len(named) + 1)]), rows
    named, columns = rng.choice(_TEXT_GROUPS if shape == "text" else _GROUPS)
    return list(named[: rng.randrange(2, len(named) + 1)]), [list(columns)]


def _names(group: str, under: list[list[str]]) -> list[str]:
    """The names the columns under ``group`` must read as (``借方_科目_勘定``, ``借方_金額``)."""
    names, above = [], ""
    for j in range(len(under[0])):
        above = under[0][j] or above
        parts = [group, above] + [r[j] for r in under[1:] if r[j]]
        names.append("_".join(parts))
    return names


def draw(seed: int, rows: int = 14, shape: str = "two") -> Book:
    """A ledger of ``shape`` (``SHAPES``) drawn from ``seed``."""
    rng = random.Random(f"ledger-headers-{seed}" + ("" if shape == "two" else f"-{shape}"))
    groups, under = _columns(rng, shape)
    before = rng.choice((["日付"], ["日付", "伝票番号"], ["伝票日付"]))
    if shape == "text":
        before = rng.choice((["日付"], ["パターン名"], ["伝票日付", "伝票番号"]))
    after = rng.choice(([], ["摘要"], ["摘要", "部門"]))
    repeat = rng.random() < 0.3  # the single columns written in every row
    depth = 1 + len(under)
    head: list[list[str]] = [[] for _ in range(depth)]
    names: list[str] = []
    merged: list[tuple[int, int, int, int]] = []

    def single(columns: list[str]) -> None:
        for column in columns:
            if not repeat:
                merged.append((0, len(names), depth - 1, len(names)))
            for r, line in enumerate(head):
                line.append(column if repeat or r == 0 else "")
            names.append(column)

    single(before)
    for group in groups:
        width = len(under[0])
        merged.append((0, len(names), 0, len(names) + width - 1))
        if depth == 3:
            for j, column in enumerate(under[0]):
                end = j + 1
                while end < width and not under[0][end]:
                    end += 1
                if column and end - j > 1:
                    merged.append((1, len(names) + j, 1, len(names) + end - 1))
                elif column and not under[1][j]:
                    merged.append((1, len(names) + j, 2, len(names) + j))
        head[0] += [group] + [""] * (width - 1)
        for r, line in enumerate(under):
            head[r + 1] += line
        names += _names(group, under)
    single(after)
    data: list[list[object]] = []
    for n in range(rows):
        day = dt.date(2026, 2, 1) + dt.timedelta(days=n % 28)
        row: list[object] = []
        for name in names:
            base = name.split("_")[-1]
            if base in ("日付", "伝票日付"):
                row.append(f"{day:%Y/%m/%d}")
            elif base == "伝票番号":
                row.append(1000 + n if shape != "text" else f"P-{100 + n}")
            elif base == "摘要":
                row.append(rng.choice(_MEMOS))
            elif base == "部門":
                row.append(rng.choice(("営業部", "総務部", "製造部")))
            elif base == "パターン名":
                row.append(rng.choice(("家賃の支払", "売上の計上", "経費の立替", "給与の振込")))
            else:
                row.append(_cell(rng, base))
        data.append(row)
    title = rng.choice(_TITLES) if rng.random() < 0.4 else None
    return Book(head, title, data, names, merged)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, int) and value >= 1000 and random.Random(value).random() < 0.5:
        return f'"{value:,}"'  # an amount as Excel's CSV writes a formatted cell
    return str(value)


def book_file(book: Book, form: str) -> tuple[bytes, str]:
    """``(bytes, name)``: ``book`` in ``form`` (``FILES``)."""
    width = len(book.names)
    head = ([[book.title] + [""] * (width - 1)] if book.title else []) + book.head
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
            top = len(head) - len(book.head) + 1  # the header's first row, 1-based
            for r0, c0, r1, c1 in book.merged:
                sheet.merge_cells(
                    start_row=top + r0, start_column=c0 + 1, end_row=top + r1, end_column=c1 + 1
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
