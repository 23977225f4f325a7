"""The scheduler inside the server: a one-minute cron runs the approved version, a restart
across a fire time runs it once (run_once) or not at all (skip)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.schedule.conftest import (
    MEMO,
    PLAN_ID,
    Clock,
    approved_memo,
    jst,
    plan_start,
    team_settings,
    wait_for,
)
from tests.server.conftest import LiveServer

from keiri_agent.config import Settings
from keiri_agent.schedule import CronRule, Fire, ScheduleRequest, ScheduleStore, add_schedule
from keiri_agent.server.scheduler import Scheduler


def _settled(settings: Settings, schedule_id: str) -> Fire | None:
    """The schedule's fire once its start is recorded (a task, or why not)."""
    fires = ScheduleStore.of(settings).fires(schedule_id)
    done = [f for f in fires if f.task_id is not None or f.outcome != "started"]
    return done[0] if done else None


def _scheduler(live: LiveServer) -> Scheduler:
    scheduler: Scheduler = live.server.config.app.state.scheduler  # type: ignore[union-attr]
    return scheduler


def test_a_one_minute_cron_runs_the_approved_version_not_the_working_copy(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = team_settings(tmp_path)
    approved = approved_memo(settings)  # the working copy now says count: 5, unapproved
    clock = Clock(jst("2026-12-07 09:00:30"))  # a Monday, a business day
    live = serve(settings, clock=clock)
    with live.client() as client:
        made = client.post(
            "/agent/schedules",
            json={"plan_id": PLAN_ID, "rule": {"kind": "cron", "expr": "* * * * *"}},
        )
        assert made.status_code == 201, made.text
        view = made.json()
        assert view["version"] == "latest-approved"
        assert view["next_fire_local"] == "2026-12-07 09:01 JST"
        assert "作業コピーに未承認の変更があります" in view["warning"]
        assert client.get("/agent/tasks").json()["tasks"] == []  # nothing before the minute

        clock.set(jst("2026-12-07 09:01:02"))
        _scheduler(live).wake()
        fire = wait_for(lambda: _settled(settings, view["id"]), "the fire")
        assert fire.outcome == "started", fire.error
        task_id = fire.task_id
        assert task_id is not None
        assert live.wait_finished(task_id) == "success"
        task = live.registry.get(task_id)
        assert "確認した件数は 3 件です。" in task.answer  # the approved text, not count: 5
        assert plan_start(task.directory)["plan_hash"] == approved
        assert task.request["version"] == approved
        listed = client.get("/agent/schedules").json()["schedules"][0]
        assert listed["recent_fires"][0]["fire_time_local"] == "2026-12-07 09:01 JST"
        assert listed["next_fire_local"] == "2026-12-07 09:02 JST"


def test_a_restart_across_a_fire_time_runs_it_once_or_skips_it(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = team_settings(tmp_path)
    approved_memo(settings, working=MEMO)
    clock = Clock(jst("2026-12-07 09:00:00"))
    first = serve(settings, clock=clock)
    start = clock()
    rule = CronRule(expr="0 10 * * *")
    once = add_schedule(
        settings, ScheduleRequest(plan_id=PLAN_ID, rule=rule), created_by="sato", now=start
    )
    skip = add_schedule(
        settings,
        ScheduleRequest(plan_id=PLAN_ID, rule=rule, misfire="skip"),
        created_by="sato",
        now=start,
    )
    ticks = _scheduler(first).ticks
    wait_for(lambda: _scheduler(first).ticks > ticks + 2, "the first server's ticks")
    first.stop()
    store = ScheduleStore.of(settings)
    assert store.fires() == []  # 10:00 had not come

    clock.set(jst("2026-12-07 11:30:00"))  # the server was down at 10:00
    second = serve(settings, clock=clock)
    scheduler = _scheduler(second)
    wait_for(lambda: _settled(settings, once.id) and _settled(settings, skip.id), "both handled")
    ticks = scheduler.ticks
    wait_for(lambda: scheduler.ticks > ticks + 5, "more ticks after the restart")
    by_schedule = {f.schedule_id: f for f in store.fires()}
    assert len(store.fires()) == 2
    assert by_schedule[once.id].outcome == "started"
    assert by_schedule[once.id].fire_time == jst("2026-12-07 10:00")
    assert by_schedule[skip.id].outcome == "skipped"
    assert by_schedule[skip.id].task_id is None
    tasks = second.registry.list(100, lambda _task: True)
    assert [t.id for t in tasks] == [by_schedule[once.id].task_id]
    assert "停止中に過ぎた分を 1 回実行" in tasks[0].request["request"]
    assert second.wait_finished(tasks[0].id) == "success"


def test_the_app_keeps_no_schedule_file_until_one_is_made(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = team_settings(tmp_path)
    live = serve(settings, clock=Clock(jst("2026-12-07 09:00:00")))
    ticks = _scheduler(live).ticks
    wait_for(lambda: _scheduler(live).ticks > ticks + 2, "ticks")
    assert not ScheduleStore.of(settings).path.exists()
