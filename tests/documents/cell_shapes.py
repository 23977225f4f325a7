"""A third generator: single date-and-time and amount cells in the shapes the other two miss.

``fresh_ledgers`` and ``ledger_corpus`` write whole files with dates alone and the common
negative forms. This one draws cells, from a seed, as people type them where a time goes with
the date and where an amount was copied off a receipt or an old printout:

* dates with a time in the same cell: ``2026/02/03 10:00``, ``令和8年2月3日 午前10時``,
  ``2026-02-03T10:00:00``, ``2026年2月3日(火) 午後3時30分``, ``R8.2.3 PM3:30``,
  ``2026/2/3 3:30 p.m.``, ``10時半``;
* amounts with every minus (``-``, U+2212 ``−``, U+FF0D ``－``, ``‐``, ``▲``, ``△``, ``(…)``,
  ``（…）``, a trailing minus, ``赤字`` in words), full-width digits and commas, ``￥``/``¥``
  before and ``円`` after, ``銭``, and a receipt's ``金…円也`` and ``※``;

and, apart, shapes no reader may turn into a value because the value cannot be known:
``午後12時`` (noon or midnight), ``1.200,50`` (which mark is the decimal point), ``2/3``
(which year), ``02/03/2026`` (which is the month), two minus signs. Each :class:`Cell` says what a reader must give back: the
value, or None (listed as unreadable, with a word its reason must hold).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

__all__ = ["Cell", "amount_cell", "date_cell", "doubtful_cell", "misread"]

_FULL_WIDTH = str.maketrans("0123456789,.()-", "０１２３４５６７８９，．（）－")
_WEEKDAYS = "月火水木金土日"
# Every character a ledger writes for minus before the digits.
_MINUSES = ("-", "\u2212", "\uff0d", "\u2010", "▲", "△", "赤字")


@dataclass(frozen=True)
class Cell:
    """A cell as written and what a reader must make of it: ``value`` (an int, a float, a
    ``date`` or a ``datetime``), or None with a word its reason must hold (``why``)."""

    text: str
    value: object | None
    why: str = ""


def _date_part(rng: random.Random, day: dt.date) -> str:
    era = day.year - 2018
    weekday = f"({_WEEKDAYS[day.weekday()]})" if rng.random() < 0.3 else ""
    forms = (
        f"{day.year}/{day.month:02d}/{day.day:02d}",
        f"{day.year}/{day.month}/{day.day}",
        f"{day:%Y-%m-%d}",
        f"{day.year}年{day.month}月{day.day}日{weekday}",
        f"令和{era}年{day.month}月{day.day}日",
        f"R{era}.{day.month}.{day.day}",
    )
    return rng.choice(forms)


def _time_part(rng: random.Random, hour: int, minute: int) -> str:
    """The time as written, for an hour and a minute not at 12 o'clock with 午前/午後."""
    half = "午前" if hour < 12 else "午後"
    twelve = hour % 12
    forms = [
        f"{hour}:{minute:02d}",
        f"{hour:02d}:{minute:02d}:00",
        f"{hour}時{minute}分",
    ]
    if twelve:  # 12 with 午前/午後 is refused: noon or midnight
        forms += [f"{half}{twelve}:{minute:02d}", f"{half}{twelve}時{minute}分"]
        forms.append(f"{'AM' if hour < 12 else 'PM'}{twelve}:{minute:02d}")
        forms.append(f"{twelve}:{minute:02d} {'a.m.' if hour < 12 else 'p.m.'}")
        if minute == 0:
            forms.append(f"{half}{twelve}時")
        if minute == 30:
            forms.append(f"{half}{twelve}時半")
    return rng.choice(forms)


def date_cell(rng: random.Random) -> Cell:
    """A date with a time in one cell (a 令和 date, so every form names the same day)."""
    day = dt.date(2019, 5, 1) + dt.timedelta(days=rng.randrange(3000))
    hour, minute = rng.randrange(24), rng.choice([0, 5, 15, 30, 45, 59])
    date_text = _date_part(rng, day)
    time_text = _time_part(rng, hour, minute)
    joint = "T" if date_text[4] == "-" and time_text[:2].isdigit() and rng.random() < 0.5 else " "
    if date_text.endswith("日") and rng.random() < 0.3:
        joint = ""  # 令和8年2月3日午前10時
    text = f"{date_text}{joint}{time_text}"
    if rng.random() < 0.2:
        text = text.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    stamp = dt.datetime(day.year, day.month, day.day, hour, minute)
    return Cell(text, stamp)


