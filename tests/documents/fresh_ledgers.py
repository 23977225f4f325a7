"""A second, independent generator of ledgers as accounting teams send them.

``ledger_corpus`` writes fixed ledgers, ``test_ledger_properties`` random cells in one plain
layout. This one draws whole files from a seed, combining what the others keep apart:

* a 仕訳日記帳 export (弥生/freee/マネーフォワード-like: 借方/貸方 with 補助科目 and 税区分,
  a title, a period line ``期間：令和8年1月1日～…`` and maybe the company above the header,
  header cells with trailing half- or full-width spaces, ``金額(円)`` headers, leading-zero
  伝票番号, a 税率 column of ``10%`` / ``８％`` (or a workbook's 0.1 under ``0%``), a 合計
  row, a note under the table);
* a 月次推移表 (科目 by 4月…3月 or 2025年4月… with a 合計 column, the unit ``（単位：千円）``
  in a title row, sections of accounts each closed by a 小計 row and a blank separator row,
  a 合計 row at the end; in a workbook maybe month headers typed as dates and shown as 4月 by
  their format, and maybe yen shown in 千円 by the format ``#,##0,``, whose values are yen);

with every date in one of the forms a person writes (2026/2/3, 2026年2月3日(火), 令和元年5月1
日, H31.4.30, R.08/02/03, 20260203, full-width digits) or, in a workbook, a date cell or an
Excel serial under a 和暦 number format (``[$-ja-JP]ggge"年"m"月"d"日"``), and every amount
as text (1,200 / ￥1,200 / 1,200円 / △1,200 / ▲1,200 / (1,200) / 1,200- / full-width) or, in
a workbook, a number under an accounting format (negatives in red or in parentheses as a
format, not as text) or a text cell with a leading apostrophe.

A *doubtful* journal also has a few dates a reader must not guess: a month and day without a
year (``2/3``, ``2月3日``) and a weekday that is not the date's (``2026年2月3日(水)``). Each
:class:`Drawn` says what ``read_table`` must give back: records, total-row labels, units and
the unreadable cells with the words their reason must hold.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from openpyxl import Workbook

__all__ = ["Drawn", "FileFormat", "Sheet", "WCell", "date_text", "journal", "monthly"]

FileFormat = Literal["csv-cp932", "csv-utf8-bom", "xlsx"]

_WEEKDAYS = "月火水木金土日"
_FULL_WIDTH = str.maketrans("0123456789,()-", "０１２３４５６７８９，（）－")
_REIWA, _HEISEI = dt.date(2019, 5, 1), dt.date(1989, 1, 8)
# Number formats of amounts as Excel's format dialog writes them: the sign is the format's.
_AMOUNT_FORMATS = (
    '_(¥* #,##0_);[Red]_(¥* (#,##0);_(¥* "-"_);_(@_)',
    "#,##0;[Red]\\(#,##0\\)",
    '#,##0;"△"#,##0',
    '"¥"#,##0;[Red]"¥"-#,##0',
    "#,##0_ ;[Red]\\-#,##0\\ ",
    "General",
)
# Formats that show yen in 千円: the cell holds 1,234,567, the screen shows 1,235.
_SCALED_FORMATS = ("#,##0,", '#,##0,;[Red]"△"#,##0,', "#,##0,;[Red]-#,##0,")
_MONTH_FORMATS = ('m"月"', 'yyyy"年"m"月"', '[$-ja-JP]ggge"年"m"月"', "yyyy/mm")
_DATE_FORMATS = (
    "yyyy/m/d",
    '[$-ja-JP]ggge"年"m"月"d"日"',
    "[$-411]ge.m.d",
    'yyyy"年"m"月"d"日"(aaa)',
)
_ACCOUNTS = ("旅費交通費", "消耗品費", "通信費", "会議費", "支払手数料", "地代家賃")
_PARTNERS = ("", "山田商事", "鈴木工業", "佐藤物産")
_TAXES = ("課対仕入10%", "課対仕入8%（軽）", "対象外", "非課税仕入")
_SECTIONS = ("営業部", "管理部", "製造部")


@dataclass(frozen=True)
class WCell:
    """One cell: ``text`` as a CSV holds it; ``stored`` what a workbook holds (default the
    text, as a text cell) with ``fmt`` its number format and ``quoted`` a leading apostrophe."""

    text: str
    stored: Any = None
    fmt: str | None = None
    quoted: bool = False


@dataclass
class Sheet:
    """The rows of a file, top to bottom (None: a blank row), the data rows' indexes, and the
    cell ranges a workbook merges (``A9:C9``)."""

    rows: list[list[WCell] | None] = field(default_factory=list)
    data_rows: list[int] = field(default_factory=list)
    merges: list[str] = field(default_factory=list)

    def add(self, cells: list[WCell] | None, *, data: bool = False) -> None:
        if data:
            self.data_rows.append(len(self.rows))
        self.rows.append(cells)


@dataclass
class Drawn:
    """A drawn ledger and what ``read_table`` must make of it."""

    sheet: Sheet
    fmt: FileFormat
    columns: list[str]
    records: list[dict[str, Any]]
    totals: list[str]
    units: dict[str, str]
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)  # column, cell, why

    @property
    def name(self) -> str:
        return "ledger.xlsx" if self.fmt == "xlsx" else "ledger.csv"

    def data(self) -> bytes:
        return _xlsx(self.sheet) if self.fmt == "xlsx" else _csv(self.sheet, self.fmt)

    def positions(self) -> list[int]:
        """The file line / sheet row of each record (from 1; one CSV line per row here)."""
        return [i + 1 for i in self.sheet.data_rows]


def _plain(text: str) -> WCell:
    return WCell(text, text)


def _era(day: dt.date) -> tuple[str, str, int]:
    if day >= _REIWA:
        return "令和", "R", day.year - 2018
    assert day >= _HEISEI
    return "平成", "H", day.year - 1988


def date_text(rng: random.Random, day: dt.date) -> str:
    """``day`` in one of the forms a person writes (module docstring), drawn by ``rng``."""
    y, m, d = day.year, day.month, day.day
    era, letter, ey = _era(day)
    year = "元" if ey == 1 and rng.random() < 0.5 else str(ey)
    weekday = _WEEKDAYS[day.weekday()]
    forms = [
        f"{y}/{m}/{d}",
        f"{y}/{m:02d}/{d:02d}",
        f"{y}-{m:02d}-{d:02d}",
        f"{y}年{m}月{d}日",
        f"{y}年{m}月{d}日({weekday})",
        f"{y}年{m}月{d}日（{weekday}）",
        f"{era}{year}年{m}月{d}日",
        f"{letter}{ey}.{m}.{d}",
        f"{letter}.{ey:02d}/{m:02d}/{d:02d}",
        f"{y}{m:02d}{d:02d}",
        f"{y}/{m}/{d}".translate(_FULL_WIDTH),
    ]
    return rng.choice(forms)


def _date_cell(rng: random.Random, day: dt.date, fmt: FileFormat) -> WCell:
    text = date_text(rng, day)
    if fmt != "xlsx" or rng.random() < 0.3:
        return _plain(text)
    midnight = dt.datetime(day.year, day.month, day.day)
    serial = (day - dt.date(1899, 12, 30)).days
    stored: Any = midnight if rng.random() < 0.5 else serial
    return WCell(text, stored, rng.choice(_DATE_FORMATS))


def _amount_text(rng: random.Random, value: int, fmt: FileFormat, unit: str = "円") -> str:
    """``value`` as a cell writes it; a unit written in the cell is the table's ``unit``."""
    digits = f"{abs(value):,}"
    yen = "￥" if fmt == "csv-cp932" or rng.random() < 0.5 else "¥"
    if value >= 0:
        forms = [str(value), digits, f"{yen}{digits}", f"{digits}{unit}"]
        forms.append(digits.translate(_FULL_WIDTH))
    else:
        forms = [
            f"-{digits}",
            f"△{digits}",
            f"▲{digits}",
            f"({digits})",
            f"({digits})".translate(_FULL_WIDTH),
            f"{digits}-",
            f"{yen}-{digits}",
        ]
    return rng.choice(forms)


