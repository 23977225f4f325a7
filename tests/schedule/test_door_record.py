"""What a self-started run's door resolved is kept, and every later start of the run keeps to it
(one of each; ``test_continuations`` generates them):

- a task cut before its run began, retried after a newer subflow version was approved, runs the
  version its first door resolved;
- an answer to a paused run whose subflow approval was withdrawn meanwhile is refused at once
  (409), naming the version and who can approve it;
- a schedule store written before fire rows kept versions is read and written as before, and a
  started fire's row says what it ran.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.schedule.conftest import team_settings
from tests.schedule.subflow_workspaces import ANSWERS, PLAN_ID, Call, plan_text
from tests.schedule.test_subflow_door import CALL, SUB_ID, _run, _save, _sub

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import PlanRunner, load_source
from keiri_agent.schedule import ScheduleStore
from keiri_agent.server.plan_task import prepare_resume
from keiri_agent.server.runners import PlanRequest, prepare
from keiri_agent.server.tasks import TaskRegistry
from keiri_agent.versions import VersionStore


def _team(settings: Settings, *, pauses: bool = False) -> tuple[str, str]:
    """keiri/close (asking first when ``pauses``) calls lib/double (id: double), both approved;
    (the plan version's hash, the subflow's)."""
    sub = _save(settings, SUB_ID, _sub(1), CALL, approve=True)
    text = plan_text(PLAN_ID, [Call("c0", CALL, "plain")], 1, top=True, pauses=pauses)
    return _save(settings, PLAN_ID, text, PLAN_ID, approve=True), sub


def _request(version: str) -> PlanRequest:
    return PlanRequest(kind="plan", plan=PLAN_ID, version=version, request="予定 テスト")


def test_a_retry_before_the_run_runs_what_the_first_door_resolved(tmp_path: Path) -> None:
    settings = team_settings(tmp_path, keiri_require_approval="on")
    plan, first = _team(settings)
    task = tmp_path / "task"
    task.mkdir()
    files = TaskRegistry(settings)._files(task)
    prepare(_request(plan), settings, files)  # the first attempt: the server stops here
    _save(settings, SUB_ID, _sub(2), CALL, approve=True)  # a newer version approved meanwhile
    runner = prepare(_request(plan), settings, files)  # the retry (``runner_for``)
    _result, start = _run(runner, tmp_path)
    assert start["subflow_versions"] == {SUB_ID: first}


def test_an_answer_after_a_withdrawn_approval_is_refused_naming_it(tmp_path: Path) -> None:
    settings = team_settings(tmp_path, keiri_require_approval="off")  # an approved plan holds
    plan, sub = _team(settings, pauses=True)
    task = tmp_path / "task"
    task.mkdir()
    files = TaskRegistry(settings)._files(task)
    env, vars, path, answers = prepare(_request(plan), settings, files).args
    with PlanRunner(env, runs_dir=files.runs, started_by="sato") as runner:
        paused = runner.run(load_source(path), vars=vars, answers=answers)
    assert paused.status == "waiting_input", paused.error
    VersionStore.of(settings).decide(SUB_ID, sub, "reject", by="kato")
    details = {"run_id": paused.run_id, "waiting": []}
    with pytest.raises(BlockError) as refused:
        prepare_resume(details, ANSWERS, settings, files)
    said = f"{refused.value.message} {refused.value.hint}"
    assert refused.value.code == ErrorCode.APPROVAL_REQUIRED
    assert sub[:12] in said, said  # the version
    assert CALL in said, said  # the subflow, as the plan calls it
    assert "承認できる人" in said, said


def test_a_fire_row_keeps_its_versions_in_a_store_from_before(tmp_path: Path) -> None:
    settings = team_settings(tmp_path)
    store = ScheduleStore.of(settings)
    store.path.parent.mkdir(parents=True)
    with sqlite3.connect(store.path) as conn:  # the table as it was before this column
        conn.execute(
            "CREATE TABLE fires (schedule_id TEXT NOT NULL, fire_time TEXT NOT NULL, "
            "claimed_at TEXT NOT NULL, outcome TEXT NOT NULL, task_id TEXT, error TEXT, "
            "PRIMARY KEY (schedule_id, fire_time))"
        )
        conn.execute(
            "INSERT INTO fires VALUES ('s-1', '2026-12-01T00:00:00Z', "
            "'2026-12-01T00:00:01Z', 'started', 'task-1', NULL)"
        )
    (old,) = store.fires("s-1")
    assert old.task_id == "task-1"
    assert old.versions is None
    fire = datetime(2026, 12, 2, tzinfo=UTC)
    assert store.claim("s-1", fire, "started", now=fire)
    ran = {PLAN_ID: "a" * 64, SUB_ID: "b" * 64}
    store.settle("s-1", fire, "started", task_id="task-2", versions=ran)
    assert store.fires("s-1", limit=1)[0].versions == ran
