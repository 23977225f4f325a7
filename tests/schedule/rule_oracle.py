"""Every day rule an accountant can write, with the days it fires on by the law's calendar.

:func:`rule_cases` is each rule the product takes (day 1..31 with each 休日 choice, day 1..31
N business days before/after, the N-th business day 1..15, the last business day, each weekday
with each 休日 choice, every week and as 第1-第4/最終 of the month) beside its days from 2025 to 2031 computed here from ``law_calendar``
(never from the product's calendar or rules).
"""

from __future__ import annotations

import calendar as month_calendar
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from typing import Any

from tests.schedule.law_calendar import business, month_business_days

from keiri_agent.schedule import (
    BusinessDayRule,
    DayRule,
    LastBusinessDayRule,
    NthWeekdayRule,
    WeekdayRule,
)

__all__ = ["rule_cases"]

WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
OFFSETS = [-10, -3, -2, -1, 1, 2, 3, 10]


def _walk(day: date, step: int) -> date:
    while not business(day):
        day += timedelta(days=step)
    return day


def _months() -> Iterator[tuple[int, int]]:
    for year in range(2025, 2032):
        for month in range(1, 13):
            yield year, month


def _moved(target: date, if_holiday: str) -> date | None:
    if business(target):
        return target
    return None if if_holiday == "skip" else _walk(target, -1 if if_holiday == "before" else 1)


def _day_rule(day: int, if_holiday: str) -> Callable[[int, int], date | None]:
    def pick(year: int, month: int) -> date | None:
        target = date(year, month, min(day, month_calendar.monthrange(year, month)[1]))
        return _moved(target, if_holiday)

    return pick


def _nth_weekday(weekday: int, n: int, if_holiday: str) -> Callable[[int, int], date | None]:
    def pick(year: int, month: int) -> date | None:
        last = month_calendar.monthrange(year, month)[1]
        days = [d for d in range(1, last + 1) if date(year, month, d).weekday() == weekday]
        return _moved(date(year, month, days[n - 1] if n > 0 else days[-1]), if_holiday)

    return pick


def _offset_rule(day: int, offset: int) -> Callable[[int, int], date | None]:
    def pick(year: int, month: int) -> date | None:
        target = date(year, month, min(day, month_calendar.monthrange(year, month)[1]))
        step = 1 if offset > 0 else -1
        for _ in range(abs(offset)):
            target = _walk(target + timedelta(days=step), step)
        return target

    return pick


def _weekly(weekday: int, if_holiday: str) -> list[date | None]:
    day = date(2025, 12, 1)
    day += timedelta(days=(weekday - day.weekday()) % 7)
    found: list[date | None] = []
    while day < date(2031, 2, 1):
        found.append(_moved(day, if_holiday))
        day += timedelta(days=7)
    return found


def _monthly(pick: Callable[[int, int], date | None]) -> list[date | None]:
    """The rule's day of each month (None: no run that month), 2025-01 to 2031-12."""
    return [pick(y, m) for y, m in _months()]


def rule_cases() -> list[tuple[Any, list[date | None], bool]]:
    """(rule, the oracle's days, whether every month must have a run)."""
    cases: list[tuple[Any, list[date | None], bool]] = []
    for day in range(1, 32):
        for choice in ("before", "after", "skip"):
            rule = DayRule(day=day, if_holiday=choice)  # type: ignore[arg-type]
            cases.append((rule, _monthly(_day_rule(day, choice)), choice != "skip"))
        for offset in OFFSETS:
            cases.append(
                (DayRule(day=day, offset=offset), _monthly(_offset_rule(day, offset)), True)
            )
    for n in range(1, 16):
        cases.append(
            (
                BusinessDayRule(n=n),
                _monthly(lambda y, m, n=n: month_business_days(y, m)[n - 1]),
                True,
            )
        )
    cases.append(
        (LastBusinessDayRule(), _monthly(lambda y, m: month_business_days(y, m)[-1]), True)
    )
    for index, name in enumerate(WEEKDAYS):
        for choice in ("before", "after", "skip"):
            if index >= 5 and choice == "skip":
                continue  # never a business day: refused when added (no run within two years)
            rule = WeekdayRule(weekday=name, if_holiday=choice)  # type: ignore[arg-type]
            cases.append((rule, _weekly(index, choice), False))
            for n in (1, 2, 3, 4, -1):
                nth = NthWeekdayRule(weekday=name, n=n, if_holiday=choice)  # type: ignore[arg-type]
                cases.append((nth, _monthly(_nth_weekday(index, n, choice)), choice != "skip"))
    return cases
