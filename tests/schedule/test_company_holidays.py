"""Company holidays as accountants write them in a settings file, across the year end.

A seeded generator writes 年末年始 (from 12/25-12/31 to 1/2-1/7) in every form a settings file
gets: ``12-29..01-03``, ``12/29..1/3``, ``12/29〜1/3``, ``12-29~01-03``, full-width digits,
spaces after commas, and as this winter's dates ``2026-12-26..2027-01-04`` (a company announces
its 年末年始 each year). Each must give exactly the days it says, in every year from 2026 to
2030 (only the named winter for dates), and the month-end rules must fire around them as the
law's calendar and those days say. What cannot be read is a Japanese error naming the item.
"""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest
from tests.schedule.conftest import JST, PLAN_ID, approved_memo, team_settings
from tests.schedule.law_calendar import law_holidays

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.schedule import (
    BusinessCalendar,
    BusinessDayRule,
    DayRule,
    LastBusinessDayRule,
    ScheduleRequest,
    add_schedule,
    parse_company_holidays,
)

FULL_WIDTH = str.maketrans("0123456789-/~", "０１２３４５６７８９－／～")


def _forms(start: date, end: date) -> list[str]:
    """Ways of writing the yearly range start..end (month and day only)."""
    a, b = (start.month, start.day), (end.month, end.day)
    plain = f"{a[0]:02d}-{a[1]:02d}..{b[0]:02d}-{b[1]:02d}"
    slashed = f"{a[0]}/{a[1]}..{b[0]}/{b[1]}"
    return [
        plain,
        slashed,
        f"{a[0]}/{a[1]}〜{b[0]}/{b[1]}",
        f"{a[0]:02d}-{a[1]:02d}~{b[0]:02d}-{b[1]:02d}",
        f"{a[0]}/{a[1]}~{b[0]}/{b[1]}".translate(FULL_WIDTH),
        f" 08-13..08-15 ,  {slashed} ",
    ]


def _cases() -> list[tuple[str, date, date, bool]]:
    """(setting, first day off, last day off, every year?)."""
    rng = random.Random(4129)
    cases = []
    for _ in range(40):
        start = date(2026, 12, rng.randint(25, 31))
        end = date(2027, 1, rng.randint(2, 7))
        cases += [(form, start, end, True) for form in _forms(start, end)]
        dated = f"{start:%Y-%m-%d}..{end:%Y-%m-%d}"
        cases += [(dated, start, end, False), (dated.replace("-", "/"), start, end, False)]
    return cases


CASES = _cases()


def _off(day: date, start: date, end: date, yearly: bool) -> bool:
    if not yearly:
        return start <= day <= end
    md = (day.month, day.day)
    return md >= (start.month, start.day) or md <= (end.month, end.day)


def _business(day: date, start: date, end: date, yearly: bool) -> bool:
    holidays = law_holidays(day.year)
    return day.weekday() < 5 and day not in holidays and not _off(day, start, end, yearly)


def test_every_written_year_end_gives_the_days_it_says() -> None:
    wrong = []
    checked = 0
    for setting, start, end, yearly in CASES:
        cal = BusinessCalendar.of("jp", setting)
        for year in range(2026, 2031):
            for day in [date(year, 12, 20) + timedelta(days=n) for n in range(20)]:
                checked += 1
                if cal.is_business_day(day) != _business(day, start, end, yearly):
                    wrong.append((setting, day.isoformat()))
            if "08-13" in setting:
                assert cal.holiday_name(date(year, 8, 14)) == "会社休日"
    assert checked > 20_000
    assert not wrong, f"{len(wrong)} of {checked} days wrong: {wrong[:5]}"


def _walk(day: date, step: int, start: date, end: date, yearly: bool) -> date:
    while not _business(day, start, end, yearly):
        day += timedelta(days=step)
    return day


