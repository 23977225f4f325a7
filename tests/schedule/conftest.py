"""Fixtures for the schedule tests: a plan with an approved version and a clock tests drive."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tests.server.conftest import make_settings, serve  # noqa: F401  (the live-server fixture)

from keiri_agent.config import Settings
from keiri_agent.versions import SaveNote, VersionStore

JST = ZoneInfo("Asia/Tokyo")
WAIT_S = 120.0
PLAN_ID = "keiri/memo"
MEMO = """\
apiVersion: v1
id: keiri/memo
vars:
  count: 3
  file: ""
graph:
  - id: note
    block: report.markdown
    in:
      title: 月次メモ
      template: "確認した件数は {{ n }} 件です。{{ f }}"
      data: {n: "${vars.count}", f: "${vars.file}"}
exports:
  - {from: note.markdown, as: memo}
"""
MEMO_DRAFT = MEMO.replace("count: 3", "count: 5")  # the working copy's unapproved change


class Clock:
    """A clock the test moves; the scheduler reads it (``create_app(clock=...)``)."""

    def __init__(self, start: datetime) -> None:
        self.now = start
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self.now

    def set(self, moment: datetime) -> None:
        with self._lock:
            self.now = moment


def jst(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=JST)


def team_settings(root: Path, **overrides: Any) -> Settings:
    """Approval required; the designs folder holds the working copy of ``keiri/memo``."""
    values: dict[str, Any] = {
        "keiri_designs_dir": root / "designs",
        "keiri_require_approval": "on",
        "keiri_run_log_fsync": False,
        "keiri_schedule_tick_s": 0.1,
        **overrides,
    }
    return make_settings(root, **values)


def approved_memo(settings: Settings, working: str = MEMO_DRAFT) -> str:
    """Save and approve MEMO (by someone else), then leave ``working`` as the working copy;
    the approved version's id."""
    store = VersionStore.of(settings)
    version, _ = store.save(PLAN_ID, MEMO, SaveNote(author="sato", source="cli"))
    store.decide(PLAN_ID, version.id, "approve", by="kato")
    path = Path(settings.keiri_designs_dir) / f"{PLAN_ID}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(working, encoding="utf-8")
    return version.id


def wait_for(condition: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def plan_start(task_dir: Path) -> dict[str, Any]:
    """The plan_start event a plan task relayed (it names the version that ran)."""
    for line in (task_dir / "events.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "plan_start":
            return dict(event)
    raise AssertionError("no plan_start in the task's events")
