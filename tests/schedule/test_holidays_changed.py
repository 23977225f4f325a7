"""Company holidays changed after a schedule was added: no month passes with no run and nobody told.

A schedule is checked against ``KEIRI_COMPANY_HOLIDAYS`` when it is added; the setting is
changed later as companies do (夏季休業 of a given year, a 棚卸 week every year, an office move
closing most of a month). A seeded generator writes such changes: a range in any of the next
24 months, yearly (``MM-DD..MM-DD``) or dated (``YYYY-MM-DD..YYYY-MM-DD``, with / as well), for
第N営業日 and 最終営業日. Against a calendar written apart (the law's holidays, 12/29-1/3 and the
range), every month the changed setting leaves without the rule's day must be

- listed by ``schedule list`` (the view's ``months_left_out`` and its warning), no other month;
- recorded by the scheduler as skipped, with the reason, once, when the month begins, and told
  to the notify URL once.
"""

from __future__ import annotations

import calendar as month_calendar
import random
import re
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.schedule.conftest import JST, PLAN_ID, approved_memo, team_settings
from tests.schedule.law_calendar import business

from keiri_agent.schedule import (
    BusinessDayRule,
    LastBusinessDayRule,
    Schedule,
    ScheduleRequest,
    ScheduleStore,
    add_schedule,
    schedule_view,
)
from keiri_agent.server.scheduler import Scheduler
from keiri_agent.server.tasks import TaskRegistry

CASES = 120
ADDED = datetime(2026, 12, 6, 10, tzinfo=JST)
MONTHS = 25  # the month of ADDED and two years on, as the product looks ahead
YEAR_END = "12-29..01-03"
PROPERTIES = ("list", "recorded", "told")


