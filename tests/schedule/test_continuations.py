"""A self-started run goes on with the versions its door resolved -- or is refused, naming them.

The generator (``subflow_workspaces``, with a plan that asks a person first) writes a few hundred
workspaces whose scheduled plan calls subflows, approval required or not, the schedule pinned to
``latest-approved`` or to a version's hash. A fire's task passes its door (``prepare``: the
versions resolved once), then one of the ways a run starts again:

- ``retry``   the server was cut before the run began; ``POST .../retry`` (or the restart) runs
              the task's request again at its door (``TaskRegistry.runner_for``);
- ``answer``  the run paused for the person's answer; ``POST .../answers`` resumes it
              (``prepare_resume``, then ``PlanRunner.resume``);
- ``crash``   the run was cut after it began; the retry continues it from its log;
- ``rerun``   someone runs it again from a node (``plan rerun``).

Between the two, people edit, save, approve, withdraw, delete and rename; about a third of the
time they withdraw the approval of a version the door chose, and as often approve a newer
version of a subflow it calls. The rule (an auditor's: one run, one
set of versions, each as approved as when it began): the continuation runs exactly the versions
the door resolved -- its ``plan_start`` names them -- never newer ones approved since; where the
door held the run to approvals (approval required, or an approved plan version), a version whose
approval was withdrawn meanwhile refuses the continuation with ``APPROVAL_REQUIRED``, naming that
version and who can approve it.
"""

from __future__ import annotations

import json
import random
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.schedule.conftest import team_settings
from tests.schedule.subflow_workspaces import (
    ANSWERS,
    PLAN_ID,
    Workspace,
    vid,
    want,
    workspace,
)

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import PlanEnv, PlanRunner, RunResult, load_source
from keiri_agent.schedule import resolve_pin
from keiri_agent.server.plan_task import prepare_resume
from keiri_agent.server.runners import PlanRequest, prepare
from keiri_agent.server.tasks import TaskRegistry

CASES = 25  # workspaces of a chunk
CHUNKS = 8
KINDS = ("retry", "answer", "crash", "rerun")


def _started(result: RunResult) -> dict[str, str]:
    """The versions a run's ``plan_start`` names: plan id -> hash, the plan first."""
    assert result.log_path is not None, result.error
    with result.log_path.open(encoding="utf-8") as log:
        start = next(e for e in map(json.loads, log) if e["event"] == "plan_start")
    return {result.plan_id: start["plan_hash"], **(start.get("subflow_versions") or {})}


def _run(runner: partial[Any], runs: Path) -> RunResult:
    env, vars, path, answers = runner.args
    with PlanRunner(env, runs_dir=runs, started_by="sato") as plan_runner:
        return plan_runner.run(load_source(path), vars=vars, answers=answers)


def _again(kind: str, run_id: str, registry: TaskRegistry, request: PlanRequest, task: Path):
    """The continuation of ``kind``, as the server (or the CLI) starts it: its result."""
    settings = registry.settings
    files = registry._files(task)
    if kind == "retry":
        return _run(prepare(request, settings, files), files.runs)
    if kind == "answer":
        runner = prepare_resume({"run_id": run_id, "waiting": []}, ANSWERS, settings, files)
        env, _, answers = runner.args
        with PlanRunner(env, runs_dir=files.runs, started_by="sato") as plan_runner:
            return plan_runner.resume(run_id, answers=answers)
    with PlanRunner(PlanEnv.of(settings=settings), runs_dir=files.runs) as plan_runner:
        if kind == "crash":
            return plan_runner.resume(run_id)
        return plan_runner.rerun(run_id, "note")


def _withdraw_one(rnd: random.Random, space: Workspace, chosen: dict[str, str]) -> None:
    """Withdraw the approval of one version the door chose, when one is approved."""
    docs = {doc.plan_id: name for name, doc in space.docs.items()}
    approved = [
        (docs[plan_id], v)
        for plan_id, v in chosen.items()
        if space.docs[docs[plan_id]].status.get(v) == "approved"
    ]
    if approved:
        name, version = rnd.choice(approved)
        space.decide(name, version, "reject")


def _case(seed: int, root: Path) -> list[tuple[Any, ...]]:
    rnd = random.Random(seed)
    required = rnd.random() < 0.6
    settings = team_settings(root, keiri_require_approval="on" if required else "off")
    space = workspace(rnd, settings, required, pauses=True)
    pin = rnd.choice(["latest-approved", "latest-approved", space.docs[PLAN_ID].saved[0]])
    wanted = want(space, pin)
    if wanted.plan is None or wanted.missing or wanted.recorded is None:
        return []  # the door refuses it (``test_subflow_fires`` judges that)
    chosen = {PLAN_ID: vid(wanted.plan), **wanted.recorded}
    held = required or space.docs[PLAN_ID].status[vid(wanted.plan)] == "approved"
    registry = TaskRegistry(settings)
    task = root / "task"
    task.mkdir()
    request = PlanRequest(
        kind="plan", plan=PLAN_ID, version=resolve_pin(settings, PLAN_ID, pin), request="予定"
    )
    runner = prepare(request, settings, registry._files(task))
    kind = rnd.choice(KINDS)
    run_id = ""
    if kind != "retry":
        first = _run(runner, registry._files(task).runs)
        assert first.status == "waiting_input", first.error
        run_id = first.run_id
    for _ in range(rnd.randint(1, 3)):
        space.act(rnd)
    if rnd.random() < 0.35:
        _withdraw_one(rnd, space, chosen)
    called = [n for n, d in sorted(space.docs.items()) if n != PLAN_ID and d.plan_id in chosen]
    if called and rnd.random() < 0.35:  # a subflow fixed and approved meanwhile
        name = rnd.choice(called)
        space.decide(name, space.save(name), "approve")
    lost = [
        (plan_id, v)
        for plan_id, v in chosen.items()
        if {doc.plan_id: doc for doc in space.docs.values()}[plan_id].status[v] != "approved"
    ]
    where = (seed, kind, pin, required, space.log[-5:])
    try:
        result = _again(kind, run_id, registry, request, task)
    except BlockError as exc:
        said = f"{exc.message} {exc.hint}"
        if not (held and lost):
            return [("refused though its versions stand", *where, said)]
        named = any(v[:12] in said for _, v in lost) and "承認できる人" in said
        if exc.code != ErrorCode.APPROVAL_REQUIRED or not named:
            return [("refusal does not name what to approve", *where, said)]
        return []
    if result.log_path is None:
        return [("no run", *where, result.error)]
    if held and lost:
        return [("went on with a withdrawn version", *where, lost)]
    if _started(result) != chosen:
        return [("ran other versions than its door resolved", *where)]
    return []


def measure(seeds: range, root: Path) -> list[tuple[Any, ...]]:
    wrong: list[tuple[Any, ...]] = []
    for seed in seeds:
        wrong += _case(seed, root / str(seed))
    return wrong


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_a_continuation_runs_what_its_door_resolved(chunk: int, tmp_path: Path) -> None:
    wrong = measure(range(chunk * CASES, (chunk + 1) * CASES), tmp_path)
    kinds: dict[str, int] = {}
    for item in wrong:
        kinds[item[0]] = kinds.get(item[0], 0) + 1
    assert not wrong, f"{kinds}; first: {wrong[:3]}"
