"""KEIRI_TIMEZONE with summer time (a subsidiary abroad): a fire time is strictly after the moment
it is asked after on the clock, also in the hour repeated in autumn.

Compared by their wall readings (as Python compares two times in one zone), 01:30 of the first
pass is after 01:10 of the second; the next fire time after 01:10 (second pass) was then 01:30
(first pass), 40 minutes *before* it: a schedule made in that hour ran at once, late, for a fire
time before it existed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tests.schedule.conftest import PLAN_ID, team_settings

from keiri_agent.schedule import (
    BusinessCalendar,
    CronRule,
    DayRule,
    Schedule,
    WeekdayRule,
    due,
    next_fire,
)

ZONES = ["America/New_York", "Europe/London", "Australia/Sydney", "America/Sao_Paulo"]
RULES = [
    CronRule(expr="15 1 * * *"),
    CronRule(expr="*/20 * * * *"),
    CronRule(expr="30 0-3 * * *"),
    DayRule(day=1, at="01:30"),
    DayRule(day=31, if_holiday="after", at="02:30"),
    WeekdayRule(weekday="sun", if_holiday="skip", at="01:10"),
    WeekdayRule(weekday="sun", if_holiday="after", at="01:10"),
]


def _transitions(zone: ZoneInfo) -> list[datetime]:
    """The moments (UTC) the zone's offset changes in 2026-2028."""
    found = []
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    while moment < datetime(2029, 1, 1, tzinfo=UTC):
        step = moment + timedelta(hours=1)
        if moment.astimezone(zone).utcoffset() != step.astimezone(zone).utcoffset():
            found.append(step)
        moment = step
    return found


def test_the_next_fire_time_is_after_the_moment_on_the_clock() -> None:
    cal = BusinessCalendar.of("none", "")
    wrong = []
    count = 0
    for name in ZONES:
        zone = ZoneInfo(name)
        for change in _transitions(zone):
            moment = change - timedelta(hours=3)
            while moment < change + timedelta(hours=3):
                for rule in RULES:
                    fire = rule.next_after(moment, cal, zone)
                    count += 1
                    if fire.timestamp() <= moment.timestamp():
                        wrong.append((name, rule.kind, moment.isoformat(), fire.isoformat()))
                moment += timedelta(minutes=5)
    assert count > 8_000
    assert not wrong, f"{len(wrong)} of {count}: {wrong[:3]}"


def test_a_schedule_made_in_the_repeated_hour_has_no_fire_time_before_it(tmp_path: Path) -> None:
    zone = ZoneInfo("America/New_York")
    settings = team_settings(tmp_path, keiri_timezone=zone, keiri_company_holidays="")
    made = datetime(2026, 11, 1, 6, 10, tzinfo=UTC)  # 01:10 EST, the second pass
    schedule = Schedule(
        id="s",
        plan_id=PLAN_ID,
        rule=CronRule(expr="15 1 * * *"),
        calendar="none",
        created_by="sato",
        created_at=made,
    )
    # 01:15 EDT (05:15 UTC, the day's fire time) was before the schedule was made: the next one
    # is the next day's, and nothing is due (nor run late) before it.
    following = datetime(2026, 11, 2, 6, 15, tzinfo=UTC)
    assert next_fire(schedule, made, settings) == following
    assert due(schedule, made, made + timedelta(hours=2), settings) is None
    found = due(schedule, made, following + timedelta(seconds=5), settings)
    assert found is not None
    assert (found.fire, found.late, found.missed) == (following, False, ())
