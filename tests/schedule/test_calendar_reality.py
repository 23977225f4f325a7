"""The rules an accounting team schedules, on every day from 2024 to 2030, against a reference.

The reference is written here apart from the product: a day-by-day walk over the ``holidays``
library's Japanese calendar, weekends and the company holidays (年末年始 12/29-1/3 across the
new year, お盆 8/13-8/16), never the product's own calendar helpers. For every day of
2024-2030 (at 00:00, exactly at the fire time and at 23:59 JST) each rule's next fire time must
be the reference's. Then the same in processes whose machine time zone is UTC and New York,
and what a server that was off over a weekend (or a long holiday) does with the fire times it
missed.
"""

from __future__ import annotations

import bisect
import calendar as month_calendar
import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import holidays
import pytest
from tests.schedule.conftest import PLAN_ID, approved_memo, team_settings

from keiri_agent.schedule import (
    BusinessCalendar,
    BusinessDayRule,
    DayRule,
    LastBusinessDayRule,
    Schedule,
    WeekdayRule,
    describe,
    due,
)

JST = ZoneInfo("Asia/Tokyo")
COMPANY = "12-29..01-03,08-13..08-16"
PUBLIC = holidays.country_holidays("JP", years=range(2023, 2033))
AT = time(9, 0)
FIRST, LAST = date(2024, 1, 1), date(2030, 12, 31)
REPO = Path(__file__).resolve().parents[2]


def _company(day: date) -> bool:
    md = (day.month, day.day)
    return md >= (12, 29) or md <= (1, 3) or (8, 13) <= md <= (8, 16)


def _business(day: date) -> bool:
    return day.weekday() < 5 and day not in PUBLIC and not _company(day)


def _walk(day: date, step: int) -> date:
    while not _business(day):
        day += timedelta(days=step)
    return day


def _month_days(year: int, month: int) -> list[date]:
    days = [date(year, month, d) for d in range(1, month_calendar.monthrange(year, month)[1] + 1)]
    return [d for d in days if _business(d)]


def _months() -> list[tuple[int, int]]:
    return [(y, m) for y in range(2023, 2033) for m in range(1, 13)]


def _eve_of_month_end(year: int, month: int) -> date:  # 末日の前営業日
    return _walk(date(year, month, month_calendar.monthrange(year, month)[1]) - timedelta(1), -1)


def _day_25(step: int) -> Callable[[int, int], date]:
    return lambda year, month: _walk(date(year, month, 25), step)


def _three_before_25(year: int, month: int) -> date:  # 25日の3営業日前（振込データの締め）
    day = date(year, month, 25)
    for _ in range(3):
        day = _walk(day - timedelta(1), -1)
    return day


def _mondays() -> list[date]:
    monday = date(2023, 1, 2)
    found = []
    while monday < date(2033, 1, 1):
        found.append(_walk(monday, 1))  # 祝日なら翌営業日
        monday += timedelta(days=7)
    return found


def _monthly(pick: Callable[[int, int], date]) -> list[date]:
    return [pick(y, m) for y, m in _months()]


# (the rule as the product takes it, its fire days by the reference, how a person says it)
RULES = [
    (DayRule(day=31, offset=-1), _monthly(_eve_of_month_end), "毎月末日の前営業日 09:00"),
    (BusinessDayRule(n=3), _monthly(lambda y, m: _month_days(y, m)[2]), "毎月第3営業日 09:00"),
    (
        DayRule(day=25, if_holiday="before"),
        _monthly(_day_25(-1)),
        "毎月25日 09:00（休日なら前営業日）",
    ),
    (
        DayRule(day=25, if_holiday="after"),
        _monthly(_day_25(1)),
        "毎月25日 09:00（休日なら翌営業日）",
    ),
    (LastBusinessDayRule(), _monthly(lambda y, m: _month_days(y, m)[-1]), "毎月最終営業日 09:00"),
    (
        WeekdayRule(weekday="mon", if_holiday="after"),
        _mondays(),
        "毎週月曜 09:00（休日なら翌営業日）",
    ),
    (DayRule(day=25, offset=-3), _monthly(_three_before_25), "毎月25日の3営業日前 09:00"),
]
IDS = [said for _rule, _days, said in RULES]