def _amount_cell(rng: random.Random, value: int, fmt: FileFormat, unit: str = "円") -> WCell:
    text = _amount_text(rng, value, fmt, unit)
    if fmt != "xlsx":
        return _plain(text)
    if rng.random() < 0.2:
        return WCell(text, text, "@", quoted=True)  # typed as '1,200: a text cell
    return WCell(text, value, rng.choice(_AMOUNT_FORMATS))


def _rate_cell(rng: random.Random, percent: int, number: bool) -> WCell:
    """A tax rate: ``10%`` as text, or (``number``, a workbook) the fraction 0.1 under a ``0%``
    format. A column is one or the other: a number beside ``10%`` text, with the format not
    read, could be 10 or 0.1 (not this generator's)."""
    text = rng.choice([f"{percent}%", f"{percent}％", f"{percent}%".translate(_FULL_WIDTH)])
    if number:
        return WCell(text, percent / 100, rng.choice(["0%", "0.0%"]))
    return _plain(text)


def _header(rng: random.Random, name: str) -> WCell:
    """A header cell as typed: sometimes a trailing space or a full-width space around it."""
    pad = rng.choice(["", "", " ", "　", "  "])
    return _plain(rng.choice([name + pad, pad.replace(" ", "") + name]))


def _period(rng: random.Random, first: dt.date, last: dt.date) -> str:
    def written(day: dt.date) -> str:
        era, _, ey = _era(day)
        return f"{era}{'元' if ey == 1 else ey}年{day.month}月{day.day}日"

    return rng.choice(
        [f"期間：{written(first)}～{written(last)}", f"自 {first:%Y/%m/%d} 至 {last:%Y/%m/%d}"]
    )


