"""Date and amount columns as foreign systems export them and as people slip among Japanese
forms: a seeded generator of whole columns, each with what ``read_table`` must give back.

The other generators (``tests/documents/fresh_ledgers``, ``cell_shapes``, ``system_forms``...)
draw cells one by one in the forms Japanese ledgers and systems write. A reader of a column
also decides by the column: a cell means what the column's other cells say it means, and a
column written wholly in a form no reader takes must still say so. This one draws, from a seed,
columns of these kinds (each in a small ledger with a 摘要 column):

dates

* ``named_months``: the forms of a foreign system's export, where the month is a word (so the
  day and the year are known): ``3-Feb-2026``, ``03-FEB-2026``, ``03/Feb/2026``,
  ``Feb 3, 2026``, ``February 3, 2026``, ``3 February 2026``, ``2026-Feb-03``, maybe a time
  after it, mixed with the forms already read (``2026/2/3``, ``2026年2月3日``, ``令和8年2月3日``)
  or alone; all read;
* ``refused_dates``: a whole column in one form whose date cannot be known: the year last
  (``02/03/2026``: month or day first? no day above 12 shows the column's order), a two-digit
  year (``26/2/3``, ``03-FEB-26``): every cell listed;

amounts

* ``comma_and_point``: ``12,000``-style amounts (commas, ¥, ▲, 円) with a few ``1.200``
  among them and no other fraction: ``1.200`` is a slip for ``1,200`` as much as 1.2, so each is
  listed;
* ``decimals``: amounts with fractions (``1,234.50``, ``0.25``) and a few ``1.200``: the column
  writes decimal points, so ``1.200`` is 1.2;
* ``pointed_thousands``: a whole column with points between thousands (``12.000``, ``1.500``,
  ``350``): every pointed cell listed (the points are thousands, or not);
* ``refused_amounts``: a whole column of one form no reader takes: the European
  ``1.200,50``, a space between thousands ``1 200``, the exponent ``1.2E+06`` a workbook saved:
  every such cell listed.

:class:`Column` holds each cell's text and what it must read to: a value (an int or float, a
``datetime.date`` or ``datetime.datetime``), or None: listed as unreadable at its line.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

__all__ = ["KINDS", "MONTH_ABBREVIATIONS", "MONTH_NAMES", "Column", "column", "ledger_csv"]

KINDS = (
    "named_months",
    "refused_dates",
    "comma_and_point",
    "decimals",
    "pointed_thousands",
    "refused_amounts",
)
MONTH_ABBREVIATIONS = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MEMOS = ("売上 山田商事", "仕入 鈴木工業", "交通費", "会議費", "振込手数料", "Invoice 2026-02")


@dataclass
class Column:
    """A drawn column: its header, each cell as written and what it must read to (None: listed
    as unreadable)."""

    kind: str
    header: str
    cells: list[str]
    want: list[object | None]


def _day(rng: random.Random) -> dt.date:
    return dt.date(2025, 4, 1) + dt.timedelta(days=rng.randrange(365))


def _named_month(rng: random.Random, day: dt.date, form: int) -> str:
    mon, full = MONTH_ABBREVIATIONS[day.month - 1], MONTH_NAMES[day.month - 1]
    forms = (
        f"{day.day}-{mon}-{day.year}",
        f"{day.day:02d}-{mon.upper()}-{day.year}",
        f"{day.day:02d}/{mon}/{day.year}",
        f"{mon} {day.day}, {day.year}",
        f"{full} {day.day}, {day.year}",
        f"{day.day} {full} {day.year}",
        f"{day.year}-{mon}-{day.day:02d}",
    )
    return forms[form % len(forms)]


def _japanese(rng: random.Random, day: dt.date) -> str:
    return rng.choice(
        (
            f"{day.year}/{day.month}/{day.day}",
            f"{day:%Y/%m/%d}",
            f"{day.year}年{day.month}月{day.day}日",
            f"令和{day.year - 2018}年{day.month}月{day.day}日",
        )
    )


def _dates(rng: random.Random, rows: int, kind: str) -> Column:
    header = rng.choice(("日付", "取引日", "Date", "計上日"))
    cells: list[str] = []
    want: list[object | None] = []
    if kind == "named_months":
        form, alone = rng.randrange(7), rng.random() < 0.4
        for _ in range(rows):
            day = _day(rng)
            if alone or rng.random() < 0.5:
                text = _named_month(rng, day, form if alone else rng.randrange(7))
                if rng.random() < 0.15:
                    hour, minute = rng.randrange(24), rng.randrange(60)
                    cells.append(f"{text} {hour:02d}:{minute:02d}")
                    want.append(dt.datetime(day.year, day.month, day.day, hour, minute))
                    continue
            else:
                text = _japanese(rng, day)
            cells.append(text)
            want.append(day)
        return Column(kind, header, cells, want)
    form = rng.randrange(4)
    month_first = rng.random() < 0.5  # one system's order in a column
    for _ in range(rows):
        # No day above 12: the column cannot show its order (``ledger_dates`` draws the rest).
        day = _day(rng).replace(day=rng.randrange(1, 13))
        first, second = (day.month, day.day) if month_first else (day.day, day.month)
        text = (
            f"{first:02d}/{second:02d}/{day.year}",
            f"{day.year % 100:02d}/{day.month}/{day.day}",
            f"{day.day:02d}-{MONTH_ABBREVIATIONS[day.month - 1].upper()}-{day.year % 100:02d}",
            f"{first}.{second}.{day.year}",
        )[form]
        cells.append(text)
        want.append(None)
    return Column(kind, header, cells, want)


def _amount(rng: random.Random, value: int) -> str:
    body = f"{abs(value):,}"
    if value < 0:
        return rng.choice((f"▲{body}", f"△{body}", f"-{body}", f"({body})"))
    return rng.choice((body, body, f"¥{body}", f"{body}円", f"￥{body}"))


def _amounts(rng: random.Random, rows: int, kind: str) -> Column:
    header = rng.choice(("金額", "請求金額", "支払額", "Amount", "金額（円）"))
    cells: list[str] = []
    want: list[object | None] = []
    dotted = set(rng.sample(range(rows), max(1, rows // 8)))
    form = rng.randrange(3)  # of a column of refused amounts: one form
    for n in range(rows):
        value = rng.randrange(1_000, 900_000) * (-1 if rng.random() < 0.15 else 1)
        small = rng.randrange(1, 999)
        if kind == "comma_and_point":
            if n in dotted:
                cells.append(f"{small}.{rng.randrange(1000):03d}")
                want.append(None)
            else:
                cells.append(_amount(rng, value))
                want.append(value)
        elif kind == "decimals":
            if n in dotted:
                thousandths = rng.randrange(1000)
                cells.append(f"{small}.{thousandths:03d}")
                want.append(float(f"{small}.{thousandths:03d}"))
            else:
                cents = rng.randrange(100)
                cells.append(f"{value:,}.{cents:02d}" if value >= 0 else f"▲{-value:,}.{cents:02d}")
                want.append(float(f"{value}.{cents:02d}"))
        elif kind == "pointed_thousands":
            if rng.random() < 0.25:
                cells.append(str(small))
                want.append(small)
            else:
                cells.append(f"{small}.{rng.randrange(1000):03d}")
                want.append(None)
        else:
            whole, cents = abs(value), rng.randrange(100)
            text = (
                f"{whole:,}".replace(",", ".") + f",{cents:02d}",
                f"{whole:,}".replace(",", " "),
                f"{whole / 10 ** (len(str(whole)) - 1):.1f}E+{len(str(whole)) - 1:02d}",
            )[form]
            cells.append(text)
            want.append(None)
    return Column(kind, header, cells, want)


def column(seed: int, kind: str, rows: int = 12) -> Column:
    """A column of ``kind`` (``KINDS``) of ``rows`` cells, drawn from ``seed``."""
    rng = random.Random(f"ledger-foreign-{seed}-{kind}")
    if kind in ("named_months", "refused_dates"):
        return _dates(rng, rows, kind)
    return _amounts(rng, rows, kind)


def _quoted(cell: str) -> str:
    return f'"{cell}"' if "," in cell else cell


def ledger_csv(drawn: Column, seed: int) -> bytes:
    """A ledger (UTF-8, CRLF) of a 摘要 column and ``drawn``, header on the first line."""
    rng = random.Random(f"ledger-foreign-memo-{seed}")
    lines = [f"摘要,{drawn.header}"]
    lines += [f"{rng.choice(_MEMOS)},{_quoted(cell)}" for cell in drawn.cells]
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")
