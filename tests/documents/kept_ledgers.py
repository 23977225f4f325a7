"""A third generator: ledgers as a printer or a paged export leaves them.

``fresh_ledgers`` draws a journal and a monthly report as one block under one header. Real
exports are cut into pages, and each page repeats what stood above the table. This one draws
a 売上明細 (日付, 伝票No, 部門, 摘要, 金額, 税率) written as such a file:

* a header of one row, or in a workbook two (明細 / 売上 merged over the columns they
  group, 日付 in the lower row only);
* a title, maybe the company and a period line, and the unit (``（単位：千円）``, ``単位：円``)
  above the header **or under the table** (directly under the data or under the 合計 row);
* pages of 3-7 entries; between pages maybe a page total (頁計, ページ計, 小計), a page
  number (``- 1 -``, ``1/3 ページ``, ``P.1``, ``1頁``), a blank line, the titles again and
  the header again;
* the grand total (合計, 総計, 合　計, 【合計】) at the bottom -- under 日付, under 伝票No
  with the date blank, under 摘要, or in a workbook merged over 日付..摘要 -- or right under
  the header; maybe a 累計 row after it; notes (``※ 金額は税抜です``) and a page number under
  the table;
* dates in the forms the first generators leave out: ``令8.2.3``, ``平31.4.30``,
  ``2026/2/3 0:00``, ``2026-02-03T00:00:00``, an Excel serial number as text in a CSV,
  ``2026年2月3日（火曜日）``, ``2026/2/3 火曜日``, and days just after 2019-04-30 written in 平成 (``平成31年5月1日``)
  or just before written as 令和元年 (read as the day the year names, with a note);
* amounts as every form as text (in a workbook too: ``(1,200)`` typed into a text cell;
  ``￥▲1,200``),
  ``1,200.00``, zero as ``-``, ``―``, ``－`` or ``0``, and blank cells;
* a 税率 column of ``10%`` / ``８％`` text, and in a workbook a mix of numbers formatted
  ``0%`` and text ``10%``.

A *doubtful* file also has a cell a reader must refuse: a 税率 typed as a plain number (``0.1``
beside ``10%``: the fraction or 0.1 %?) and a date without a year (``2/3`` under a 期間 line).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

from openpyxl.utils import get_column_letter

from tests.documents.fresh_ledgers import Drawn, FileFormat, Sheet, WCell, date_text

__all__ = ["COLUMNS", "Printed", "printed"]

COLUMNS = ["日付", "伝票No", "部門", "摘要", "金額", "税率"]
AMOUNT = COLUMNS.index("金額")
_FULL = str.maketrans("0123456789,()-", "０１２３４５６７８９，（）－")
_SECTIONS = ("営業部", "管理部", "製造部")
_ITEMS = ("会議費 山田商事", "消耗品 鈴木工業", "運賃 佐藤物産", "広告料")
_AMOUNT_FORMATS = ("#,##0;[Red]\\(#,##0\\)", '#,##0;"△"#,##0', "#,##0_ ;[Red]\\-#,##0\\ ")
_ZERO_FORMAT = '_(¥* #,##0_);_(¥* (#,##0);_(¥* "-"_);_(@_)'
_EPOCH = dt.date(1899, 12, 30)
_REIWA = dt.date(2019, 5, 1)


@dataclass
class Printed(Drawn):
    """A drawn printout (``columns``: the names read, ``records`` keyed by ``COLUMNS``):
    ``layout`` the file positions of the rows between pages that are not
    data (repeated header and titles, page numbers) and of a unit line under the table;
    ``stated`` each total row's 金額 in file order (the sum it must equal); ``era_notes``
    how many dates are written in an era that had not begun or had ended; ``grand`` the
    合計 the file states; ``refused`` the cells a reader must refuse (column, position, the
    words of why)."""

    grand: int = 0
    layout: list[int] = field(default_factory=list)
    stated: list[int | None] = field(default_factory=list)
    era_notes: int = 0
    refused: list[tuple[str, int, str]] = field(default_factory=list)


def _plain(text: str) -> WCell:
    return WCell(text, text or None)


def _era_text(rng: random.Random, day: dt.date) -> tuple[str, bool]:
    """``day`` in 和暦, sometimes in the era next to its own around 2019-05-01 (the second
    value says so: 平成31年5月1日, 令和元年4月30日)."""
    heisei = day < _REIWA
    near = dt.date(2019, 4, 20) <= day <= dt.date(2019, 5, 10)
    if near and rng.random() < 0.5:
        heisei = not heisei
    name, kanji, letter, base = ("平成", "平", "H", 1988) if heisei else ("令和", "令", "R", 2018)
    year = day.year - base
    shown = "元" if year == 1 and rng.random() < 0.5 else str(year)
    forms = [f"{name}{shown}年{day.month}月{day.day}日", f"{kanji}{year}.{day.month}.{day.day}"]
    forms.append(f"{letter}{year}.{day.month}.{day.day}")
    return rng.choice(forms), heisei != (day < _REIWA)


def _date_cell(rng: random.Random, day: dt.date, fmt: FileFormat) -> tuple[WCell, bool]:
    serial = (day - _EPOCH).days
    if fmt == "xlsx" and rng.random() < 0.5:
        midnight = dt.datetime(day.year, day.month, day.day)
        stored: Any = midnight if rng.random() < 0.6 else serial
        return WCell(f"{day:%Y/%m/%d}", stored, "yyyy/m/d"), False
    if rng.random() < 0.4:
        text, outside = _era_text(rng, day)
        return _plain(text), outside
    forms = [
        f"{day.year}/{day.month}/{day.day} 0:00",
        f"{day:%Y-%m-%d}T00:00:00",
        str(serial),  # a CSV saved from a sheet whose date column lost its format
        f"{day.year}年{day.month}月{day.day}日（{'月火水木金土日'[day.weekday()]}曜日）",
        f"{day.year}/{day.month}/{day.day} {'月火水木金土日'[day.weekday()]}曜日",
        date_text(rng, day),  # the first generator's forms (weekdays, full width, 20260203...)
    ]
    return _plain(rng.choice(forms)), False


def _amount_text(rng: random.Random, value: int, fmt: FileFormat, unit: str | None) -> str:
    """``value`` as a cell writes it; a unit written in the cell is the table's ``unit``."""
    if value == 0:
        return rng.choice(["-", "―", "－", "0"])
    digits = f"{abs(value):,}"
    yen = "￥" if fmt == "csv-cp932" or rng.random() < 0.5 else "¥"
    if value > 0:
        forms = [
            digits,
            f"{yen}{digits}",
            f"{digits}{unit or '円'}",
            f"{digits}.00",
            digits.translate(_FULL),
        ]
    else:
        forms = [f"△{digits}", f"▲{digits}", f"({digits})", f"({digits})".translate(_FULL)]
        forms += [f"{digits}-", f"-{yen}{digits}", f"-{digits}".translate(_FULL)]
        forms += [f"{yen}▲{digits}", f"{yen}△{digits}"]
    return rng.choice(forms)


