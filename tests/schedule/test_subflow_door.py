"""The three ways a self-started run's subflows went wrong before (``test_subflow_fires``
generates them; these are one of each, at the task's door -- ``prepare`` -- and its run):

- a subflow whose ``id`` is not its file's name (``lib/double.yaml`` says ``id: double``) has
  its versions under its id: a plan calling ``lib/double`` runs ``double``'s approved version;
- with approval off, a schedule pinned to a version nobody approved runs it, and its subflows'
  newest saved versions: it is not refused for the approval of a subflow;
- an approval withdrawn, or a newer version approved, between the door and the run changes
  nothing: the run calls the versions its door resolved and ``plan_start`` says them, with the
  approvals as they stood at the door.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.schedule.conftest import team_settings
from tests.schedule.subflow_workspaces import PLAN_ID, Call, plan_text

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import PlanEnv, PlanRunner, RunResult, load_source
from keiri_agent.server.runners import PlanRequest, prepare
from keiri_agent.server.tasks import TaskRegistry
from keiri_agent.versions import SaveNote, VersionStore

CALL = "lib/double"
SUB_ID = "double"


def _save(settings: Settings, plan_id: str, text: str, file: str, *, approve: bool) -> str:
    store = VersionStore.of(settings)
    version, _ = store.save(plan_id, text, SaveNote(author="sato", source="cli"))
    if approve:
        store.decide(plan_id, version.id, "approve", by="kato")
    path = Path(settings.keiri_designs_dir) / f"{file}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return version.id


def _sub(revision: int, sub_id: str = SUB_ID) -> str:
    return plan_text(sub_id, [], revision, top=False)


def _team(
    settings: Settings, sub_id: str = SUB_ID, *, approve_plan: bool = True, approve_sub: bool = True
) -> str:
    """keiri/close calls lib/double (id: ``sub_id``) in a loop; the plan version's hash."""
    _save(settings, sub_id, _sub(1, sub_id), CALL, approve=approve_sub)
    plan = plan_text(PLAN_ID, [Call("c0", CALL, "loop")], 1, top=True)
    return _save(settings, PLAN_ID, plan, PLAN_ID, approve=approve_plan)


def _door(settings: Settings, version: str, root: Path) -> partial[Any]:
    """The task's door: the request checked (its refusal raised), the runner it would run."""
    directory = root / "task"
    directory.mkdir(parents=True)
    files = TaskRegistry(settings)._files(directory)
    request = PlanRequest(kind="plan", plan=PLAN_ID, version=version, request="予定 テスト")
    runner = prepare(request, settings, files)
    assert isinstance(runner, partial)
    return runner


def _run(runner: partial[Any], root: Path) -> tuple[RunResult, dict[str, Any]]:
    env, vars, path, answers = runner.args
    assert isinstance(env, PlanEnv)
    with PlanRunner(env, runs_dir=root / "runs", started_by="sato") as plan_runner:
        result = plan_runner.run(load_source(path), vars=vars, answers=answers)
    assert result.status == "success", result.error
    assert result.log_path is not None
    with result.log_path.open(encoding="utf-8") as log:
        start = next(e for e in map(json.loads, log) if e["event"] == "plan_start")
    return result, start


def _kept(result: RunResult) -> str:  # (what the run called, by the name it was called)
    assert result.log_path is not None
    kept = result.log_path.with_suffix(".files") / "#subflows" / f"{CALL}.yaml"
    return kept.read_text(encoding="utf-8")


@pytest.mark.parametrize("required", ["on", "off"])
def test_a_subflow_is_found_by_the_id_its_file_says(tmp_path: Path, required: str) -> None:
    settings = team_settings(tmp_path, keiri_require_approval=required)
    version = _team(settings)
    result, start = _run(_door(settings, version, tmp_path), tmp_path)
    assert _kept(result) == _sub(1)
    (sub,) = VersionStore.of(settings).versions(SUB_ID)
    assert start["subflow_versions"] == {SUB_ID: sub.id}


def test_a_subflow_without_a_version_under_its_id_is_refused_naming_the_call_and_the_id(
    tmp_path: Path,
) -> None:
    settings = team_settings(tmp_path, keiri_require_approval="on")
    version = _team(settings, approve_sub=False)
    with pytest.raises(BlockError) as refused:
        _door(settings, version, tmp_path)
    error = refused.value
    assert error.code == ErrorCode.APPROVAL_REQUIRED
    assert f"サブフロー {CALL} には承認済みの版がない" in error.message
    assert f"plan approve {SUB_ID} v1" in (error.hint or "")
    assert (error.details["call"], error.details["plan_id"]) == (CALL, SUB_ID)


def test_approval_off_a_pinned_unreviewed_version_calls_the_newest_saved_subflows(
    tmp_path: Path,
) -> None:
    settings = team_settings(tmp_path, keiri_require_approval="off")
    version = _team(settings, CALL, approve_plan=False, approve_sub=False)
    _save(settings, CALL, _sub(2, CALL), CALL, approve=False)  # newer, saved, not reviewed
    result, start = _run(_door(settings, version, tmp_path), tmp_path)
    assert _kept(result) == _sub(2, CALL)
    assert start.get("approval") is None


@pytest.mark.parametrize("change", ["withdrawn", "newer approved"])
def test_an_approval_changed_between_the_door_and_the_run_changes_nothing(
    tmp_path: Path, change: str
) -> None:
    settings = team_settings(tmp_path, keiri_require_approval="on")
    version = _team(settings, CALL)
    store = VersionStore.of(settings)
    (door_sub,) = store.versions(CALL)
    runner = _door(settings, version, tmp_path)
    if change == "withdrawn":  # the plan's and the subflow's approvals, after the door
        store.decide(PLAN_ID, version, "reject", by="kato")
        store.decide(CALL, door_sub.id, "reject", by="kato")
    else:
        _save(settings, CALL, _sub(2, CALL), CALL, approve=True)
    result, start = _run(runner, tmp_path)
    assert _kept(result) == _sub(1, CALL)
    assert start["subflow_versions"] == {CALL: door_sub.id}
    assert start["plan_hash"] == version
    assert start["approval"] is not None
    assert start["approval"]["decision"] == "approve"
