"""A fourth generator: date and amount cells in the shapes the other three miss, as systems
export them and as people type them beside those exports.

``fresh_ledgers``, ``ledger_corpus`` and ``cell_shapes`` cover the common dates, times and
signs. This one draws, from a seed:

* dates: 月末 as payment terms write it (``2026年2月末日``, ``2026/2/末``, ``令和8年2月末``);
  times with the zone after them as logs, databases and SaaS exports write them
  (``2026-02-03 01:15:00 UTC``, ``… +0900``, ``…+09`` as PostgreSQL prints it, ``… JST``,
  ``… (JST)``, ``… GMT``); a time right after the weekday's bracket (``2026/2/3(火)10:15``);
  seconds to nanoseconds (``10:15:30.123456789``, as pandas and BigQuery export);
* amounts: ``JPY`` before or after the digits (banks' and payment services' exports), yen
  written with the places 億・万・千 (``1万2,000円``, ``1億2,345万円``, ``▲3万5千円``), full
  width and signed.

Each :class:`~tests.documents.cell_shapes.Cell` holds the value a reader must give back: a
date, a naive datetime in Asia/Tokyo (a zone is read into the local time), or yen. Apart,
``range_cell`` draws a day with a time range (``2026/02/03 10:00-12:00``, as 勤怠 and
会議室の予約 export it): the end of the range is no zone, so no reader may give a value.
"""

from __future__ import annotations

import calendar
import datetime as dt
import random

from tests.documents.cell_shapes import Cell

__all__ = ["ZONE", "amount_cell", "date_cell", "range_cell"]

ZONE = dt.timezone(dt.timedelta(hours=9))  # Asia/Tokyo (no summer time)
_FULL_WIDTH = str.maketrans("0123456789,", "０１２３４５６７８９，")
_WEEKDAYS = "月火水木金土日"
_ERAS = (("令和", 2018, dt.date(2019, 5, 1)), ("平成", 1988, dt.date(1989, 1, 8)))


def _era(day: dt.date) -> tuple[str, int]:
    name, base, _ = next(e for e in _ERAS if day >= e[2])
    return name, day.year - base


def date_cell(rng: random.Random) -> Cell:
    """A date or a time in one of this generator's forms, and its value."""
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(1100))
    kind = rng.randrange(4)
    if kind == 0:  # 月末
        last = day.replace(day=calendar.monthrange(day.year, day.month)[1])
        era, year = _era(last)
        text = rng.choice(
            [
                f"{day.year}年{day.month}月末日",
                f"{day.year}年{day.month:02d}月末",
                f"{day.year}/{day.month}/末",
                f"{era}{year}年{day.month}月末日",
            ]
        )
        return Cell(text, last)
    moment = dt.datetime(day.year, day.month, day.day, rng.randrange(24), rng.randrange(60))
    moment = moment.replace(second=rng.randrange(60), tzinfo=dt.UTC)
    local = moment.astimezone(ZONE)
    want = local.replace(tzinfo=None)
    if kind == 1:  # a zone after the time
        utc = f"{moment:%Y-%m-%d %H:%M:%S}"
        tokyo = f"{local:%Y-%m-%d %H:%M:%S}"
        text = rng.choice(
            [
                f"{utc} UTC",
                f"{utc} GMT",
                f"{utc}Z",
                f"{tokyo} +0900",
                f"{tokyo}+09",
                f"{tokyo} +09:00",
                f"{tokyo} JST",
                f"{local:%Y/%m/%d %H:%M:%S} (JST)",
            ]
        )
        return Cell(text, want)
    if kind == 2:  # a time right after the weekday
        wd = _WEEKDAYS[local.weekday()]
        text = rng.choice(
            [
                f"{local.year}/{local.month}/{local.day}({wd}){local:%H:%M}",
                f"{local.year}年{local.month}月{local.day}日（{wd}）{local:%H:%M:%S}",
            ]
        )
        return Cell(text, want.replace(second=0) if text.count(":") == 1 else want)
    nanos = rng.randrange(10**9)
    text = f"{local:%Y-%m-%d %H:%M:%S}.{nanos:09d}"
    return Cell(text, want.replace(microsecond=nanos // 1000))


def _places(rng: random.Random, yen: int) -> str:
    """``yen`` (at least 10,000) written with 億・万 and, sometimes, 千."""
    oku, rest = divmod(yen, 100_000_000)
    man, rest = divmod(rest, 10_000)
    text = f"{oku}億" if oku else ""
    if man:
        text += f"{man:,}万" if rng.random() < 0.3 else f"{man}万"
    sen, under = divmod(rest, 1_000)
    if sen and rng.random() < 0.4:
        text += f"{sen}千" + (str(under) if under else "")
    elif rest:
        text += f"{rest:,}" if rng.random() < 0.5 else str(rest)
    return text + "円"


def amount_cell(rng: random.Random) -> Cell:
    """Yen in one of this generator's forms (JPY, places), signed or not, and its value."""
    yen = rng.choice(
        [10_000, 12_000, 35_500, 1_234_567, 100_000_000, rng.randrange(10_001, 10**10)]
    )
    negative = rng.random() < 0.3
    if rng.random() < 0.5:
        body = _places(rng, yen)
        if body.endswith("万円") and "億" not in body:  # 12万円 alone is a unit, not this form
            yen += 1
            body = _places(rng, yen)
        text = f"{rng.choice(['▲', '△', '-'])}{body}" if negative else body
    else:
        digits = f"{yen:,}" if rng.random() < 0.7 else str(yen)
        sign = "-" if negative else ""
        text = rng.choice([f"JPY {sign}{digits}", f"{sign}{digits} JPY", f"JPY{sign}{digits}"])
    if rng.random() < 0.2:
        text = text.translate(_FULL_WIDTH)
    return Cell(text, -yen if negative else yen)


def range_cell(rng: random.Random) -> Cell:
    """A day with a time range, which no reader may read (the end is no UTC offset)."""
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(1100))
    start = rng.randrange(0, 22)
    end = rng.randrange(start + 1, 24)
    text = rng.choice(
        [
            f"{day:%Y-%m-%d} {start:02d}:00-{end:02d}:00",
            f"{day:%Y/%m/%d} {start}:30-{end}:00",
            f"{day.year}/{day.month}/{day.day} {start:02d}:15 -{end:02d}:45",
            f"{day:%Y-%m-%d} {start:02d}:00-{end:02d}",
        ]
    )
    return Cell(text, None, "時刻の範囲")
