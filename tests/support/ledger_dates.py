"""Date and amount cells as real exports write them, in whole files: a seeded generator of
small ledgers (CSV in UTF-8 or CP932, or a workbook with real date cells and text cells), each
cell with what ``read_table`` must give back.

The other ledger generators draw the forms Japanese systems write (``ledger_rows``,
``ledger_foreign``, ``tests/documents/fresh_ledgers``...). This one draws the forms those
leave out, as mail, English systems, Excel and Japanese forms export them, by kind:

* ``english``: a weekday first as mail headers and English systems write it (``Tue, 3 Feb
  2026``, ``Tuesday, February 3, 2026``, ``Tue Feb 3 2026``, ``Tue, 03 Feb 2026 10:15:00
  +0900``), ordinals (``3rd Feb 2026``, ``February 3rd, 2026``, ``3rd of February 2026``),
  among Japanese forms; now and then a weekday that is not the date's (listed: which is wrong?);
* ``excel_time``: a date cell Excel saved with its time (``2026-02-03T00:00:00``,
  ``2026/2/3 0:00:00``, ``2026/2/3 0:00``, ``2026/02/03 10:15``);
* ``era``: 和暦 as forms and 弥生 write it (``R8.2.3``, ``R08/02/03``, ``R.08/02/03``,
  ``令和８年２月３日（火）``, ``2026年2月3日(火)``), days around the change of era
  (``H31.4.30``, ``R1.5.1``, ``令和元年5月1日``);
* ``year_last``: the year last (``2/3/2026``, ``02/03/2026``, ``2/3/2026 0:00``), one order
  per column (a column is one system's export): read in the order the column shows (a day
  above 12 first or second), every cell listed where no cell shows it;
* ``year_last_plain``: the same under a header that names no date (``メモ``, ``Posted``) or
  in a file without a header row (弥生's and foreign systems' journal exports: the column is
  ``列2``, and the first row is data);
* ``amount_words``: a 金額 column of words only (``未定``, ``別途``, ``ー``, ``要見積``): kept
  as written with a warning naming the column;
* ``amount_some_words``: a 金額 column of words and a few amounts: the amounts listed (the
  column is kept as written), or the column warned as above.

:class:`Drawn` holds each cell as written and what it must read to: a value (a
``datetime.date``, ``datetime.datetime`` or number) or None: listed at its line (with a reason
other than the generic one), or its column named in a warning.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from collections.abc import Sequence
from dataclasses import dataclass

from tests.support.ledger_foreign import MONTH_ABBREVIATIONS as _MON
from tests.support.ledger_foreign import MONTH_NAMES as _MONTH

__all__ = ["FILES", "KINDS", "Drawn", "draw", "ledger_file"]

KINDS = (
    "english",
    "excel_time",
    "era",
    "year_last",
    "year_last_plain",
    "amount_words",
    "amount_some_words",
)
FILES = ("utf8", "utf8_bom", "cp932", "xlsx_text", "xlsx_dates")

_WEEK = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WEEK_FULL = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEK_JA = "月火水木金土日"
_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
_WORDS = ("未定", "別途", "ー", "要見積", "別途見積", "応相談", "無料", "込み", "TBD", "―")
_MEMOS = ("売上 山田商事", "仕入 鈴木工業", "交通費", "会議費", "振込手数料", "Invoice 2026-02")


@dataclass
class Drawn:
    """A drawn column: its kind, header, cells as written and what each must read to."""

    kind: str
    header: str
    cells: Sequence[str | int]  # (numbers: ``ledger_zones``' money by the day)
    want: list[object | None]
    headed: bool = True  # False: the file has no header row (``header`` is the name read)
    # The cells a workbook holds as real date cells (``xlsx_dates``): those whose want is a date.


def _ordinal(day: int) -> str:
    if day in (11, 12, 13):
        return f"{day}th"
    return f"{day}" + {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _day(rng: random.Random) -> dt.date:
    return dt.date(2025, 4, 1) + dt.timedelta(days=rng.randrange(365))


def _timed(rng: random.Random, day: dt.date, form: str) -> tuple[str, object | None]:
    """``form`` with a drawn ``HH:MM`` in its ``{}``, and the datetime it writes."""
    hour, minute = rng.randrange(24), rng.randrange(60)
    stamp = dt.datetime(day.year, day.month, day.day, hour, minute)
    return form.format(f"{hour:02d}:{minute:02d}"), stamp


def _english(rng: random.Random, day: dt.date) -> tuple[str, object | None]:
    week, mon, month = _WEEK[day.weekday()], _MON[day.month - 1], _MONTH[day.month - 1]
    if rng.random() < 0.08:  # a weekday that is not the date's: which one is wrong?
        week = _WEEK[(day.weekday() + rng.randrange(1, 7)) % 7]
        return f"{week}, {day.day} {mon} {day.year}", None
    if rng.random() < 0.15:  # a mail header's date and time (RFC 2822), in Japan's zone
        return _timed(rng, day, f"{week}, {day.day:02d} {mon} {day.year} {{}}:00 +0900")
    forms = (
        f"{week}, {day.day} {mon} {day.year}",
        f"{_WEEK_FULL[day.weekday()]}, {month} {day.day}, {day.year}",
        f"{week} {mon} {day.day} {day.year}",
        f"{_ordinal(day.day)} {mon} {day.year}",
        f"{month} {_ordinal(day.day)}, {day.year}",
        f"{_ordinal(day.day)} of {month} {day.year}",
        f"{day.year}/{day.month}/{day.day}",
        f"{day.year}年{day.month}月{day.day}日",
    )
    return rng.choice(forms), day


def _excel_time(rng: random.Random, day: dt.date) -> tuple[str, object | None]:
    if rng.random() < 0.2:
        return _timed(rng, day, f"{day:%Y/%m/%d} {{}}")
    return rng.choice(_EXCEL_TIMES).format(day), day


# A date cell Excel saved with its time, as ``str.format`` forms of the day.
_EXCEL_TIMES = (
    "{0:%Y-%m-%d}T00:00:00",
    "{0.year}/{0.month}/{0.day} 0:00:00",
    "{0.year}/{0.month}/{0.day} 0:00",
    "{0:%Y-%m-%d} 00:00:00",
)


def _era(rng: random.Random, day: dt.date) -> tuple[str, object | None]:
    if rng.random() < 0.3:  # around the change of era
        day = dt.date(2019, 4, 30) + dt.timedelta(days=rng.randrange(-3, 4))
    reiwa = day >= dt.date(2019, 5, 1)
    era, letter = ("令和", "R") if reiwa else ("平成", "H")
    year = day.year - (2018 if reiwa else 1988)
    said = "元" if year == 1 else str(year)
    week = _WEEK_JA[day.weekday()]
    forms = (
        f"{letter}{year}.{day.month}.{day.day}",
        f"{letter}{year:02d}/{day.month:02d}/{day.day:02d}",
        f"{letter}.{year:02d}/{day.month:02d}/{day.day:02d}",
        f"{era}{said}年{day.month}月{day.day}日（{week}）".translate(_FULL_WIDTH),
        f"{era}{said}年{day.month}月{day.day}日",
        f"{day.year}年{day.month}月{day.day}日({week})",
        f"{day:%Y/%m/%d}({week})",
    )
    return rng.choice(forms), day


def _dates(rng: random.Random, rows: int, kind: str) -> Drawn:
    header = rng.choice(("日付", "取引日", "Date", "計上日", "支払日"))
    headed = True
    if kind == "year_last_plain":
        header = rng.choice(("列2", "メモ", "Posted", "処理"))
        headed = header != "列2"
    cells: list[str] = []
    want: list[object | None] = []
    if kind.startswith("year_last"):
        day_first, form = rng.random() < 0.5, rng.randrange(4)
        shows = rng.random() < 0.7  # some day above 12 in the column
        days = [_day(rng) for _ in range(rows)]
        if not shows:
            days = [d.replace(day=rng.randrange(1, 13)) for d in days]
        elif all(d.day <= 12 for d in days):
            days[0] = days[0].replace(day=rng.randrange(13, 29))
        for day in days:
            first, second = (day.day, day.month) if day_first else (day.month, day.day)
            cells.append(
                (
                    f"{first}/{second}/{day.year}",
                    f"{first:02d}/{second:02d}/{day.year}",
                    f"{first}/{second}/{day.year} 0:00",
                    f"{first:02d}.{second:02d}.{day.year}",
                )[form]
            )
            shown = any(d.day > 12 for d in days)
            want.append(day if shown else None)
        return Drawn(kind, header, cells, want, headed)
    draw_one = {"english": _english, "excel_time": _excel_time, "era": _era}[kind]
    for _ in range(rows):
        text, value = draw_one(rng, _day(rng))
        cells.append(text)
        want.append(value)
    return Drawn(kind, header, cells, want)


def _amounts(rng: random.Random, rows: int, kind: str) -> Drawn:
    header = rng.choice(("金額", "見積金額", "単価", "金額（円）", "請求額"))
    words = rng.sample(_WORDS, rng.randrange(1, 4))
    cells: list[str] = []
    some = kind == "amount_some_words"
    for _ in range(rows):
        if some and rng.random() < 0.4:
            cells.append(f"{rng.randrange(1, 900) * 100:,}")
        else:
            cells.append(rng.choice(words))
    if some and not any(c[0].isdigit() for c in cells):
        cells[0] = "12,000"
    if all(c in ("ー", "―") for c in cells):  # dashes alone: zero in an amount column
        cells[0] = "未定"
    return Drawn(kind, header, cells, [None] * rows)


def draw(seed: int, kind: str, rows: int = 12) -> Drawn:
    """A column of ``kind`` (``KINDS``) of ``rows`` cells, drawn from ``seed``."""
    rng = random.Random(f"ledger-dates-{seed}-{kind}")
    if kind.startswith("amount"):
        return _amounts(rng, rows, kind)
    return _dates(rng, rows, kind)


def _quoted(cell: object) -> str:
    text = str(cell)
    return f'"{text}"' if "," in text else text


def ledger_file(drawn: Drawn, seed: int, form: str) -> tuple[bytes, str]:
    """``(bytes, name)``: a ledger of a 摘要 column and ``drawn`` in ``form`` (``FILES``): CSV in
    UTF-8 (with a BOM or not) or CP932, CRLF; a workbook of the cells as drawn (text, or
    numbers: ``ledger_zones``), or one whose dates are real date cells (a datetime at midnight, or with its time) and the rest text."""
    rng = random.Random(f"ledger-dates-memo-{seed}")
    memos = [rng.choice(_MEMOS) for _ in drawn.cells]
    if form.startswith("xlsx"):
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        assert sheet is not None
        if drawn.headed:
            sheet.append(["摘要", drawn.header])
        for memo, cell, want in zip(memos, drawn.cells, drawn.want, strict=True):
            value: object = cell
            if form == "xlsx_dates" and isinstance(want, dt.date) and rng.random() < 0.5:
                value = (
                    want
                    if isinstance(want, dt.datetime)
                    else dt.datetime(want.year, want.month, want.day)
                )
            sheet.append([memo, value])
        out = io.BytesIO()
        book.save(out)
        return out.getvalue(), "ledger.xlsx"
    lines = [f"摘要,{drawn.header}"] if drawn.headed else []
    lines += [f"{m},{_quoted(c)}" for m, c in zip(memos, drawn.cells, strict=True)]
    text = "\r\n".join(lines) + "\r\n"
    if form == "cp932":
        return text.encode("cp932"), "ledger.csv"
    return ("\ufeff" if form == "utf8_bom" else "").encode() + text.encode(), "ledger.csv"
