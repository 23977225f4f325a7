"""Japan's public holidays as the law writes them, for tests: an oracle apart from the product.

国民の祝日に関する法律 (as amended in 2018, the days from 2020 on; the one-off days of
2019-2021 are not in it): sixteen 国民の祝日 by date or by "the N-th Monday" (the Happy Monday
rule, art. 2); a 祝日 on a Sunday makes the nearest following day that is no 祝日 a holiday
(振替休日, art. 3 §2); a day between two 祝日 that is no 祝日 itself is a holiday (国民の休日,
art. 3 §3). 春分日 and 秋分日 are the days the National Astronomical Observatory announces
in the 官報 each February for the next year; for 1980-2099 they follow the well-known formula
below (the announced days of 2026 and 2027 agree with it; 2028-2030 are its predictions).

Nothing here reads the product or the ``holidays`` library: the product's calendar and the
library are checked against this.
"""

from __future__ import annotations

import calendar as month_calendar
from datetime import date, timedelta

__all__ = ["COMPANY", "business", "company_holiday", "law_holidays", "month_business_days"]

COMPANY = "12-29..01-03"  # the product's default 年末年始


def _nth_monday(year: int, month: int, n: int) -> date:
    first = date(year, month, 1)
    return first + timedelta(days=(0 - first.weekday()) % 7 + 7 * (n - 1))


def _equinox(year: int, base: float) -> int:
    return int(base + 0.242194 * (year - 1980) - (year - 1980) // 4)


def law_holidays(year: int) -> dict[date, str]:
    """The holidays of ``year`` (2020 or later, none of the one-off days) by the law."""
    named = {
        date(year, 1, 1): "元日",
        _nth_monday(year, 1, 2): "成人の日",
        date(year, 2, 11): "建国記念の日",
        date(year, 2, 23): "天皇誕生日",
        date(year, 3, _equinox(year, 20.8431)): "春分の日",
        date(year, 4, 29): "昭和の日",
        date(year, 5, 3): "憲法記念日",
        date(year, 5, 4): "みどりの日",
        date(year, 5, 5): "こどもの日",
        _nth_monday(year, 7, 3): "海の日",
        date(year, 8, 11): "山の日",
        _nth_monday(year, 9, 3): "敬老の日",
        date(year, 9, _equinox(year, 23.2488)): "秋分の日",
        _nth_monday(year, 10, 2): "スポーツの日",
        date(year, 11, 3): "文化の日",
        date(year, 11, 23): "勤労感謝の日",
    }
    found = dict(named)
    for day in named:
        if day.weekday() == 6:  # art. 3 §2
            substitute = day + timedelta(days=1)
            while substitute in named:
                substitute += timedelta(days=1)
            found[substitute] = "振替休日"
        between = day + timedelta(days=1)  # art. 3 §3
        if day + timedelta(days=2) in named and between not in named:
            found.setdefault(between, "国民の休日")
    return found


_CACHE: dict[int, dict[date, str]] = {}


def company_holiday(day: date) -> bool:
    """12/29-1/3, across the new year."""
    return (day.month, day.day) >= (12, 29) or (day.month, day.day) <= (1, 3)


def business(day: date) -> bool:
    if day.year not in _CACHE:
        _CACHE[day.year] = law_holidays(day.year)
    return day.weekday() < 5 and day not in _CACHE[day.year] and not company_holiday(day)


def month_business_days(year: int, month: int) -> list[date]:
    last = month_calendar.monthrange(year, month)[1]
    return [d for d in (date(year, month, n) for n in range(1, last + 1)) if business(d)]
