"""Every day rule an accountant can write, 2026-2030, against the law's calendar.

The oracle is ``law_calendar`` (国民の祝日に関する法律, written from the statute apart from the
product and from the ``holidays`` library it uses) with the default company holidays 12/29-1/3.
For every rule -- day 1..31 with each 休日 choice, day 1..31 N business days before/after, the
N-th business day 1..15, the last business day, each weekday with each 休日 choice -- the
product's fire times from 2026-01-01 to 2030-12-31 must be exactly the oracle's: on a business
day, once, never a month left out (except where the rule says 休日なら実行しない). Then a server
that was off across each long holiday (年末年始, GW, the 2026 silver week, three-day weekends)
handles the newest fire time it missed, once.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import holidays
import pytest
from tests.schedule.conftest import JST, PLAN_ID, team_settings
from tests.schedule.law_calendar import COMPANY, business, law_holidays
from tests.schedule.rule_oracle import rule_cases

from keiri_agent.schedule import BusinessCalendar, Schedule, due

YEARS = range(2026, 2031)
START = datetime(2026, 1, 1, tzinfo=JST)
END = datetime(2031, 1, 1, tzinfo=JST)
# Times of day: a morning, and both ends of the day (a fire at 00:00 or 23:59 is on its day).
TIMES = [time(9, 0), time(0, 0), time(23, 59)]
CASES = rule_cases()
CAL = BusinessCalendar.of("jp", COMPANY)


def _product_fires(rule: Any, at: time) -> list[datetime]:
    rule = rule.model_copy(update={"at": f"{at:%H:%M}"})
    found = []
    moment = START - timedelta(minutes=1)
    while True:
        fire = rule.next_after(moment, CAL, JST)
        if fire >= END:
            return found
        found.append(fire)
        moment = fire


def _oracle_fires(days: list[date | None], at: time) -> list[datetime]:
    fires = sorted({datetime.combine(d, at, tzinfo=JST) for d in days if d is not None})
    return [f for f in fires if START <= f < END]


def test_the_law_and_the_library_agree_on_every_holiday_2026_to_2030() -> None:
    """The product's table (the ``holidays`` library) is the law's, day by day and by name."""
    library = holidays.country_holidays("JP", language="ja", years=YEARS)
    for year in YEARS:
        by_law = law_holidays(year)
        by_library = {d: n for d, n in library.items() if d.year == year}
        assert by_law == by_library, year
        for day, name in by_law.items():
            assert CAL.holiday_name(day) == name
    # The days that trip tables up in this range, named by the law.
    assert law_holidays(2026)[date(2026, 9, 22)] == "国民の休日"
    assert law_holidays(2027)[date(2027, 3, 22)] == "振替休日"  # 春分の日 3/21 is a Sunday
    assert law_holidays(2029)[date(2029, 9, 24)] == "振替休日"  # 秋分の日 9/23 is a Sunday
    assert law_holidays(2030)[date(2030, 11, 4)] == "振替休日"  # 文化の日 11/3 is a Sunday


def test_every_day_of_2026_to_2030_is_a_business_day_exactly_when_the_law_says() -> None:
    day = START.date()
    wrong = []
    while day < END.date():
        if CAL.is_business_day(day) != business(day):
            wrong.append(day)
        day += timedelta(days=1)
    assert not wrong


@pytest.mark.parametrize("at", TIMES, ids=[f"{t:%H%M}" for t in TIMES])
def test_every_rule_fires_on_the_day_the_law_gives_once_and_every_month(at: time) -> None:
    wrong: list[str] = []
    compared = 0
    for rule, days, monthly in CASES:
        got = _product_fires(rule, at)
        want = _oracle_fires(days, at)
        compared += max(len(got), len(want))
        if got != want:
            extra = sorted(set(got) - set(want))[:2]
            missing = sorted(set(want) - set(got))[:2]
            wrong.append(f"{rule!r}: extra {extra} missing {missing}")
        assert all(not CAL.holiday_name(f.date()) for f in got), rule
        assert all(a < b for a, b in itertools.pairwise(got)), rule  # never twice
        if monthly:  # never a month left out (got == want: the product's runs are these)
            assert None not in days, rule
    assert compared > 20_000
    assert not wrong, f"{len(wrong)} of {len(CASES)} rules wrong: {wrong[:5]}"


def _long_holidays() -> list[date]:
    """The last business day before each run of three or more days off, 2026-2030."""
    found = []
    day = START.date()
    while day < END.date() - timedelta(days=10):
        if business(day) and not any(business(day + timedelta(days=k)) for k in (1, 2, 3)):
            found.append(day)
        day += timedelta(days=1)
    return found


GRACE_S = 300.0


def test_a_server_off_across_a_long_holiday_runs_the_newest_missed_time_once(
    tmp_path: Path,
) -> None:
    settings = team_settings(tmp_path).model_copy(
        update={"keiri_company_holidays": COMPANY, "keiri_schedule_grace_s": GRACE_S}
    )
    eves = _long_holidays()
    assert {date(2026, 12, 28), date(2026, 9, 18), date(2027, 4, 30)} <= set(eves)
    rng = random.Random(41)
    wrong = []
    count = 0
    for rule, days, _monthly_rule in rng.sample(CASES, 60):
        fires = _oracle_fires(days, time(9, 0))
        schedule = Schedule(id="s", plan_id=PLAN_ID, rule=rule, created_by="sato", created_at=START)
        for eve in eves:
            since = datetime.combine(eve, time(rng.randint(10, 23), rng.randint(0, 59)), tzinfo=JST)
            back = since + timedelta(days=rng.randint(3, 12), hours=rng.randint(0, 23))
            for now in (back, datetime.combine(back.date(), time(9, 0), tzinfo=JST)):
                if now <= since:
                    continue
                missed = [f for f in fires if since < f <= now]
                late = bool(missed) and (now - missed[-1]).total_seconds() > GRACE_S
                want = (missed[-1], late, tuple(missed[:-1])) if missed else None
                count += 1
                if due(schedule, since, now, settings) != want:
                    wrong.append((repr(rule), since.isoformat(), now.isoformat(), want))
    assert count > 2_000
    assert not wrong, f"{len(wrong)} of {count} wrong, e.g. {wrong[:3]}"


_CHILD = """
import json, sys
from datetime import datetime
from keiri_agent.config import load_settings
from keiri_agent.schedule import Schedule, due, next_fire
settings = load_settings()
out = []
for raw, since, now in json.loads(sys.stdin.read()):
    schedule = Schedule.model_validate(raw)
    since, now = datetime.fromisoformat(since), datetime.fromisoformat(now)
    found = due(schedule, since, now, settings)
    out.append([next_fire(schedule, since, settings).isoformat(),
                found[0].isoformat() if found else None])
