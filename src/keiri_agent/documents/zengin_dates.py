"""Six-digit dates of 全銀協 files: 和暦 YYMMDD, or the Western-year variant, read as dates.

The format writes every date as YYMMDD in the Japanese era (和暦: ``080203`` is 令和8年2月3日,
``280503`` 平成28年5月3日); some banks offer a variant with the last two digits of the Western
year (``260203``). Neither carries its era or century, so:

* 和暦 (``wareki``): the latest of 令和 (from 2019-05-01) and 平成 (1989-01-08 to the end of
  2019: some systems kept writing 平成31 after the era changed) that is a real day not more
  than ``FUTURE_MARGIN_DAYS`` after ``today``;
* 西暦 (``seireki``): 20YY, a real day not more than ``FUTURE_MARGIN_DAYS`` after ``today``;
* which of the two a file uses (``choose_year_style``) is decided once per file from all its
  dates: the style under which every date reads; when both do, the one whose latest date is
  nearest to ``today`` (a file of 2026 in 和暦 reads as 2026 in 和暦 and as 2008 in 西暦; in
  西暦, as 2026 in 西暦 and as 2014 in 和暦). Ties go to 和暦, the format's own style.

``today`` is the caller's (``read_bank_statement`` passes the local date); the margin lets a
file dated a little ahead of a machine's clock through.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from keiri_agent.documents.cell_forms import ERAS

__all__ = [
    "FUTURE_MARGIN_DAYS",
    "YEAR_STYLES",
    "YearStyle",
    "choose_year_style",
    "read_yymmdd",
]

YearStyle = Literal["wareki", "seireki"]
YEAR_STYLES: dict[YearStyle, str] = {"wareki": "和暦", "seireki": "西暦"}

# How far after ``today`` a date may lie (days): a year, for clocks and files made ahead.
FUTURE_MARGIN_DAYS = 366

_REIWA_FIRST_DAY = dt.date(2019, 5, 1)
_HEISEI_FIRST_DAY = dt.date(1989, 1, 8)
_HEISEI_LAST_WRITTEN = dt.date(2019, 12, 31)


def _day(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def read_yymmdd(text: str, style: YearStyle, today: dt.date) -> dt.date | None:
    """The date six digits ``text`` spell in ``style``, or None (not digits, no such day)."""
    if len(text) != 6 or not text.isascii() or not text.isdigit():
        return None
    yy, month, day = int(text[:2]), int(text[2:4]), int(text[4:])
    latest = today + dt.timedelta(days=FUTURE_MARGIN_DAYS)
    if style == "seireki":
        date = _day(2000 + yy, month, day)
        return date if date is not None and date <= latest else None
    reiwa = _day(ERAS["令和"] + yy, month, day)
    if reiwa is not None and _REIWA_FIRST_DAY <= reiwa <= latest:
        return reiwa
    heisei = _day(ERAS["平成"] + yy, month, day)
    if heisei is not None and _HEISEI_FIRST_DAY <= heisei <= min(_HEISEI_LAST_WRITTEN, latest):
        return heisei
    return None


def choose_year_style(texts: Iterable[str], today: dt.date) -> YearStyle | None:
    """The style in which every one of ``texts`` reads as a date (see the module docstring);
    None when neither does."""
    distinct = set(texts)
    latest: dict[YearStyle, dt.date] = {}
    for style in ("wareki", "seireki"):
        dates = [read_yymmdd(text, style, today) for text in distinct]
        if all(date is not None for date in dates):
            latest[style] = max((d for d in dates if d is not None), default=today)
    if not latest:
        return None
    return min(latest, key=lambda style: (abs((today - latest[style]).days), style != "wareki"))
