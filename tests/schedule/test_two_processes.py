"""Two server processes on one workspace: a fire time runs once (the SQLite claim)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.schedule.conftest import (
    MEMO,
    PLAN_ID,
    WAIT_S,
    approved_memo,
    jst,
    team_settings,
    wait_for,
)

from keiri_agent.schedule import CronRule, ScheduleStore, add_schedule

ROOT = Path(__file__).resolve().parents[2]


def test_two_server_processes_run_a_fire_time_once(tmp_path: Path) -> None:
    settings = team_settings(tmp_path)
    approved_memo(settings, working=MEMO)
    schedule = add_schedule(
        settings,
        plan_id=PLAN_ID,
        rule=CronRule(expr="0 9 * * *"),
        created_by="sato",
        now=jst("2026-12-07 08:00"),
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    now = jst("2026-12-07 09:00:03").isoformat()
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.schedule.fire_worker", str(tmp_path), now, name],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    try:
        wait_for(
            lambda: (
                all((tmp_path / f"ready-{n}").exists() for n in "ab")
                or any(w.poll() is not None for w in workers)
            ),
            "both workers ready",
        )
        (tmp_path / "go").touch()
        outputs = [w.communicate(timeout=WAIT_S) for w in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    for worker, (_out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
    started = [task for out, _err in outputs for task in json.loads(out)]
    assert len(started) == 1
    (fire,) = ScheduleStore.of(settings).fires(schedule.id)
    assert (fire.outcome, fire.task_id) == ("started", started[0])
    assert fire.fire_time == jst("2026-12-07 09:00")