def _journal_day(rng: random.Random) -> dt.date:
    """A day around the 平成/令和 boundary or in 2026."""
    if rng.random() < 0.4:
        return dt.date(2019, 4, 25) + dt.timedelta(days=rng.randrange(14))
    return dt.date(2026, 1, 1) + dt.timedelta(days=rng.randrange(90))


def _doubt(rng: random.Random, day: dt.date) -> tuple[str, str]:
    """A date cell that must not be read, and the words of why."""
    if rng.random() < 0.5:
        written = rng.choice([f"{day.month}/{day.day}", f"{day.month}月{day.day}日"])
        return written, "年が書かれていない"
    wrong = _WEEKDAYS[(day.weekday() + rng.randrange(1, 7)) % 7]
    return f"{day.year}年{day.month}月{day.day}日({wrong})", "曜日"


def journal(seed: int, fmt: FileFormat, *, doubtful: bool = False) -> Drawn:
    """A 仕訳日記帳 export drawn from ``seed`` (see the module docstring): the entries depend
    on the seed alone, how they are written on the seed and the format."""
    rng, look = random.Random(seed), random.Random(f"{seed}-{fmt}")
    yen = rng.random() < 0.4
    debit, credit = ("借方金額(円)", "貸方金額(円)") if yen else ("借方金額", "貸方金額")
    names = ["日付", "伝票番号", "借方勘定科目", "借方補助科目", "借方税区分", debit]
    names += ["貸方勘定科目", "貸方税区分", credit, "摘要", "税率"]
    count = rng.randrange(4, 13)
    days = sorted(_journal_day(rng) for _ in range(count))
    sheet = Sheet()
    sheet.add([_plain("仕訳日記帳")])
    if look.random() < 0.5:
        sheet.add([_plain("株式会社サンプル商事")])
    sheet.add([_plain(_period(look, days[0], days[-1]))])
    if look.random() < 0.5:
        sheet.add(None)
    sheet.add([_header(look, n) for n in names])
    doubts = set(rng.sample(range(count), k=max(1, count // 4))) if doubtful else set()
    rates_as_numbers = fmt == "xlsx" and look.random() < 0.7
    records: list[dict[str, Any]] = []
    unreadable: list[tuple[str, str, str]] = []
    for i, day in enumerate(days):
        value = rng.randrange(1, 500) * 100 * (-1 if rng.random() < 0.15 else 1)
        account, partner = rng.choice(_ACCOUNTS), rng.choice(_PARTNERS)
        slip, tax = f"{i + 1:04d}", rng.choice(_TAXES)
        rate = 8 if "8%" in tax else 10
        if i in doubts:
            written, why = _doubt(look, day)
            date_cell, date_value = _plain(written), None
            unreadable.append(("日付", written, why))
        else:
            date_cell, date_value = _date_cell(look, day, fmt), day.isoformat()
        note = f"{account} {partner or '現金払い'}"
        cells = [
            date_cell,
            WCell(slip, slip, "@", quoted=fmt == "xlsx"),
            _plain(account),
            _plain(partner),
            _plain(tax),
            _amount_cell(look, value, fmt),
            _plain("現金" if not partner else "未払金"),
            _plain("対象外"),
            _amount_cell(look, value, fmt),
            _plain(note),
            _rate_cell(look, rate, rates_as_numbers),
        ]
        sheet.add(cells, data=True)
        records.append(
            {
                "日付": date_value,
                "伝票番号": slip,
                "借方勘定科目": account,
                "借方補助科目": partner or None,
                "借方税区分": tax,
                debit: value,
                "貸方勘定科目": cells[6].text,
                "貸方税区分": "対象外",
                credit: value,
                "摘要": note,
                "税率": rate / 100,
            }
        )
    total = sum(r[debit] for r in records)
    label = look.choice(["合計", "合　計", "【合計】"])
    blank = WCell("", None)
    stated = _amount_cell(look, total, fmt)
    sheet.add([_plain(label), *[blank] * 4, stated, blank, blank, stated, blank, blank])
    if look.random() < 0.5:
        sheet.add(None)
        sheet.add([_plain(look.choice(["※ 金額は税込です", "以上", "出力日：2026/03/31"]))])
    units = {debit: "円", credit: "円"} if yen else {}
    return Drawn(sheet, fmt, names, records, [label], units, unreadable)


def monthly(seed: int, fmt: FileFormat) -> Drawn:
    """A 部門別月次推移表 drawn from ``seed`` (see the module docstring)."""
    rng, look = random.Random(seed), random.Random(f"{seed}-{fmt}")
    months = [(3 + k) % 12 + 1 for k in range(rng.randrange(3, 13))]  # 4月, 5月, ... 3月
    # A workbook's month headers may be dates (2025/4/1) shown as 4月 by their format.
    date_cells = fmt == "xlsx" and look.random() < 0.4
    dated = rng.random() < 0.3 or date_cells
    month_names = [f"{2025 + (m < 4)}年{m}月" if dated else f"{m}月" for m in months]
    names = ["科目", *month_names, "合計"]
    header = [_header(look, n) for n in names]
    if date_cells:
        header[1:-1] = [
            WCell(f"{m}月", dt.datetime(2025 + (m < 4), m, 1), look.choice(_MONTH_FORMATS))
            for m in months
        ]
    sheet = Sheet()
    title = "部門別損益推移表"
    if look.random() < 0.5:
        sheet.add([_plain(f"{title}（単位：千円）")])
    else:
        sheet.add([_plain(title)])
        sheet.add([_plain(look.choice(["（単位：千円）", "単位：千円", "[単位:千円]"]))])
    sheet.add([_plain(_period(look, dt.date(2025, 4, 1), dt.date(2026, 3, 31)))])
    sheet.add(header)
    # A workbook may hold yen and show them in 千円 by its number format (``#,##0,``).
    scaled = fmt == "xlsx" and look.random() < 0.3

    def amount(value: int) -> WCell:
        if scaled:
            return WCell(f"{value:,}", value, look.choice(_SCALED_FORMATS))
        return _amount_cell(look, value, fmt, "千円")

    records: list[dict[str, Any]] = []
    labels: list[str] = []
    for section in rng.sample(_SECTIONS, k=rng.randrange(1, 4)):
        rows: list[list[Any]] = []
        for account in rng.sample(_ACCOUNTS, k=rng.randrange(1, 4)):
            values = [rng.randrange(-50, 1000) for _ in months]
            values = [v or 1 for v in values]  # a zero would be a dash: not this generator's
            if scaled:
                values = [v * 1000 + look.randrange(1000) for v in values]
            rows.append([f"{section} {account}", *values, sum(values)])
        for row in rows:
            sheet.add([_plain(row[0])] + [amount(v) for v in row[1:]], data=True)
            records.append(dict(zip(names, row, strict=True)))
        sub = [sum(r[j] for r in rows) for j in range(1, len(names))]
        label = look.choice(["小計", f"{section} 小計", "小　計"])
        sheet.add([_plain(label)] + [amount(v) for v in sub])
        labels.append(label)
        sheet.add(None)
    grand = [sum(r[n] for r in records) for n in names[1:]]
    label = look.choice(["合計", "総合計", "合　計"])
    sheet.add([_plain(label)] + [amount(v) for v in grand])
    labels.append(label)
    units = dict.fromkeys(names[1:], "円" if scaled else "千円")
    return Drawn(sheet, fmt, names, records, labels, units)


def _csv(sheet: Sheet, fmt: FileFormat) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    width = max(len(r) for r in sheet.rows if r is not None)
    for row in sheet.rows:
        cells = [c.text for c in row] if row is not None else []
        writer.writerow(cells + [""] * (width - len(cells)))
    encoding = "cp932" if fmt == "csv-cp932" else "utf-8-sig"
    return out.getvalue().encode(encoding)


def _xlsx(sheet: Sheet) -> bytes:
    book = Workbook()
    ws = book.active
    assert ws is not None
    for r, row in enumerate(sheet.rows, start=1):
        for c, cell in enumerate(row or [], start=1):
            value = cell.stored if cell.stored is not None else None
            if value is None or value == "":
                continue
            target = ws.cell(row=r, column=c, value=value)
            if isinstance(value, str):
                target.data_type = "s"
            if cell.fmt is not None:
                target.number_format = cell.fmt
            if cell.quoted:
                target.quotePrefix = True
    for merged in sheet.merges:
        ws.merge_cells(merged)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