def _fires(days: list[date]) -> list[datetime]:
    return sorted({datetime.combine(d, AT, tzinfo=JST) for d in days})


def _expected(fires: list[datetime], moment: datetime) -> datetime:
    return fires[bisect.bisect_right(fires, moment)]


def _every_moment() -> list[datetime]:
    moments = []
    day = FIRST
    while day <= LAST:
        for at in (time(0, 0), AT, time(23, 59)):
            moments.append(datetime.combine(day, at, tzinfo=JST))
        day += timedelta(days=1)
    return moments


@pytest.mark.parametrize(("rule", "days", "said"), RULES, ids=IDS)
def test_every_day_2024_to_2030_gets_the_reference_next_run(
    rule: object, days: list[date], said: str
) -> None:
    cal = BusinessCalendar.of("jp", COMPANY)
    fires = _fires(days)
    wrong = []
    moments = _every_moment()
    for moment in moments:
        got = rule.next_after(moment, cal, JST)  # type: ignore[attr-defined]
        if got != _expected(fires, moment):
            wrong.append((moment.isoformat(), got.isoformat(), _expected(fires, moment)))
    assert not wrong, f"{len(wrong)} of {len(moments)} wrong, e.g. {wrong[:3]}"
    assert describe(rule) == said  # type: ignore[arg-type]


def test_the_reference_has_the_dates_that_trip_calendars_up() -> None:
    """The reference itself on the days the brief names (so it is not wrong the same way)."""
    assert not _business(date(2026, 9, 22))  # 国民の休日 (between 敬老の日 and 秋分の日)
    assert not _business(date(2024, 2, 12))  # 振替休日
    assert not _business(date(2026, 12, 30))  # 年末年始, across the new year
    assert not _business(date(2027, 1, 2))
    assert not _business(date(2026, 8, 14))  # お盆
    assert _eve_of_month_end(2026, 9) == date(2026, 9, 29)  # 9/30 is a Wednesday
    assert _eve_of_month_end(2026, 5) == date(2026, 5, 29)  # 5/31 is a Sunday, 5/30 Saturday
    # 敬老の日 9/21, 国民の休日 9/22, 秋分の日 9/23: that Monday's run moves to Thursday.
    assert date(2026, 9, 24) in _mondays()
    assert date(2026, 9, 21) not in _mondays()


_CHILD = """
import json, sys
from datetime import datetime
from keiri_agent.config import load_settings
from keiri_agent.schedule import Schedule, next_fire
from keiri_agent.localtime import shown_time
settings = load_settings()
out = []
for raw, moment in json.loads(sys.stdin.read()):
    schedule = Schedule.model_validate(raw)
    fire = next_fire(schedule, datetime.fromisoformat(moment), settings)
    out.append([fire.isoformat(), shown_time(fire, settings.keiri_timezone, seconds=False)])
print(json.dumps(out))
"""


