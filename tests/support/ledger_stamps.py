"""Dates and times as logs, mail, databases, Excel and Japanese forms write them, in whole
files: a seeded generator of small ledgers (CSV in UTF-8, UTF-8 with a BOM or CP932, or a
workbook), each date cell with what ``read_table`` must give back and each date column with the
kind it must be read as.

``ledger_dates`` draws a weekday first, ordinals, 和暦 and the year last; this one draws the
forms outside testers try as "every common date form", by kind:

* ``unix``: ``date(1)`` and C's ``ctime`` (``Tue Feb 3 10:15:00 JST 2026``,
  ``Tue Feb  3 10:15:00 2026``, ``... UTC 2026``): the time between the day and the year;
* ``iso``: ISO 8601 with ``Z``, ``+09:00``, fractional seconds, minutes only
  (``2026-02-03T10:15``), and RFC 2822 (``Tue, 03 Feb 2026 10:15:00 +0900``);
* ``japanese``: ``2026/2/3 10:15:00``, ``2026年2月3日(火) 10時15分``, ``R8.2.3``,
  ``令和8年2月3日（火）``, ``2026.2.3``, full-width digits (``２０２６/２/３``);
* ``serial``: Excel serial numbers in a date column (``46056``, and ``46056.4270833`` with the
  time as a fraction of the day), as a CSV saved from Excel's General format writes them;
* ``midnight``: Excel's saved midnight (``2026/02/03 0:00``, ``2026-02-03 00:00:00``, a
  workbook's real date cell): a ledger's date column -- read as dates, the column's kind
  ``date`` (a column with one real time among them: ``datetime``);
* ``both_orders``: the year last (``2/4/2026``) in a column whose cells show both orders
  (``13/4/2026`` and ``4/13/2026``): every year-last cell listed, with why.

Times with an offset or a zone name are read as Asia/Tokyo wall-clock times (the readers'
default zone). :class:`Stamps` holds each cell as written and what it must read to: a
``datetime.date``/``datetime.datetime`` (the local wall-clock time), or None: listed at its line
with a reason other than the generic one.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass

from tests.support.ledger_foreign import MONTH_ABBREVIATIONS as _MON

__all__ = ["FILES", "KINDS", "Stamps", "draw", "ledger_file"]

KINDS = ("unix", "iso", "japanese", "serial", "midnight", "both_orders")
FILES = ("utf8", "utf8_bom", "cp932", "xlsx")

_WEEK = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WEEK_JA = "月火水木金土日"
_FULL_WIDTH = str.maketrans("0123456789/", "０１２３４５６７８９／")
_MEMOS = ("売上 山田商事", "仕入 鈴木工業", "交通費", "会議費", "振込手数料", "ｶ)ﾔﾏﾀﾞ")
_EPOCH = dt.datetime(1899, 12, 30)
_UTC_TO_TOKYO = dt.timedelta(hours=9)


@dataclass
class Stamps:
    """A drawn date column: its kind, header, cells as written (a workbook writes the
    ``real`` ones as its own values: a number, a datetime), what each must read to, and the
    column's kind (``date`` or ``datetime``; None where cells are listed)."""

    kind: str
    header: str
    cells: list[str]
    want: list[object | None]
    real: list[object | None]
    column_kind: str | None


def _moment(rng: random.Random) -> dt.datetime:
    day = dt.date(2025, 4, 1) + dt.timedelta(days=rng.randrange(365))
    return dt.datetime(day.year, day.month, day.day, rng.randrange(24), rng.randrange(60))


def _unix(rng: random.Random, at: dt.datetime) -> tuple[str, object]:
    week, mon = _WEEK[at.weekday()], _MON[at.month - 1]
    day = rng.choice((f"{at.day}", f"{at.day:2d}"))  # ctime pads the day with a space
    zone, local = rng.choice((("JST ", at), ("", at), ("UTC ", at + _UTC_TO_TOKYO)))
    return f"{week} {mon} {day} {at:%H:%M:%S} {zone}{at.year}", local


def _iso(rng: random.Random, at: dt.datetime) -> tuple[str, object]:
    week, mon = _WEEK[at.weekday()], _MON[at.month - 1]
    milli = rng.randrange(1000)
    fine = at.replace(microsecond=milli * 1000)
    forms: tuple[tuple[str, object], ...] = (
        (f"{at:%Y-%m-%dT%H:%M:%S}Z", at + _UTC_TO_TOKYO),
        (f"{at:%Y-%m-%dT%H:%M:%S}+09:00", at),
        (f"{at:%Y-%m-%dT%H:%M:%S}.{milli:03d}", fine),
        (f"{at:%Y-%m-%dT%H:%M:%S}.{milli:03d}Z", fine + _UTC_TO_TOKYO),
        (f"{at:%Y-%m-%dT%H:%M:%S}.{milli:03d}000+09:00", fine),
        (f"{at:%Y-%m-%dT%H:%M}", at),
        (f"{at:%Y-%m-%d %H:%M:%S}", at),
        (f"{week}, {at.day:02d} {mon} {at.year} {at:%H:%M:%S} +0900", at),
    )
    return rng.choice(forms)


