"""A folder trigger's file row keeps the versions its run ran, as a schedule's fire row does, and
``trigger list`` (text and ``--json``) and the API's list say them as the versions page names
them (``test_continuations`` generates the runs; this is one, said).

- a store written before file rows kept versions is read and written as before;
- ``trigger list`` says the last file, what became of it and 実行した版.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from tests.schedule.conftest import PLAN_ID, approved_memo, team_settings
from tests.schedule.test_schedule_cli import runner, workspace  # noqa: F401 - a fixture
from typer.testing import Result

from keiri_agent.cli import app
from keiri_agent.schedule import ScheduleStore, Trigger

FILE = "inbox/2026-11.csv"
FILES_BEFORE = """
CREATE TABLE files (trigger_id TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
    claimed_at TEXT NOT NULL, task_id TEXT, error TEXT, PRIMARY KEY (trigger_id, path, sha256));
INSERT INTO files VALUES ('t-1', 'in/a.csv', 'aa', '2026-12-01T00:00:00Z', 'task-1', NULL);
"""


def folder_trigger(store: ScheduleStore) -> Trigger:
    """A folder trigger of ``keiri/memo`` on ``inbox``, stored."""
    trigger = Trigger(
        id="t-folder",
        kind="folder",
        plan_id=PLAN_ID,
        folder="inbox",
        created_by="sato",
        created_at=datetime(2026, 11, 30, tzinfo=UTC),
    )
    store.triggers.add(trigger)
    return trigger


def _listed(as_json: bool) -> Result:
    result = runner.invoke(app, ["trigger", "list", *(["--json"] if as_json else [])])
    assert result.exit_code == 0, result.output
    return result


def test_trigger_list_says_which_versions_the_last_file_ran(workspace: Path) -> None:  # noqa: F811
    settings = team_settings(workspace)
    plan = approved_memo(settings)
    store = ScheduleStore.of(settings)
    trigger = folder_trigger(store)
    taken = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
    assert store.claim_file(trigger.id, FILE, "c" * 64, now=taken)
    store.settle_file(trigger.id, FILE, "c" * 64, "task-1", None, {PLAN_ID: plan})

    (view,) = json.loads(_listed(True).stdout)["triggers"]
    (row,) = view["recent_files"]
    assert row["versions"] == {PLAN_ID: plan}
    assert row["versions_text"] == f"{PLAN_ID} v1（{plan[:12]}）"
    text = _listed(False).stdout
    assert f"前回: 2026-11-30 10:00 JST  {FILE}（実行開始）" in text, text
    assert f"実行した版: {PLAN_ID} v1（{plan[:12]}）" in text, text


def test_a_store_from_before_keeps_its_file_rows(tmp_path: Path) -> None:
    store = ScheduleStore.of(team_settings(tmp_path))
    store.path.parent.mkdir(parents=True)
    with sqlite3.connect(store.path) as conn:  # the table as it was before this column
        conn.executescript(FILES_BEFORE)
    (old,) = store.files("t-1")
    assert (old["task_id"], old["versions"]) == ("task-1", None)
    now = datetime(2026, 12, 2, tzinfo=UTC)
    assert store.claim_file("t-1", "in/b.csv", "bb", now=now)
    store.settle_file("t-1", "in/b.csv", "bb", "task-2", None, {PLAN_ID: "a" * 64})
    assert [row["versions"] for row in store.files("t-1")] == [None, {PLAN_ID: "a" * 64}]
