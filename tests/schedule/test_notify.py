"""A scheduled run that waits for a person, or cannot start, is told to the notify URL."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.schedule.conftest import Clock, jst, team_settings, wait_for
from tests.server.conftest import LiveServer

from keiri_agent.schedule import CronRule, ScheduleRequest, ScheduleStore, add_schedule
from keiri_agent.server.scheduler import Scheduler
from keiri_agent.versions import SaveNote, VersionStore

ASK = """\
apiVersion: v1
id: keiri/ask
graph:
  - {id: ask, block: ui.interactive_input, in: {mode: collect, message: 金額を入力, requirements: [{id: amount, type: number, label: 金額}]}}
"""


@pytest.fixture
def inbox() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A chat webhook on loopback: the URL, and what it was sent."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            received.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *_args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    server.shutdown()


def test_waiting_and_refused_runs_are_told(
    serve: Callable[..., LiveServer], tmp_path: Path, inbox: tuple[str, list[dict[str, Any]]]
) -> None:
    url, received = inbox
    settings = team_settings(tmp_path, keiri_notify_webhook_url=url)
    store = VersionStore.of(settings)
    version, _ = store.save("keiri/ask", ASK, SaveNote(author="sato", source="cli"))
    store.decide("keiri/ask", version.id, "approve", by="kato")
    clock = Clock(jst("2026-12-07 09:00:00"))
    asks = add_schedule(
        settings,
        ScheduleRequest(plan_id="keiri/ask", rule=CronRule(expr="1 9 * * *")),
        created_by="sato",
        now=clock(),
    )
    (Path(settings.keiri_designs_dir) / "keiri").mkdir(parents=True)
    (Path(settings.keiri_designs_dir) / "keiri" / "draft.yaml").write_text(
        ASK.replace("keiri/ask", "keiri/draft"), encoding="utf-8"
    )
    unapproved = add_schedule(
        settings,
        ScheduleRequest(plan_id="keiri/draft", rule=CronRule(expr="1 9 * * *")),
        created_by="sato",
        now=clock(),
    )
    live = serve(settings, clock=clock)
    clock.set(jst("2026-12-07 09:01:00"))
    scheduler: Scheduler = live.server.config.app.state.scheduler  # type: ignore[union-attr]
    scheduler.wake()
    wait_for(lambda: len(received) >= 2, "two notifications")
    by_status = {m["status"]: m for m in received}
    assert "入力を待っています" in by_status["waiting_input"]["text"]
    assert by_status["waiting_input"]["source"].startswith(f"予定 {asks.id}")
    assert live.registry.get(by_status["waiting_input"]["task_id"]).status == "waiting_input"
    assert "承認済みの版がない" in by_status["refused"]["text"]
    (fire,) = ScheduleStore.of(settings).fires(unapproved.id)
    assert fire.outcome == "failed"
    assert "承認済みの版がない" in (fire.error or "")