def _japanese(rng: random.Random, at: dt.datetime) -> tuple[str, object]:
    day, week = at.date(), _WEEK_JA[at.weekday()]
    reiwa = at.year - 2018
    forms: tuple[tuple[str, object], ...] = (
        (f"{at.year}/{at.month}/{at.day} {at:%H:%M:%S}", at),
        (f"{at.year}年{at.month}月{at.day}日({week}) {at.hour}時{at.minute}分", at),
        (f"R{reiwa}.{at.month}.{at.day}", day),
        (f"令和{reiwa}年{at.month}月{at.day}日（{week}）", day),
        (f"{at.year}.{at.month}.{at.day}", day),
        (f"{at.year}/{at.month}/{at.day}".translate(_FULL_WIDTH), day),
        (f"令和{reiwa}年{at.month}月{at.day}日".translate(_FULL_WIDTH), day),
    )
    return rng.choice(forms)


def _serial(rng: random.Random, at: dt.datetime) -> tuple[str, object]:
    if rng.random() < 0.5:
        return str((at.date() - _EPOCH.date()).days), at.date()
    # Excel's General format: ten significant digits (46056.42708), read to the second.
    serial = (at - _EPOCH) / dt.timedelta(days=1)
    return f"{serial:.10g}", at


_MIDNIGHTS = ("{0:%Y/%m/%d} 0:00", "{0.year}/{0.month}/{0.day} 0:00:00", "{0:%Y-%m-%d} 00:00:00")


def _midnight(rng: random.Random, at: dt.datetime) -> tuple[str, object]:
    return rng.choice(_MIDNIGHTS).format(at), at.date()


def _column(rng: random.Random, rows: int, kind: str) -> Stamps:
    header = rng.choice(("日付", "取引日", "日時", "登録日時", "計上日", "Date"))
    if kind == "both_orders":
        # Both numbers at most 12 (either order reads), then one cell of each order.
        pad = "{:02d}/{:02d}/{}" if rng.random() < 0.5 else "{}/{}/{}"
        years_last = [
            pad.format(rng.randrange(1, 13), rng.randrange(1, 13), 2026) for _ in range(rows)
        ]
        pair = rng.sample(range(rows), 2)
        years_last[pair[0]] = f"{rng.randrange(13, 29)}/{rng.randrange(1, 13)}/2026"
        years_last[pair[1]] = f"{rng.randrange(1, 13)}/{rng.randrange(13, 29)}/2026"
        return Stamps(kind, header, years_last, [None] * rows, [None] * rows, None)
    draw_one = {"unix": _unix, "iso": _iso, "japanese": _japanese, "serial": _serial}.get(
        kind, _midnight
    )
    cells: list[str] = []
    want: list[object | None] = []
    real: list[object | None] = []
    for _ in range(rows):
        text, value = draw_one(rng, _moment(rng))
        cells.append(text)
        want.append(value)
        real.append(None)
    if kind == "serial":  # a workbook holds the numbers as numbers
        real = [float(c) if "." in c else int(c) for c in cells]
    if kind == "midnight":  # a workbook holds real date cells, at midnight
        real = [
            dt.datetime(w.year, w.month, w.day)
            if isinstance(w, dt.date) and rng.random() < 0.5
            else None
            for w in want
        ]
        if rng.random() < 0.3:  # one real time among them: a column of times
            stamp = _moment(rng)
            where = rng.randrange(rows)
            cells[where], want[where], real[where] = f"{stamp:%Y/%m/%d %H:%M}", stamp, None
    timed = any(isinstance(w, dt.datetime) and w.time() != dt.time(0) for w in want)
    return Stamps(kind, header, cells, want, real, "datetime" if timed else "date")


def draw(seed: int, kind: str, rows: int = 10) -> Stamps:
    """A column of ``kind`` (``KINDS``) of ``rows`` cells, drawn from ``seed``."""
    return _column(random.Random(f"ledger-stamps-{seed}-{kind}"), rows, kind)


def _quoted(cell: str) -> str:
    return f'"{cell}"' if "," in cell else cell


def ledger_file(drawn: Stamps, seed: int, form: str) -> tuple[bytes, str]:
    """``(bytes, name)``: a ledger of a 摘要 column, ``drawn`` and a 金額 column in ``form``
    (``FILES``): CSV in UTF-8 (with a BOM or not) or CP932, CRLF; or a workbook of text cells
    with the ``real`` values as the workbook's own (numbers, date cells)."""
    rng = random.Random(f"ledger-stamps-memo-{seed}")
    memos = [rng.choice(_MEMOS) for _ in drawn.cells]
    amounts = [rng.randrange(1, 500) * 100 for _ in drawn.cells]
    if form == "xlsx":
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        assert sheet is not None
        sheet.append(["摘要", drawn.header, "金額"])
        for memo, cell, real, amount in zip(memos, drawn.cells, drawn.real, amounts, strict=True):
            sheet.append([memo, cell if real is None else real, amount])
        out = io.BytesIO()
        book.save(out)
        return out.getvalue(), "ledger.xlsx"
    lines = [f"摘要,{drawn.header},金額"]
    lines += [f"{m},{_quoted(c)},{a}" for m, c, a in zip(memos, drawn.cells, amounts, strict=True)]
    text = "\r\n".join(lines) + "\r\n"
    if form == "cp932":
        return text.encode("cp932"), "ledger.csv"
    return ("\ufeff" if form == "utf8_bom" else "").encode() + text.encode(), "ledger.csv"