def _months() -> list[tuple[int, int]]:
    return [(2026 + (11 + k) // 12, (11 + k) % 12 + 1) for k in range(MONTHS)]


def _change(rng: random.Random) -> tuple[str, date, date, bool]:
    """A range written as a settings file holds it: (text, first day off, last, yearly?)."""
    year, month = rng.choice(_months()[1:])
    last_day = month_calendar.monthrange(year, month)[1]
    first = date(year, month, rng.randint(1, 10))
    last = min(first + timedelta(days=rng.randint(4, 30)), date(year, month, last_day))
    if month in (12, 1) or rng.random() < 0.5:  # dated: this year's only
        text = f"{first:%Y-%m-%d}..{last:%Y-%m-%d}"
        return (text.replace("-", "/") if rng.random() < 0.3 else text), first, last, False
    return f"{first.month}/{first.day}..{last.month}/{last.day}", first, last, True


def _off(day: date, first: date, last: date, yearly: bool) -> bool:
    if yearly:
        return (first.month, first.day) <= (day.month, day.day) <= (last.month, last.day)
    return first <= day <= last


def _short_months(rule: Any, first: date, last: date, yearly: bool) -> list[str]:
    """The months the rule has no day in, by the calendar written apart."""
    short = []
    for year, month in _months():
        days = [
            date(year, month, d) for d in range(1, month_calendar.monthrange(year, month)[1] + 1)
        ]
        open_days = [d for d in days if business(d) and not _off(d, first, last, yearly)]
        need = rule.n if isinstance(rule, BusinessDayRule) else 1
        if len(open_days) < need:
            short.append(f"{year}-{month:02d}")
    return short


def _month_start(month: str) -> datetime:
    year, number = (int(part) for part in month.split("-"))
    return datetime.combine(date(year, number, 1), time(0), tzinfo=JST)


def _left_out_records(store: ScheduleStore, schedule: Schedule) -> dict[str, str]:
    """The months the scheduler recorded as left out (their first moment; the fire times the
    jumps of the clock passed over are recorded as skipped too, at 09:00): month → reason."""
    return {
        f"{fire.fire_time.astimezone(JST):%Y-%m}": fire.error or ""
        for fire in store.fires(schedule.id, limit=1000)
        if fire.outcome == "skipped" and fire.fire_time.astimezone(JST).time() == time(0)
    }


def test_months_the_changed_company_holidays_leave_out_are_listed_recorded_and_told(
    tmp_path: Path,
) -> None:
    base = team_settings(tmp_path, keiri_require_approval="off", keiri_company_holidays=YEAR_END)
    approved_memo(base)
    registry = TaskRegistry(base)
    store = ScheduleStore.of(base)
    rng = random.Random(20261206)
    wrong: list[tuple[Any, ...]] = []
    shorts = 0
    for case in range(CASES):
        rule: Any = (
            LastBusinessDayRule() if rng.random() < 0.2 else BusinessDayRule(n=rng.randint(5, 15))
        )
        text, first, last, yearly = _change(rng)
        request = ScheduleRequest(plan_id=PLAN_ID, rule=rule, misfire="skip")
        schedule = add_schedule(base, request, created_by="sato", now=ADDED)
        changed = base.model_copy(update={"keiri_company_holidays": f"{YEAR_END}, {text}"})
        short = _short_months(rule, first, last, yearly)
        shorts += bool(short)

        view = schedule_view(changed, schedule, ADDED)
        warned = "実行されません" in (view.get("warning") or "")
        if view.get("months_left_out") != short or warned != bool(short):
            wrong.append((case, "list", text, rule, short, view.get("months_left_out")))

        told: list[dict[str, Any]] = []
        scheduler = Scheduler(changed, registry, clock=lambda: ADDED, store=store)
        scheduler.notifier.send = told.append  # type: ignore[method-assign]
        for month in short[:2]:
            for minutes in (1, 2):  # a second tick, or another server, records nothing more
                moment = _month_start(month) + timedelta(minutes=minutes)
                scheduler.clock = lambda moment=moment: moment.astimezone(UTC)
                scheduler.tick()
        if "2027-07" not in short:  # a month that keeps its day is not recorded at its start
            scheduler.clock = lambda: _month_start("2027-07").astimezone(UTC)
            scheduler.tick()
        records = _left_out_records(store, schedule)
        if sorted(records) != short[:2] or not all(
            "実行されません" in reason and "KEIRI_COMPANY_HOLIDAYS" in reason
            for reason in records.values()
        ):
            wrong.append((case, "recorded", text, rule, short[:2], records))
        # Told of the left-out months (a month's label), not of the fire times passed over.
        texts = [p["text"] for p in told if not re.search(r"\d{2}:\d{2}$", p["source"])]
        if len(texts) != len(short[:2]) or not all(
            "実行されません" in t and PLAN_ID in t for t in texts
        ):
            wrong.append((case, "told", text, rule, short[:2], texts))
        store.schedules.remove(schedule.id)
    assert shorts >= CASES // 4, f"the generator made only {shorts} changes that leave a month out"
    by_property = {what: len({w[0] for w in wrong if w[1] == what}) for what in PROPERTIES}
    assert not wrong, (
        f"cases wrong of {CASES} ({shorts} leave a month out): {by_property}; {wrong[:3]}"
    )


def test_schedule_list_warns_of_a_month_the_changed_holidays_leave_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI's list says it in Japanese, naming the month (README 予定)."""
    from typer.testing import CliRunner

    from keiri_agent.cli import app

    base = team_settings(tmp_path, keiri_require_approval="off", keiri_company_holidays=YEAR_END)
    approved_memo(base)
    request = ScheduleRequest(plan_id=PLAN_ID, rule=BusinessDayRule(n=10))
    add_schedule(base, request, created_by="sato")
    year = datetime.now(JST).year + 1  # an August ahead: 20 weekdays, 19 with 山の日
    for name, value in {
        "KEIRI_WORKSPACE_ROOT": str(base.keiri_workspace_root),
        "KEIRI_DESIGNS_DIR": str(base.keiri_designs_dir),
        "KEIRI_RUNS_DIR": str(base.keiri_runs_dir),
        "KEIRI_REQUIRE_APPROVAL": "off",
        "KEIRI_COMPANY_HOLIDAYS": f"{YEAR_END}, {year}/08/01..{year}/08/25",
    }.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["schedule", "list"])
    assert result.exit_code == 0, result.output
    assert f"{year}年8月に当たる日がなく、その月は実行されません" in result.stderr


def test_a_month_is_looked_at_once_per_schedule_not_at_every_tick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ticks come every few seconds and the two-year calendar of a rule costs tens of ms: a
    server with many schedules must not spend a core on a question whose answer for the month
    cannot change while it runs (the calendar is its settings')."""
    import keiri_agent.server.scheduler as scheduler_module

    base = team_settings(tmp_path, keiri_require_approval="off", keiri_company_holidays=YEAR_END)
    approved_memo(base)
    store = ScheduleStore.of(base)
    for n in (5, 10, 15):
        request = ScheduleRequest(plan_id=PLAN_ID, rule=BusinessDayRule(n=n), misfire="skip")
        add_schedule(base, request, created_by="sato", now=ADDED)
    asked: list[str] = []
    real = scheduler_module.months_left_out

    def counted(schedule: Schedule, now: datetime, settings: Any) -> list[date]:
        asked.append(schedule.id)
        return real(schedule, now, settings)

    monkeypatch.setattr(scheduler_module, "months_left_out", counted)
    scheduler = Scheduler(base, TaskRegistry(base), clock=lambda: ADDED, store=store)
    for minutes in range(10):
        moment = ADDED + timedelta(minutes=minutes)
        scheduler.clock = lambda moment=moment: moment.astimezone(UTC)
        scheduler.tick()
    assert sorted(asked) == sorted(s.id for s in store.schedules.all())
    # the next month is looked at again
    scheduler.clock = lambda: _month_start("2027-01").astimezone(UTC)
    scheduler.tick()
    assert len(asked) == 6
