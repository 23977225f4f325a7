"""The Japanese business calendar: which days are 営業日.

A day is a business day unless it is a Saturday or Sunday, a Japanese public holiday (the
``holidays`` library's JP calendar: 振替休日, 国民の休日, the Happy Monday rule and the one-off
holidays of 2019 and the moved ones of 2020-2021 included), or a company holiday from
``KEIRI_COMPANY_HOLIDAYS`` (by default 12/29-1/3, the usual 年末年始).

Company holidays are written as a comma-separated list of ``MM-DD`` (every year),
``MM-DD..MM-DD`` (a range every year; it may cross the new year), ``YYYY-MM-DD`` (one day) and
``YYYY-MM-DD..YYYY-MM-DD`` (one year's days, e.g. this winter's 2026-12-26..2027-01-04). As an
accountant writes them in a settings file: ``/`` for ``-`` and one-digit months and days
(``12/29..1/3``), ``〜`` or ``~`` for ``..``, full-width digits and signs (read after NFKC).
A list that does not read is a ``CONFIGURATION_ERROR`` error naming the item, never ignored.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from typing import Literal

from keiri_agent.errors import BlockError, ErrorCode

__all__ = [
    "CALENDARS",
    "MAX_SEARCH_DAYS",
    "BusinessCalendar",
    "CalendarName",
    "parse_company_holidays",
]

CalendarName = Literal["jp", "none"]
CALENDARS: dict[str, str] = {
    "jp": "日本の営業日（土日・祝日・会社休日を除く）",
    "none": "暦日（休日なし）",
}
MAX_RANGE_DAYS = 366  # a company holiday range: at most a year, longer is a typo
# How far a search for the next/previous business day may go: longer than any run of
# holidays Japan has had (GW with 2019's ten days is the longest), short enough to end.
MAX_SEARCH_DAYS = 40
_DAY = re.compile(r"^(?:(\d{4})[-/])?(\d{1,2})[-/](\d{1,2})$")  # [YYYY-]MM-DD, or with /
_RANGE = re.compile(r"\.\.|〜|~")  # after NFKC: 12-29..01-03, 12/29〜1/3, 12-29~01-03


def _config_error(item: str, why: str) -> BlockError:
    return BlockError(
        f"KEIRI_COMPANY_HOLIDAYS の「{item}」を読めません（{why}）。",
        code=ErrorCode.CONFIGURATION_ERROR,
        hint="MM-DD、MM-DD..MM-DD（毎年の範囲）、YYYY-MM-DD、YYYY-MM-DD..YYYY-MM-DD（その年の範囲）を"
        "カンマで区切って指定してください（例: 12-29..01-03,08-13..08-15,2027-05-06）。",
        details={"item": item},
    )


def _day(item: str, text: str) -> tuple[int | None, int, int]:
    """``(year or None, month, day)`` of ``MM-DD`` or ``YYYY-MM-DD``."""
    match = _DAY.match(text.strip())
    if match is None:
        raise _config_error(item, "月日は MM-DD、日付は YYYY-MM-DD の形で書きます")
    year = int(match[1]) if match[1] else None
    month, day = int(match[2]), int(match[3])
    try:
        date(year or 2024, month, day)  # 2024, a leap year: 02-29 is a day some years have
    except ValueError:
        raise _config_error(
            item, "その日付はありません" if year else "その月日はありません"
        ) from None
    return year, month, day


@dataclass(frozen=True)
class CompanyHolidays:
    """Company holidays: (month, day) every year, and single dates."""

    yearly: frozenset[tuple[int, int]] = frozenset()
    dates: frozenset[date] = frozenset()

    def __contains__(self, day: object) -> bool:
        if not isinstance(day, date):
            return False
        return (day.month, day.day) in self.yearly or day in self.dates


def _span(item: str, first: date, last: date) -> list[date]:
    if last < first:
        raise _config_error(item, "範囲の終わりが始まりより前です")
    if (last - first).days >= MAX_RANGE_DAYS:
        raise _config_error(item, f"範囲が長すぎます（{MAX_RANGE_DAYS} 日まで）")
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def _range(item: str, start: str, end: str) -> tuple[set[tuple[int, int]], set[date]]:
    """The days of a range: every year's (month, day)s, or one year's dates."""
    (y1, m1, d1), (y2, m2, d2) = _day(item, start), _day(item, end)
    if (y1 is None) != (y2 is None):
        raise _config_error(item, "範囲の両端を、年のない MM-DD か年のある YYYY-MM-DD にそろえます")
    if y1 is not None and y2 is not None:
        return set(), set(_span(item, date(y1, m1, d1), date(y2, m2, d2)))
    # Every year; a range whose end is before its start crosses the new year (12-29..01-03).
    first = date(2024, m1, d1)
    last = date(2024 if (m2, d2) >= (m1, d1) else 2025, m2, d2)
    return {(d.month, d.day) for d in _span(item, first, last)}, set()


def parse_company_holidays(text: str) -> CompanyHolidays:
    """The company holidays of a ``KEIRI_COMPANY_HOLIDAYS`` value (blank: none)."""
    yearly: set[tuple[int, int]] = set()
    dates: set[date] = set()
    for raw in unicodedata.normalize("NFKC", text).split(","):
        item = raw.strip()
        if not item:
            continue
        ends = _RANGE.split(item)
        if len(ends) > 2:
            raise _config_error(item, "範囲は 始まり..終わり の 2 つで書きます")
        if len(ends) == 2:
            every_year, one_year = _range(item, *ends)
            yearly |= every_year
            dates |= one_year
            continue
        year, month, day = _day(item, item)
        if year is None:
            yearly.add((month, day))
        else:
            dates.add(date(year, month, day))
    return CompanyHolidays(frozenset(yearly), frozenset(dates))


@cache
def _public_holidays() -> dict[date, str]:
    """Japan's public holidays of every year the library knows, generated once per process
    (a calendar is made for each schedule at each look; the table is the same for all)."""
    import holidays

    generated = holidays.country_holidays("JP", language="ja", years=range(1955, 2100))
    return dict(generated.items())


@dataclass(frozen=True)
class BusinessCalendar:
    """Which days are business days; ``name`` ``none`` counts every day."""

    name: CalendarName = "jp"
    company: CompanyHolidays = field(default_factory=CompanyHolidays)

    @classmethod
    def of(cls, name: CalendarName, company_holidays: str) -> BusinessCalendar:
        """The calendar ``name`` with the company holidays of a settings value."""
        if name == "none":
            return cls("none")
        return cls(name, parse_company_holidays(company_holidays))

    @property
    def _public(self) -> dict[date, str]:
        return _public_holidays()

    def holiday_name(self, day: date) -> str | None:
        """Why ``day`` is not a business day (土曜日, 元日, 会社休日...), None when it is one."""
        if self.name == "none":
            return None
        public = self._public.get(day)
        if public is not None:
            return public
        if day in self.company:
            return "会社休日"
        if day.weekday() >= 5:
            return "土曜日" if day.weekday() == 5 else "日曜日"
        return None

    def is_business_day(self, day: date) -> bool:
        return self.holiday_name(day) is None

    def shift(self, day: date, direction: Literal[-1, 1]) -> date:
        """``day`` itself when it is a business day, else the nearest one before (-1) or
        after (+1) it."""
        current = day
        for _ in range(MAX_SEARCH_DAYS):
            if self.is_business_day(current):
                return current
            current += timedelta(days=direction)
        raise BlockError(
            f"{day.isoformat()} の前後 {MAX_SEARCH_DAYS} 日に営業日がありません。",
            code=ErrorCode.CONFIGURATION_ERROR,
            hint="KEIRI_COMPANY_HOLIDAYS の休日の範囲を確かめてください。",
        )

    def business_days(self, year: int, month: int) -> list[date]:
        """The business days of a month, in order."""
        current = date(year, month, 1)
        days = []
        while current.month == month:
            if self.is_business_day(current):
                days.append(current)
            current += timedelta(days=1)
        return days
