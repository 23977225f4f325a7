"""One ``keiri-agent serve`` process for test_two_processes: ``python -m
tests.schedule.fire_worker ROOT NOW NAME``. It serves ``create_app`` under uvicorn on the
workspace of ROOT (settings as ``team_settings``) with the scheduler's clock at NOW, says it is
ready, waits until a fire time of the workspace has been handled (by either process) and its
own scheduler has ticked five more times, then prints how many runs it started as JSON."""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import uvicorn
from tests.schedule.conftest import WAIT_S, team_settings

from keiri_agent.schedule import ScheduleStore
from keiri_agent.server import TaskRegistry, create_app
from keiri_agent.server.scheduler import Scheduler


def _until(condition: object, deadline: float) -> None:
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.02)


def main(root: Path, now: datetime, name: str) -> None:
    settings = team_settings(root)
    registry = TaskRegistry(settings)
    app = create_app(settings, registry=registry, clock=lambda: now)
    scheduler: Scheduler = app.state.scheduler
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    _until(lambda: server.started, deadline)
    (root / f"ready-{name}").touch()
    store = ScheduleStore.of(settings)
    _until(lambda: any(f.task_id for f in store.fires()), deadline)
    ticks = scheduler.ticks
    _until(lambda: scheduler.ticks >= ticks + 5, deadline)
    _until(lambda: not registry.runtime.live(), deadline)  # its runs have finished
    server.should_exit = True
    thread.join(WAIT_S)
    print(json.dumps({"started": scheduler.runs_started}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), datetime.fromisoformat(sys.argv[2]), sys.argv[3])
