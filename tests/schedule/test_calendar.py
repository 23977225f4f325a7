"""The business calendar and the monthly rules on the dates that trip calendars up."""

from __future__ import annotations

import re
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.schedule import (
    BusinessCalendar,
    BusinessDayRule,
    CronRule,
    DayRule,
    LastBusinessDayRule,
    parse_company_holidays,
)

JST = ZoneInfo("Asia/Tokyo")
CAL = BusinessCalendar.of("jp", "12-29..01-03")

# (date, is it a business day, why not) -- the tricky ones.
TABLE = [
    ("2019-04-30", False, "国民の休日"),  # between 昭和の日 and the enthronement day
    ("2019-05-01", False, "天皇の即位の日"),  # 2019 only
    ("2019-05-02", False, "国民の休日"),
    ("2019-05-06", False, "振替休日"),  # こどもの日 on a Sunday
    ("2019-10-22", False, "即位礼正殿の儀が行われる日"),  # 2019 only
    ("2020-07-23", False, "海の日"),  # moved for the Olympics
    ("2020-07-24", False, "スポーツの日"),  # moved for the Olympics
    ("2020-07-20", True, None),  # the third Monday of July, not 海の日 in 2020
    ("2020-10-12", True, None),  # the second Monday of October, not スポーツの日 in 2020
    ("2021-07-22", False, "海の日"),
    ("2021-07-23", False, "スポーツの日"),
    ("2021-08-09", False, "振替休日"),  # 山の日 (moved to 8/8, a Sunday)
    ("2021-10-11", True, None),  # スポーツの日 was moved away
    ("2015-09-22", False, "国民の休日"),  # the silver week
    ("2026-09-22", False, "国民の休日"),
    ("2024-02-12", False, "振替休日"),  # 建国記念の日 on a Sunday
    ("2025-01-13", False, "成人の日"),  # Happy Monday: second Monday of January
    ("2025-07-21", False, "海の日"),  # Happy Monday: third Monday of July
    ("2025-09-15", False, "敬老の日"),  # Happy Monday: third Monday of September
    ("2025-10-13", False, "スポーツの日"),  # Happy Monday: second Monday of October
    ("2026-05-06", False, "振替休日"),  # 憲法記念日 on a Sunday, carried past 5/4 and 5/5
    ("2026-12-29", False, "会社休日"),
    ("2027-01-04", True, None),  # 仕事始め
    ("2026-12-28", True, None),  # 仕事納め
    ("2026-12-05", False, "土曜日"),
    ("2026-12-06", False, "日曜日"),
    ("2026-12-07", True, None),
]


@pytest.mark.parametrize(("day", "business", "why"), TABLE)
def test_calendar_table(day: str, business: bool, why: str | None) -> None:
    d = date.fromisoformat(day)
    assert CAL.is_business_day(d) is business
    assert CAL.holiday_name(d) == why


def fires(rule: object, start: str, count: int) -> list[str]:
    moment = datetime.fromisoformat(start).replace(tzinfo=JST)
    out = []
    for _ in range(count):
        moment = rule.next_after(moment, CAL, JST)  # type: ignore[attr-defined]
        out.append(moment.strftime("%Y-%m-%d %H:%M"))
    return out


def test_nth_business_day_skips_new_year_and_holidays() -> None:
    # January 2027: 1-3 company/public holidays, 1/4 is Monday; 1/11 成人の日.
    assert fires(BusinessDayRule(n=3, at="09:00"), "2026-12-01", 3) == [
        "2026-12-03 09:00",
        "2027-01-06 09:00",
        "2027-02-03 09:00",
    ]
    # May 2026: 5/1 Fri, GW 5/3-5/6, so the 2nd business day is 5/7.
    assert fires(BusinessDayRule(n=2, at="08:30"), "2026-04-30", 1) == ["2026-05-07 08:30"]