def _amount_cell(rng: random.Random, value: int | None, fmt: FileFormat, unit: str | None) -> WCell:
    if value is None:
        return WCell("", None)
    text = _amount_text(rng, value, fmt, unit)
    if fmt != "xlsx" or rng.random() < 0.4:
        return WCell(text, text, "@" if fmt == "xlsx" else None, quoted=rng.random() < 0.3)
    return WCell(text, value, _ZERO_FORMAT if value == 0 else rng.choice(_AMOUNT_FORMATS))


def _rate_cell(rng: random.Random, percent: int, fmt: FileFormat) -> WCell:
    text = rng.choice([f"{percent}%", f"{percent}％".translate(_FULL), f"{percent}.0%"])
    if fmt == "xlsx" and rng.random() < 0.5:
        return WCell(text, percent / 100, rng.choice(["0%", "0.0%"]))
    return _plain(text)


def _page_number(rng: random.Random, page: int, pages: int) -> str:
    return rng.choice([f"- {page} -", f"{page}/{pages} ページ", f"P.{page}", f"{page}頁"])


def _row(cells: dict[int, WCell]) -> list[WCell]:
    return [cells.get(j, WCell("", None)) for j in range(len(COLUMNS))]


def printed(seed: int, fmt: FileFormat, *, doubtful: bool = False) -> Printed:
    """A paged 売上明細 drawn from ``seed`` (module docstring): the entries depend on the seed,
    how they are written and laid out on the seed and the format."""
    rng, look = random.Random(seed), random.Random(f"{seed}-{fmt}")
    unit = rng.choice([None, "千円", "円"])
    unit_below = unit is not None and look.random() < 0.5
    count, per_page = rng.randrange(6, 25), rng.randrange(3, 8)
    early = rng.random() < 0.4  # around the 平成/令和 boundary, else early 2026
    start = dt.date(2019, 4, 20) if early else dt.date(2026, 1, 5)
    days = sorted(
        start + dt.timedelta(days=rng.randrange(20 if early else 80)) for _ in range(count)
    )
    entries = []
    for day in days:
        roll = rng.random()
        value = None if roll < 0.05 else 0 if roll < 0.12 else rng.randrange(1, 5000) * 10
        if value and rng.random() < 0.15:
            value = -value
        entries.append((day, rng.choice(_SECTIONS), rng.choice(_ITEMS), value, rng.choice([10, 8])))
    titles = [["売上明細表"]]
    if look.random() < 0.5:
        titles.append(["株式会社サンプル商事"])
    titles.append(
        [
            f"期間：{days[0].year}年{days[0].month}月{days[0].day}日～{days[-1].year}年{days[-1].month}月{days[-1].day}日"
        ]
    )
    if unit is not None and not unit_below:
        titles.append([look.choice([f"（単位：{unit}）", f"単位：{unit}", f"[単位:{unit}]"])])
    sheet, drawn_layout, stated = Sheet(), [], []
    total_labels: list[str] = []
    header = [_plain(n) for n in COLUMNS]
    # A workbook may group columns under a second header row above (明細 merged over 伝票No,
    # 部門 and 摘要, 売上 over 金額 and 税率; 日付 only below): read as 明細_部門, 売上_金額...
    groups = [(1, 3, "明細"), (4, 5, "売上")] if fmt == "xlsx" and look.random() < 0.4 else []
    names = list(COLUMNS)
    for first, last, group in groups:
        names[first : last + 1] = [f"{group}_{n}" for n in COLUMNS[first : last + 1]]

    def add_header(layout: bool) -> None:
        if groups:
            if layout:
                drawn_layout.append(len(sheet.rows) + 1)
            sheet.add(_row({first: _plain(group) for first, _, group in groups}))
            row = len(sheet.rows)
            sheet.merges.extend(
                f"{get_column_letter(first + 1)}{row}:{get_column_letter(last + 1)}{row}"
                for first, last, _ in groups
            )
        if layout:
            drawn_layout.append(len(sheet.rows) + 1)
        sheet.add(header)

    for title in titles:
        sheet.add([_plain(t) for t in title])
    add_header(layout=False)
    grand = sum(e[3] or 0 for e in entries)
    top = look.random() < 0.25
    if top:
        label = look.choice(["合計", "総計"])
        sheet.add(_row({0: _plain(label), AMOUNT: _amount_cell(look, grand, fmt, unit)}))
        total_labels.append(label)
        stated.append(grand)
    pages = [entries[i : i + per_page] for i in range(0, count, per_page)]
    records, era_notes, refused = [], 0, []
    doubt_rows = set(rng.sample(range(count), k=2)) if doubtful and count >= 2 else set()
    index = 0
    for number, page in enumerate(pages, start=1):
        for day, section, item, value, rate in page:
            slip = f"{index + 1:04d}"
            date_cell, outside = _date_cell(look, day, fmt)
            rate_cell = _rate_cell(look, rate, fmt)
            record_day: str | None = day.isoformat()
            position = len(sheet.rows) + 1
            if index in doubt_rows and len(refused) == 0:
                rate_cell = WCell("0.1", 0.1 if fmt == "xlsx" else "0.1")
                refused.append((names[5], position, "決められません"))
            elif index in doubt_rows:
                date_cell, outside, record_day = _plain(f"{day.month}/{day.day}"), False, None
                refused.append((names[0], position, "年が書かれていない"))
            era_notes += outside
            cells = {0: date_cell, 1: WCell(slip, slip, "@", quoted=fmt == "xlsx")}
            cells |= {
                2: _plain(section),
                3: _plain(item),
                AMOUNT: _amount_cell(look, value, fmt, unit),
            }
            sheet.add(_row(cells | {5: rate_cell}), data=True)
            records.append(
                {
                    "日付": record_day,
                    "伝票No": slip,
                    "部門": section,
                    "摘要": item,
                    "金額": value,
                    "税率": rate / 100,
                }
            )
            index += 1
        if number == len(pages):
            break
        if look.random() < 0.5:
            label = look.choice(["頁計", "ページ計", "小計"])
            page_sum = sum(e[3] or 0 for e in page)
            sheet.add(_row({0: _plain(label), AMOUNT: _amount_cell(look, page_sum, fmt, unit)}))
            total_labels.append(label)
            stated.append(page_sum)
        if look.random() < 0.8:
            drawn_layout.append(len(sheet.rows) + 1)
            sheet.add([_plain(_page_number(look, number, len(pages)))])
        if look.random() < 0.5:
            sheet.add(None)
        if look.random() < 0.5:
            for title in titles:
                drawn_layout.append(len(sheet.rows) + 1)
                sheet.add([_plain(t) for t in title])
        add_header(layout=True)
    if not top:
        label = look.choice(["合計", "総計", "合　計", "【合計】"])
        where = look.choice([0, 1, 3])
        row = _row({where: _plain(label), AMOUNT: _amount_cell(look, grand, fmt, unit)})
        sheet.add(row)
        if fmt == "xlsx" and where == 0 and look.random() < 0.6:
            sheet.merges.append(f"A{len(sheet.rows)}:{get_column_letter(AMOUNT)}{len(sheet.rows)}")
        total_labels.append(label)
        stated.append(grand)
        if look.random() < 0.3:
            sheet.add(_row({0: _plain("累計"), AMOUNT: _amount_cell(look, grand, fmt, unit)}))
            total_labels.append("累計")
            stated.append(grand)
    if unit_below:
        drawn_layout.append(len(sheet.rows) + 1)
        sheet.add([_plain(look.choice([f"（単位：{unit}）", f"単位:{unit}", f"(単位:{unit})"]))])
    if look.random() < 0.5:
        sheet.add([_plain(look.choice(["※ 金額は税抜です", "※ 端数は切り捨てています"]))])
        if look.random() < 0.5:
            sheet.add([_plain(_page_number(look, len(pages), len(pages)))])
    units = {names[AMOUNT]: unit} if unit is not None else {}
    return Printed(
        sheet,
        fmt,
        names,
        records,
        total_labels,
        units,
        [],
        grand=grand,
        layout=drawn_layout,
        stated=stated,
        era_notes=era_notes,
        refused=refused,
    )