def amount_cell(rng: random.Random) -> Cell:
    """An amount in one of the forms a ledger, a printout or a receipt writes."""
    yen = rng.choice([0, 1, 12, 999, 1_000, 12_345, 1_234_567, rng.randrange(1, 10**8)])
    sen = rng.choice([5, 50, 99]) if rng.random() < 0.12 else 0
    negative = rng.random() < 0.5
    body = f"{yen:,}" if rng.random() < 0.8 else str(yen)
    full = rng.random() < 0.3
    if full:
        body = body.translate(_FULL_WIDTH)
    value: int | float = float(Decimal(yen) + Decimal(sen) / 100) if sen else yen
    if sen:  # 銭 only after whole 円, no other mark
        text = f"{body}円{sen}銭"
        if negative:
            text = rng.choice(["▲", "△", "-", "\u2212"]) + text
    elif not negative and rng.random() < 0.3:  # a receipt: 金…円也, or the 止め ※
        text = rng.choice([f"金{body}円也", f"金{body}円", f"¥{body}※", f"{body}円※"])
    else:
        mark = rng.choice(["", "", "¥", "￥", "\\"]) if not full else rng.choice(["", "￥"])
        yen_after = "円" if not mark and rng.random() < 0.4 else ""
        core = f"{mark}{body}"
        text = f"{core}{yen_after}"
        if negative:
            form = rng.randrange(4)
            if form == 0:
                text = rng.choice(_MINUSES) + rng.choice(["", " "]) + text
            elif form == 1:
                text = rng.choice(["({})", "（{}）"]).format(text)
            elif form == 2 and not yen_after and not mark:
                # (after a yen mark one cell cannot tell a minus from a receipt's end mark:
                # test_yen_dash draws those columns)
                text = f"{core}{rng.choice(['-', '－', chr(0x2212)])}"
            else:
                text = f"{mark}{rng.choice(['▲', '△', '-'])}{body}{yen_after}"
    return Cell(text, -value if negative and value else value)


def doubtful_cell(rng: random.Random) -> Cell:
    """A cell whose value cannot be known: it must be listed, never read."""
    day = dt.date(2026, 1, 1) + dt.timedelta(days=rng.randrange(365))
    size = f"{rng.randrange(1, 10**6):,}"
    european = f"{rng.randrange(1, 999)}.{rng.randrange(1000):03d},{rng.randrange(100):02d}"
    # The words each reason must hold -> the cells that need it.
    written = {
        "午前・午後": [
            f"{day:%Y/%m/%d} {rng.choice(['午前', '午後'])}12時",
            f"{day.year}年{day.month}月{day.day}日 午後{rng.randrange(13, 24)}時",
        ],
        "年が書かれていない": [f"{day.month}/{day.day}", f"{day.month}月{day.day}日"],
        "小数点": [european],
        "年から": [
            f"{day.month:02d}/{day.day:02d}/{day.year}",
            f"{day.day}.{day.month}.{day.year}",
        ],
        "重なって": [f"▲-{size}", f"赤字△{size}"],
        "銭": [f"{size}.5円50銭"],
        "金・也": [f"金-{size}円"],
    }
    why = rng.choice(list(written))
    return Cell(rng.choice(written[why]), None, why)


def misread(
    draw: Callable[[random.Random], Cell], reader: Callable[[str], object], seed: str, count: int
) -> list[tuple[str, object, object]]:
    """``count`` cells ``draw`` makes from ``seed`` that ``reader`` does not read to their value
    (of their type): (text, read, value)."""
    rng = random.Random(seed)
    read = [(cell, reader(cell.text)) for cell in (draw(rng) for _ in range(count))]
    return [
        (cell.text, value, cell.value)
        for cell, value in read
        if value != cell.value or type(value) is not type(cell.value)
    ]