def test_last_business_day_skips_year_end() -> None:
    assert fires(LastBusinessDayRule(at="17:00"), "2026-11-01", 3) == [
        "2026-11-30 17:00",
        "2026-12-28 17:00",  # 12/29-31 are company holidays
        "2027-01-29 17:00",  # 1/30, 1/31 are a weekend
    ]


def test_day_with_holiday_policies() -> None:
    # 2026-01-25 is a Sunday; 2026-10-25 a Sunday; 2026-11-25 a Wednesday.
    before = DayRule(day=25, if_holiday="before", at="10:00")
    after = DayRule(day=25, if_holiday="after", at="10:00")
    skip = DayRule(day=25, if_holiday="skip", at="10:00")
    assert fires(before, "2026-10-01", 2) == ["2026-10-23 10:00", "2026-11-25 10:00"]
    assert fires(after, "2026-10-01", 2) == ["2026-10-26 10:00", "2026-11-25 10:00"]
    assert fires(skip, "2026-10-01", 2) == ["2026-11-25 10:00", "2026-12-25 10:00"]
    # Day 31 in February is its last day; 2027-02-28 is a Sunday.
    assert fires(DayRule(day=31, if_holiday="before"), "2027-02-01", 1) == ["2027-02-26 09:00"]
    # Day 1 of January is a holiday: before reaches back into December's last business day.
    assert fires(DayRule(day=1, if_holiday="before"), "2026-12-02", 1) == ["2026-12-28 09:00"]


def test_cron_with_the_jp_calendar_skips_holidays() -> None:
    rule = CronRule(expr="0 9 * * *")
    assert fires(rule, "2026-12-28 10:00", 2) == ["2027-01-04 09:00", "2027-01-05 09:00"]
    plain = BusinessCalendar.of("none", "")
    moment = datetime(2026, 12, 31, 10, tzinfo=JST)
    assert rule.next_after(moment, plain, JST) == datetime(2027, 1, 1, 9, tzinfo=JST)


def test_company_holidays_setting() -> None:
    company = parse_company_holidays("08-13..08-15, 2026-06-01")
    cal = BusinessCalendar("jp", company)
    assert cal.holiday_name(date(2026, 8, 14)) == "会社休日"
    assert cal.holiday_name(date(2026, 6, 1)) == "会社休日"
    assert cal.is_business_day(date(2026, 12, 29))  # the default range is replaced
    assert parse_company_holidays("").yearly == frozenset()


@pytest.mark.parametrize("text", ["12-32", "1229", "2026-02-30", "12-29..13-01"])
def test_bad_company_holidays_are_named(text: str) -> None:
    with pytest.raises(BlockError) as caught:
        parse_company_holidays(text)
    assert "KEIRI_COMPANY_HOLIDAYS" in caught.value.message
    assert caught.value.details["item"] == text


def test_bad_rules_are_refused() -> None:
    with pytest.raises(ValueError, match="cron 式"):
        CronRule(expr="61 * * * *")
    with pytest.raises(ValueError, match="時刻"):
        BusinessDayRule(n=1, at="25:00")
    with pytest.raises(ValueError, match="less than or equal to 15"):
        BusinessDayRule(n=16)
    with pytest.raises(BlockError, match="営業日に当たりません"):
        CronRule(expr="0 9 1 1 *").next_after(datetime(2026, 1, 2, tzinfo=JST), CAL, JST)


@pytest.mark.parametrize(
    "raw",
    [
        {"kind": "cron", "expr": "bad"},
        {"kind": "business_day", "n": 99, "at": "09:00"},
        {"kind": "day", "day": 25, "at": "25:99", "if_holiday": "before"},
    ],
)
def test_a_rule_that_cannot_be_read_is_explained_in_japanese(raw: dict[str, object]) -> None:
    from keiri_agent.schedule import parse_rule

    with pytest.raises(BlockError) as caught:
        parse_rule(raw)
    text = f"{caught.value.message} {caught.value.hint}"
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    english = set(re.findall(r"[A-Za-z]{4,}", text)) - {"cron"}  # cron: the users' word
    assert english == set()  # no validator or cron-library English
