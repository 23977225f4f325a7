"""Cash books and ledgers closed as bookkeepers close them: a seeded generator.

The other ledger generators (``tests/documents/fresh_ledgers``, ``kept_ledgers``,
``ledger_corpus``...) draw journals and reports whose every row is a transaction, a total or a
note. A 現金出納帳, 預金出納帳 or 総勘定元帳 also carries its balance from month to month and
from page to page, and where it is written decides what a sum of the column means:

* ``book``: closed as 簿記 teaches -- the month opens with 前月繰越 (前期繰越) in the 収入
  (借方) column and the balance, and closes with 次月繰越 in the 支出 (貸方) column, so that
  the 合計 row under it shows the same sum on both sides (前月繰越 + 収入 = 支出 + 次月繰越);
* ``export``: as accounting software prints it -- 前月繰越 with the balance alone, a 月計 row,
  maybe a 累計 row and a 次月繰越 row with the balance alone, maybe a 合計 at the end;
* ``paged``: a printed book cut into pages of 3-5 entries -- each page ends with 次頁へ繰越
  (the columns' sums so far and the balance) and the next opens with 前頁より繰越 (the same).

One to three months, 2-7 entries a month, blank lines between months, a title, maybe the
company and a period line above the header, maybe a note under the table. Dates are written in
the forms of ``fresh_ledgers.date_text`` (和暦, 20260203, full width...) or, in a workbook, as
date cells; amounts as people type them (1,200 / ￥1,200 / 1,200円 / full width) or numbers
under an accounting format. The carry label stands in the 摘要 column or, where the row has no
date, under 日付.

:class:`Book` says what ``read_table`` must give back: every transaction and every carry row
that holds the balance alone (it changes no sum), in order; the labels of the rows set aside
(totals, and the carries written in the columns of money moved); and ``flows``, what each
money column sums to over the transactions alone.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import Any, Literal

from tests.documents.fresh_ledgers import Drawn, FileFormat, Sheet, WCell, date_text

__all__ = ["FORMATS", "STYLES", "Book", "amount_cell", "book", "date_cell"]

Style = Literal["book", "export", "paged"]
STYLES: tuple[Style, ...] = ("book", "export", "paged")
FORMATS: tuple[FileFormat, ...] = ("csv-cp932", "csv-utf8-bom", "xlsx")

_FULL_WIDTH = str.maketrans("0123456789,", "０１２３４５６７８９，")
# (title, date, account or None, memo, in, out, balance): the books and their headers.
_LAYOUTS = (
    ("現金出納帳", "日付", "科目", "摘要", "収入", "支出", "残高"),
    ("現金出納帳", "月日", "勘定科目", "摘要", "収入金額", "支出金額", "差引残高"),
    ("小口現金出納帳", "日付", None, "摘要", "受入", "払出", "残高"),
    ("預金出納帳", "年月日", None, "摘要", "預入", "引出", "残高"),
    ("普通預金出納帳", "日付", "相手科目", "摘要", "入金", "出金", "残高"),
    ("総勘定元帳", "日付", "相手勘定科目", "摘要", "借方金額", "貸方金額", "残高"),
    ("総勘定元帳", "日付", "相手科目", "摘要", "借方", "貸方", "差引残高"),
)
_IN = (("売上", "現金売上"), ("売掛金", "山田商事 入金"), ("普通預金", "預金引出"))
_OUT = (
    ("旅費交通費", "タクシー代"),
    ("消耗品費", "文具 鈴木文具店"),
    ("通信費", "切手代"),
    ("会議費", "打合せ 喫茶"),
    ("支払手数料", "振込手数料"),
    ("普通預金", "預入"),
)
_AMOUNT_FORMATS = ("#,##0", '"¥"#,##0', "#,##0;[Red]\\(#,##0\\)", "General")
_DATE_FORMATS = ("yyyy/m/d", 'yyyy"年"m"月"d"日"', "m/d", '[$-ja-JP]ggge"年"m"月"d"日"')
_NOTES = ("※ 次月繰越は朱記", "以上", "※ 金額は税込です", "作成：経理部")


@dataclass
class Book:
    """A drawn book (``drawn``: the file and what ``read_table`` must give back) and what
    each money column sums to over the transactions (``flows``)."""

    drawn: Drawn
    style: Style
    flows: dict[str, int]
    carried: int  # carry rows written in the money columns: a reader must set them aside


def amount_cell(rng: random.Random, value: int | None, fmt: FileFormat) -> WCell:
    """A yen amount (not negative) as typed, or in a workbook mostly a number with a format."""
    if value is None:
        return WCell("", None)
    digits = f"{value:,}"
    if fmt == "xlsx" and rng.random() < 0.85:
        return WCell(digits, value, rng.choice(_AMOUNT_FORMATS))
    yen = "￥" if fmt == "csv-cp932" else rng.choice("￥¥")
    forms = [str(value), digits, digits, f"{yen}{digits}", f"{digits}円"]
    text = rng.choice([*forms, digits.translate(_FULL_WIDTH)])
    return WCell(text, text)


def date_cell(rng: random.Random, day: dt.date | None, fmt: FileFormat) -> WCell:
    """A date as written (``fresh_ledgers.date_text``), or in a workbook mostly a date cell."""
    if day is None:
        return WCell("", None)
    text = date_text(rng, day)
    if fmt == "xlsx" and rng.random() < 0.7:
        stored = dt.datetime(day.year, day.month, day.day)
        return WCell(text, stored, rng.choice(_DATE_FORMATS))
    return WCell(text, text)


class _Writer:
    """Writes the rows of one book and records what a reader must make of them."""

    def __init__(self, rng: random.Random, look: random.Random, fmt: FileFormat) -> None:
        self.rng, self.look, self.fmt = rng, look, fmt
        title, day, account, memo, inflow, outflow, balance = rng.choice(_LAYOUTS)
        self.title = title
        self.names = [day, *([account] if account else []), memo, inflow, outflow, balance]
        self.day, self.account, self.memo = day, account, memo
        self.inflow, self.outflow, self.balance = inflow, outflow, balance
        self.sheet = Sheet()
        self.records: list[dict[str, Any]] = []
        self.labels: list[str] = []
        self.carried = 0

    def amount(self, value: int | None) -> WCell:
        return amount_cell(self.look, value, self.fmt)

    def date(self, day: dt.date | None) -> WCell:
        return date_cell(self.look, day, self.fmt)

    def row(
        self,
        day: dt.date | None,
        account: str | None,
        memo: str,
        amounts: tuple[int | None, int | None, int | None],
        *,
        kept: bool = True,
        label_first: bool = False,
    ) -> None:
        """A row; ``kept``: a row of the data (else set aside, labelled ``memo``);
        ``label_first``: ``memo`` written under 日付 (a row without a date)."""
        cells = [WCell(memo, memo) if label_first else self.date(day)]
        if self.account:
            cells.append(WCell(account or "", account))
        cells.append(WCell("", None) if label_first else WCell(memo, memo))
        cells += [self.amount(a) for a in amounts]
        self.sheet.add(cells, data=kept)
        if not kept:
            self.labels.append(memo)
            return
        record: dict[str, Any] = {self.day: day.isoformat() if day else None}
        if self.account:
            record[self.account] = account
        record[self.memo] = memo
        record.update(zip((self.inflow, self.outflow, self.balance), amounts, strict=True))
        self.records.append(record)

    def carry(self, label: str, day: dt.date | None, amounts: tuple[int | None, ...]) -> None:
        """A carry row: set aside when it writes an amount in a money column."""
        moved = any(a for a in amounts[:2])
        first = moved and day is None and self.look.random() < 0.5
        self.row(
            day,
            None,
            label,
            (amounts[0], amounts[1], amounts[2]),
            kept=not moved,
            label_first=first,
        )
        self.carried += moved

    def total(self, label: str, inflow: int, outflow: int, balance: int | None = None) -> None:
        cells = [WCell(label, label)] + [WCell("", None)] * (len(self.names) - 4)
        cells += [self.amount(inflow), self.amount(outflow), self.amount(balance)]
        self.sheet.add(cells)
        self.labels.append(label)


def _month_days(rng: random.Random, first: dt.date, count: int) -> list[dt.date]:
    last = (first + dt.timedelta(days=31)).replace(day=1) - dt.timedelta(days=1)
    return sorted(first + dt.timedelta(days=rng.randrange(1, last.day)) for _ in range(count))


def _start(rng: random.Random) -> dt.date:
    """The first day of the book: in 2025-2026, or around the 平成/令和 boundary."""
    if rng.random() < 0.2:
        return dt.date(2019, rng.choice((3, 4, 5)), 1)
    return dt.date(2025, 4, 1) + dt.timedelta(days=31 * rng.randrange(12))


def book(seed: int, fmt: FileFormat) -> Book:
    """The book of ``seed`` in the file format ``fmt`` (module docstring). The style and the
    entries depend on the seed alone, how they are written on the seed and the format."""
    rng, look = random.Random(seed), random.Random(f"{seed}-{fmt}")
    style = rng.choice(STYLES)
    w = _Writer(rng, look, fmt)
    first = _start(rng).replace(day=1)
    months = rng.randrange(1, 4)
    w.sheet.add([WCell(w.title, w.title)])
    if look.random() < 0.5:
        w.sheet.add([WCell("株式会社サンプル商事", "株式会社サンプル商事")])
    if look.random() < 0.6:
        end = first
        for _ in range(months):
            end = (end + dt.timedelta(days=31)).replace(day=1)
        end -= dt.timedelta(days=1)
        period = f"期間：{first:%Y/%m/%d}～{end:%Y/%m/%d}"
        w.sheet.add([WCell(period, period)])
    if look.random() < 0.4:
        w.sheet.add(None)
    w.sheet.add([WCell(n, n) for n in w.names])
    balance = rng.randrange(50, 3000) * 1000
    flows = {w.inflow: 0, w.outflow: 0}
    page_in = page_out = 0  # a printed page's sums so far (paged)
    cumulative = [0, 0]
    month_start = first
    for m in range(months):
        opening_label = rng.choice(("前月繰越", "前期繰越")) if m == 0 else "前月繰越"
        opening_day = month_start if look.random() < 0.6 else None
        if style == "book":
            shown = balance if look.random() < 0.7 else None
            w.carry(opening_label, opening_day, (balance, None, shown))
            month_in, month_out = balance, 0
        else:
            w.carry(opening_label, opening_day, (None, None, balance))
            month_in = month_out = 0
        entries = _month_days(rng, month_start, rng.randrange(2, 8))
        page_rows = rng.randrange(3, 6)
        for i, day in enumerate(entries):
            if style == "paged" and i and i % page_rows == 0:
                w.carry("次頁へ繰越", None, (page_in, page_out, balance))
                if look.random() < 0.5:
                    w.sheet.add(None)
                w.carry("前頁より繰越", None, (page_in, page_out, balance))
            value = rng.randrange(1, 300) * 100
            take = rng.random() < 0.65 and value <= balance
            account, memo = rng.choice(_OUT if take else _IN)
            balance += -value if take else value
            pair = (None, value) if take else (value, None)
            w.row(day, account, memo, (*pair, balance))
            flows[w.outflow if take else w.inflow] += value
            month_out += value if take else 0
            month_in += 0 if take else value
            page_out += value if take else 0
            page_in += 0 if take else value
        month_end = (month_start + dt.timedelta(days=31)).replace(day=1) - dt.timedelta(days=1)
        closing_day = month_end if look.random() < 0.5 else None
        if style == "book":
            w.carry("次月繰越", closing_day, (None, balance, None))
            w.total(look.choice(("合計", "合　計")), month_in, month_out + balance)
        else:
            w.total(
                look.choice(("月計", "当月合計", f"{month_start.month}月計")), month_in, month_out
            )
            cumulative = [cumulative[0] + month_in, cumulative[1] + month_out]
            if m and look.random() < 0.6:
                w.total("累計", cumulative[0], cumulative[1])
            if look.random() < 0.5:
                w.carry("次月繰越", closing_day, (None, None, balance))
        month_start = month_end + dt.timedelta(days=1)
        if m + 1 < months and look.random() < 0.7:
            w.sheet.add(None)
    if style != "book" and look.random() < 0.5:
        w.total("合計", flows[w.inflow], flows[w.outflow])
    if look.random() < 0.4:
        w.sheet.add(None)
        note = look.choice(_NOTES)
        w.sheet.add([WCell(note, note)])
    drawn = Drawn(w.sheet, fmt, w.names, w.records, w.labels, {})
    return Book(drawn, style, flows, w.carried)