def test_month_end_rules_fire_around_each_written_year_end() -> None:
    """December's last business day, January's 3rd and the 31st's eve, as the days say."""
    wrong = []
    for setting, start, end, yearly in CASES[::3]:
        cal = BusinessCalendar.of("jp", setting)
        if "08-13" in setting:
            continue
        for year in range(2026, 2030):
            if not yearly and year != 2026:
                continue
            eve = datetime(year, 12, 1, tzinfo=JST)
            last = _walk(date(year, 12, 31), -1, start, end, yearly)
            january = [
                d
                for d in (date(year + 1, 1, n) for n in range(1, 32))
                if _business(d, start, end, yearly)
            ]
            after_31 = _walk(date(year, 12, 31), 1, start, end, yearly)
            for rule, want in (
                (LastBusinessDayRule(), last),
                (BusinessDayRule(n=3), january[2]),
                (DayRule(day=31, if_holiday="after"), after_31),
            ):
                moment = eve if rule.kind != "business_day" else datetime(year, 12, 31, tzinfo=JST)
                got = rule.next_after(moment, cal, JST)
                if got != datetime.combine(want, time(9, 0), tzinfo=JST):
                    wrong.append((setting, year, rule.kind, got.date(), want))
    assert not wrong, f"{len(wrong)} wrong: {wrong[:5]}"


@pytest.mark.parametrize(
    ("setting", "why"),
    [
        ("2027-01-04..2026-12-26", "終わりが始まりより前"),
        ("12-29..2027-01-03", "そろえます"),
        ("2026-01-01..2027-06-01", "範囲が長すぎます"),
        ("12/29..1/3..1/5", "2 つで書きます"),
        ("12月29日..1月3日", "MM-DD"),
        ("2026-12-32", "その日付はありません"),
    ],
)
def test_a_setting_that_does_not_read_names_the_item(setting: str, why: str) -> None:
    with pytest.raises(BlockError) as caught:
        parse_company_holidays(f"08-13, {setting}")
    assert caught.value.code == ErrorCode.CONFIGURATION_ERROR
    assert f"「{setting}」" in caught.value.message
    assert why in caught.value.message


def test_a_business_day_a_month_would_not_have_is_refused_when_added(tmp_path: Path) -> None:
    """Never a month left out unasked: 第N営業日 with company holidays that leave some month
    fewer than N business days is refused when added, naming the months (it used to be
    stored, and that month simply passed with no run)."""
    rng = random.Random(15)
    base = team_settings(tmp_path, keiri_require_approval="off")
    approved_memo(base)
    now = datetime(2026, 12, 6, 10, tzinfo=JST)
    wrong = []
    count = 0
    for _ in range(60):
        last = rng.randint(5, 25)
        n = rng.randint(1, 15)
        setting = f"12-29..01-03,08-01..08-{last:02d}"
        settings = base.model_copy(update={"keiri_company_holidays": setting})
        months = [(2026 + (11 + k) // 12, (11 + k) % 12 + 1) for k in range(25)]
        short = [
            f"{y}-{m:02d}"
            for y, m in months
            if sum(_summer_business(d, last) for d in _days(y, m)) < n
        ]
        request = ScheduleRequest(plan_id=PLAN_ID, rule=BusinessDayRule(n=n))
        count += 1
        try:
            add_schedule(settings, request, created_by="sato", now=now)
        except BlockError as exc:
            if exc.details.get("months") != short or "実行されません" not in exc.message:
                wrong.append((setting, n, short, exc.message))
        else:
            if short:
                wrong.append((setting, n, short, "stored"))
    assert not wrong, f"{len(wrong)} of {count} wrong: {wrong[:3]}"


def _days(year: int, month: int) -> list[date]:
    first = date(year, month, 1)
    return [
        first + timedelta(days=k) for k in range(31) if (first + timedelta(days=k)).month == month
    ]


def _summer_business(day: date, last: int) -> bool:
    summer = day.month == 8 and day.day <= last
    return _business(day, date(2026, 12, 29), date(2027, 1, 3), True) and not summer