print(json.dumps(out))
"""
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("machine_zone", ["Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"])
def test_the_scheduler_decides_in_keiri_timezone_around_midnight(
    machine_zone: str, tmp_path: Path
) -> None:
    """Machines 14 hours ahead of UTC and 11 behind (their date is not Tokyo's around JST
    midnight): a rule at 00:00 or 23:59 JST is due at that minute, on the law's business day."""
    rng = random.Random(7)
    cases = []
    for rule, days, _monthly_rule in rng.sample(CASES, 40):
        for at in (time(0, 0), time(23, 59)):
            timed = rule.model_copy(update={"at": f"{at:%H:%M}"})
            schedule = Schedule(
                id="s", plan_id=PLAN_ID, rule=timed, created_by="sato", created_at=START
            )
            for fire in rng.sample(_oracle_fires(days, at), 5):
                for before, after in ((2, 0), (61, 1), (60 * 30, 60 * 12)):
                    since = fire - timedelta(minutes=before)
                    now = fire + timedelta(minutes=after)
                    cases.append((schedule.model_dump(mode="json"), since, now, fire))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEIRI_")}
    env.update(
        TZ=machine_zone,
        PYTHONPATH=str(REPO / "src") + os.pathsep + str(REPO),
        KEIRI_TIMEZONE="Asia/Tokyo",
        KEIRI_COMPANY_HOLIDAYS=COMPANY,
        KEIRI_WORKSPACE_ROOT=str(tmp_path),
    )
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps([[raw, s.isoformat(), n.isoformat()] for raw, s, n, _ in cases]),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    got = json.loads(done.stdout)
    wrong = [
        (since.isoformat(), fire.isoformat(), answer)
        for (_raw, since, _now, fire), answer in zip(cases, got, strict=True)
        if [datetime.fromisoformat(a) if a else None for a in answer] != [fire, fire]
    ]
    assert len(cases) > 1_000
    assert not wrong, f"{len(wrong)} of {len(cases)} wrong under TZ={machine_zone}: {wrong[:3]}"
