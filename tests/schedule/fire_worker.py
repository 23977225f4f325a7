"""One server process's scheduler for test_two_processes: ``python -m tests.schedule.fire_worker
ROOT NOW NAME``. It builds the server's task registry and scheduler on the workspace of ROOT
(settings as ``team_settings``) with its clock at NOW, says it is ready, waits for the test's
go, ticks, waits for the runs it started, and prints their task ids as JSON."""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path

from tests.schedule.conftest import WAIT_S, team_settings

from keiri_agent.server import TaskRegistry
from keiri_agent.server.scheduler import Scheduler

TICKS = 20


def main(root: Path, now: datetime, name: str) -> None:
    settings = team_settings(root)
    registry = TaskRegistry(settings)
    scheduler = Scheduler(settings, registry, clock=lambda: now)
    (root / f"ready-{name}").touch()
    deadline = time.monotonic() + WAIT_S
    while not (root / "go").exists():  # both processes tick at once
        if time.monotonic() > deadline:
            raise SystemExit("no go")
        time.sleep(0.01)
    started = [task_id for _ in range(TICKS) for task_id in scheduler.tick()]
    for task_id in started:
        while registry.get(task_id).active and time.monotonic() < deadline:
            time.sleep(0.05)
    registry.runtime.close()
    print(json.dumps(started))


if __name__ == "__main__":
    main(Path(sys.argv[1]), datetime.fromisoformat(sys.argv[2]), sys.argv[3])