def _child_env(machine_zone: str, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEIRI_")}
    env.update(
        TZ=machine_zone,
        PYTHONPATH=str(REPO / "src") + os.pathsep + str(REPO),
        KEIRI_COMPANY_HOLIDAYS=COMPANY,
        KEIRI_WORKSPACE_ROOT=str(tmp_path),
    )
    return env


@pytest.mark.parametrize("machine_zone", ["UTC", "America/New_York"])
def test_run_times_stay_in_tokyo_whatever_the_machine_zone(
    machine_zone: str, tmp_path: Path
) -> None:
    # Moments around the JST date line (15:00 UTC) and New York's, every month of 2026-2027.
    cases = []
    for rule, days, _said in RULES:
        fires = _fires(days)
        schedule = Schedule(
            id="s", plan_id=PLAN_ID, rule=rule, created_by="sato", created_at=datetime.now(UTC)
        )
        for y, m in _months()[36:60]:
            for hour in (14, 15, 4, 5):
                moment = datetime(y, m, 1, hour, 59, tzinfo=UTC) - timedelta(days=1)
                cases.append((schedule.model_dump(mode="json"), moment, _expected(fires, moment)))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps([[raw, moment.isoformat()] for raw, moment, _ in cases]),
        capture_output=True,
        text=True,
        env=_child_env(machine_zone, tmp_path),
        timeout=120,
        check=True,
    )
    got = json.loads(done.stdout)
    wrong = [
        (moment.isoformat(), fire, shown)
        for (_raw, moment, want), (fire, shown) in zip(cases, got, strict=True)
        if datetime.fromisoformat(fire) != want
        or shown != f"{want:%Y-%m-%d %H:%M} JST"
        or datetime.fromisoformat(fire).utcoffset() != timedelta(hours=9)
    ]
    assert not wrong, f"{len(wrong)} of {len(cases)} wrong under TZ={machine_zone}: {wrong[:3]}"


@pytest.mark.parametrize("machine_zone", ["UTC", "America/New_York"])
def test_schedule_add_shows_the_tokyo_run_time_whatever_the_machine_zone(
    machine_zone: str, tmp_path: Path
) -> None:
    settings = team_settings(tmp_path)
    approved_memo(settings)
    env = _child_env(machine_zone, tmp_path)
    env.update(
        KEIRI_DESIGNS_DIR=str(settings.keiri_designs_dir),
        KEIRI_RUNS_DIR=str(settings.keiri_runs_dir),
        KEIRI_REQUIRE_APPROVAL="on",
    )
    command = [str(Path(sys.executable).with_name("keiri-agent")), "schedule", "add", PLAN_ID]
    done = subprocess.run(
        [*command, "--day", "31", "--offset", "-1", "--at", "17:30", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    fires = sorted(datetime.combine(d, time(17, 30), tzinfo=JST) for d in RULES[0][1])
    want = _expected(fires, datetime.fromisoformat(view["created_at"]))
    assert view["next_fire_local"] == f"{want:%Y-%m-%d %H:%M} JST"
    assert view["rule_text"] == "毎月末日の前営業日 17:30"


GRACE_S = 300.0


@pytest.mark.parametrize(("rule", "days", "said"), RULES, ids=IDS)
def test_a_server_off_over_a_weekend_or_a_holiday_runs_the_newest_missed_time_once(
    rule: object, days: list[date], said: str, tmp_path: Path
) -> None:
    """README: a fire time missed while the server was off is handled once (the newest one,
    however many passed), late when more than KEIRI_SCHEDULE_GRACE_S ago."""
    settings = team_settings(tmp_path).model_copy(
        update={"keiri_company_holidays": COMPANY, "keiri_schedule_grace_s": GRACE_S}
    )
    fires = _fires(days)
    schedule = Schedule(
        id="s", plan_id=PLAN_ID, rule=rule, created_by="sato", created_at=datetime.now(UTC)
    )
    wrong = []
    count = 0
    day = FIRST
    while day <= LAST:
        if day.weekday() == 4 or not _business(day):  # off from a Friday / a holiday evening
            since = datetime.combine(day, time(18, 0), tzinfo=JST)
            for back_after in (timedelta(days=3, hours=14), timedelta(days=10), timedelta(0)):
                now = since + back_after + timedelta(minutes=1)
                missed = [f for f in fires if since < f <= now]
                late = bool(missed) and (now - missed[-1]).total_seconds() > GRACE_S
                want = (missed[-1], late, tuple(missed[:-1])) if missed else None
                count += 1
                if due(schedule, since, now, settings) != want:
                    wrong.append((since.isoformat(), now.isoformat(), want))
        day += timedelta(days=1)
    assert not wrong, f"{len(wrong)} of {count} wrong, e.g. {wrong[:3]}"
