"""A server that stops between claiming a fire time and recording its task leaves no silent gap.

The claim is what makes a fire time run once across processes; a process killed right after
it (SIGKILL, a power cut) used to leave the fire time ``started`` with no task for good: the run
never happened and nobody was told. Another tick now records the task that process had started
(found by the fire's label), or else records the fire time as failed and tells the notify URL --
once, whichever process looks -- and never starts it again on a guess.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.schedule.conftest import PLAN_ID, approved_memo, jst, team_settings

from keiri_agent.config import Settings
from keiri_agent.schedule import (
    CronRule,
    Schedule,
    ScheduleRequest,
    ScheduleStore,
    add_schedule,
)
from keiri_agent.server.jobs import JobResult
from keiri_agent.server.scheduler import UNSETTLED_AFTER_S, Scheduler, fire_label
from keiri_agent.server.tasks import TaskRegistry

FIRE = jst("2026-12-07 09:00:00")


def _daily(tmp_path: Path) -> tuple[Settings, ScheduleStore, Schedule]:
    """A schedule firing at 9:00 every day, added the day before FIRE, and its store."""
    settings = team_settings(tmp_path, keiri_require_approval="off")
    approved_memo(settings)
    schedule = add_schedule(
        settings,
        ScheduleRequest(plan_id=PLAN_ID, rule=CronRule(expr="0 9 * * *")),
        created_by="sato",
        now=FIRE - timedelta(days=1),
    )
    return settings, ScheduleStore.of(settings), schedule


def test_a_claim_a_stopped_server_left_is_recorded_as_failed_and_told_once(
    tmp_path: Path,
) -> None:
    settings, store, schedule = _daily(tmp_path)
    assert store.claim(schedule.id, FIRE, "started", now=FIRE)  # then the process was killed
    registry = TaskRegistry(settings)
    told: list[dict[str, Any]] = []
    later = FIRE + timedelta(seconds=UNSETTLED_AFTER_S + 60)
    schedulers = [Scheduler(settings, registry, clock=lambda: later, store=store) for _ in "ab"]
    for scheduler in schedulers:
        scheduler.notifier.send = told.append  # type: ignore[method-assign]

    early = Scheduler(settings, registry, clock=lambda: FIRE + timedelta(seconds=5), store=store)
    early.tick()  # moments after the claim: the claiming process may still be starting it
    assert store.fires(schedule.id)[0].outcome == "started"
    for scheduler in schedulers:  # two servers on the workspace, or two ticks
        scheduler.tick()

    (fire,) = store.fires(schedule.id)
    assert fire.outcome == "failed"
    assert fire.task_id is None
    assert "サーバーが止まった" in (fire.error or "")
    assert "schedule run-now" in (fire.error or "")
    assert len(told) == 1
    assert told[0]["text"].startswith(fire_label(schedule, FIRE, settings))
    assert registry.list() == []  # not started again on a guess


def test_the_task_a_stopped_server_had_started_is_recorded_and_nothing_told(
    tmp_path: Path,
) -> None:
    settings, store, schedule = _daily(tmp_path)
    registry = TaskRegistry(settings)
    assert store.claim(schedule.id, FIRE, "started", now=FIRE)
    label = fire_label(schedule, FIRE, settings)
    task = registry.start(
        "plan",
        {"kind": "plan", "plan": PLAN_ID, "request": label},
        lambda _job: JobResult("success"),
    )  # started; the process was killed before it recorded the task
    told: list[dict[str, Any]] = []
    later = FIRE + timedelta(seconds=UNSETTLED_AFTER_S + 60)
    scheduler = Scheduler(settings, registry, clock=lambda: later, store=store)
    scheduler.notifier.send = told.append  # type: ignore[method-assign]

    scheduler.tick()

    (fire,) = store.fires(schedule.id)
    assert (fire.outcome, fire.task_id) == ("started", task.id)
    assert told == []


@pytest.mark.parametrize("seed", range(4))
def test_the_tasks_are_listed_once_per_tick_for_every_claim_taken_over(
    seed: int, tmp_path: Path
) -> None:
    """N claims left by a stopped server (of schedules still there or removed since, their task
    started or not, on time or late): one tick settles each as its own and lists the newest
    tasks once, not once per claim (1,000 task records read N times)."""
    rng = random.Random(seed)
    settings = team_settings(tmp_path, keiri_require_approval="off")
    approved_memo(settings)
    store = ScheduleStore.of(settings)
    registry = TaskRegistry(settings)
    later = jst("2026-12-07 12:00:00")
    expected: dict[str, tuple[str, str | None]] = {}  # schedule id → outcome, task id
    told_labels: list[str] = []
    removed: list[str] = []
    times = rng.sample([(h, m) for h in range(8, 12) for m in range(0, 58, 3)], rng.randint(2, 9))
    for hour, minute in times:
        schedule = add_schedule(
            settings,
            ScheduleRequest(plan_id=PLAN_ID, rule=CronRule(expr=f"{minute} {hour} * * *")),
            created_by="sato",
            now=later - timedelta(days=1),
        )
        fire = later.replace(hour=hour, minute=minute)
        assert store.claim(schedule.id, fire, "started", now=fire)  # then the process was killed
        label = fire_label(schedule, fire, settings)
        how = rng.choice(["started", "late start", "not started", "removed"])
        if how == "removed":
            store.schedules.remove(schedule.id)
            removed.append(schedule.id)
            expected[schedule.id] = ("failed", None)
        elif how == "not started":
            expected[schedule.id] = ("failed", None)
            told_labels.append(label)
        else:
            suffix = "（停止中に過ぎた分を 1 回実行）" if how == "late start" else ""
            task = registry.start(
                "plan",
                {"kind": "plan", "plan": PLAN_ID, "request": label + suffix},
                lambda _job: JobResult("success"),
            )
            expected[schedule.id] = ("started", task.id)
    listed = [0]
    list_tasks = registry.list

    def counted(*args: Any, **kwargs: Any) -> Any:
        listed[0] += 1
        return list_tasks(*args, **kwargs)

    registry.list = counted  # type: ignore[method-assign]
    told: list[dict[str, Any]] = []
    scheduler = Scheduler(settings, registry, clock=lambda: later, store=store)
    scheduler.notifier.send = told.append  # type: ignore[method-assign]

    scheduler.tick()

    assert listed[0] == (1 if len(expected) > len(removed) else 0)  # none to look for: none
    settled = {fire.schedule_id: (fire.outcome, fire.task_id) for fire in store.fires(limit=100)}
    assert settled == expected
    assert len(told) == len(told_labels)
    for label in told_labels:  # each not started one told once, by its own label
        assert [m for m in told if m["text"].startswith(label)], label
