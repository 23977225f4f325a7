"""Two server processes (``create_app`` under uvicorn) on one workspace: a fire time runs once
(the SQLite claim)."""

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

import keiri_agent
from keiri_agent.schedule import CronRule, ScheduleRequest, ScheduleStore, add_schedule

ROOT = Path(__file__).resolve().parents[2]


def test_two_server_processes_run_a_fire_time_once(tmp_path: Path) -> None:
    settings = team_settings(tmp_path)
    approved_memo(settings, working=MEMO)
    package = Path(keiri_agent.__file__).resolve().parents[1]  # the copy under test
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package), str(ROOT)])}
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
        # Both servers are up; the schedule appears to both at once, its 09:00 already due.
        schedule = add_schedule(
            settings,
            ScheduleRequest(plan_id=PLAN_ID, rule=CronRule(expr="0 9 * * *")),
            created_by="sato",
            now=jst("2026-12-07 08:00"),
        )
        outputs = [w.communicate(timeout=WAIT_S) for w in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    for worker, (_out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
    assert sorted(json.loads(out)["started"] for out, _err in outputs) == [0, 1]
    (fire,) = ScheduleStore.of(settings).fires(schedule.id)
    assert fire.outcome == "started"
    tasks = sorted(p.name for p in (settings.keiri_workspace_root / "tasks").iterdir())
    assert tasks == [fire.task_id]
    assert fire.fire_time == jst("2026-12-07 09:00")
