"""A run that starts by itself calls only approved subflows, exactly as approved.

The generator (``subflow_workspaces``) writes a few hundred workspaces whose scheduled plan calls
subflows (depth 1-3, shared, in loops and under conditions), approves them, then edits, saves,
approves, withdraws, deletes and renames working copies before a schedule (ticked by the
scheduler) or a trigger (``Scheduler.start_run``, as the folder and webhook triggers call it)
fires, with approval required or not, pinned to a hash (approved or not) or to
``latest-approved``; some subflows' ids differ from their file names. Each start is run as the
server's task runs it (the request checked at the task's door, ``prepare``, then the plan runner
with the task's ``PlanEnv``), people act again between the door and the run (the registry's
``submit`` is the scheduler's hook between the two), and what ran is read back from the subflow
texts the run kept beside its log and the versions its ``plan_start`` names. The model says,
apart from the product:

- a fire runs the plan version its pin names and, for every subflow it calls at any depth, the
  version of the plan id its file was saved as: the newest approved one where approval is
  required or the plan version is approved, else the newest saved one -- whatever the working
  copies say (renamed, deleted, edited to another ``id`` unsaved), and whatever is approved or
  withdrawn after the door (main, which read the working copy's ``id``: 24 of 144 starts wrong;
  now 0);
- when a called subflow has none, the fire is refused, with a Japanese reason naming that
  subflow, at the door, before any block runs.

A pin of ``working`` (only where approval is not required) runs the working copies, the plan's
and its subflows' alike: that is what the schedule asks for.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.schedule.conftest import JST, team_settings
from tests.schedule.subflow_workspaces import PLAN_ID, Want, Workspace, vid, want, workspace

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.plan import PlanEnv, PlanRunner, load_source
from keiri_agent.schedule import CronRule, ScheduleRequest, ScheduleStore, add_schedule
from keiri_agent.server.runners import PlanRequest, prepare
from keiri_agent.server.scheduler import Scheduler
from keiri_agent.server.tasks import TaskRegistry

CASES = 12  # workspaces of a chunk
CHUNKS = 4
FIRES = 3  # fires of each case
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
START = datetime(2026, 12, 7, 9, 0, 30, tzinfo=JST)


@dataclass
class Ran:
    """What became of one start: the run's status and the subflow texts it kept, or why not."""

    label: str
    status: str  # "ran", "failed" (the task's run stopped) or "refused" (its start, recorded)
    plan_text: str | None = None
    subflows: dict[str, str] | None = None
    recorded: dict[str, str] | None = None  # plan_start's subflow_versions (plan id: hash)
    reason: str = ""


class Executor:
    """The task registry's ``submit`` for a scheduler: the request checked and run at once, as
    the server's plan task does (``prepare`` then the plan runner with the task's env), with
    ``between`` called after the door and before the run."""

    def __init__(self, settings: Settings, root: Path, between: Callable[[], None]) -> None:
        self.settings = settings
        self.registry = TaskRegistry(settings)
        self.root = root
        self.between = between
        self.ran: list[Ran] = []

    def submit(self, request: PlanRequest, uploads: Any = (), owner: str | None = None) -> Any:
        directory = self.root / f"task-{len(self.ran) + 1}"
        directory.mkdir(parents=True)
        files = self.registry._files(directory)
        runner = prepare(request, self.settings, files)  # a BlockError: the start is refused
        assert isinstance(runner, partial), runner
        env, vars, path, answers = runner.args
        assert isinstance(env, PlanEnv)
        self.between()  # approvals given and withdrawn, files edited, while the task waits
        try:  # the task runs after its start is recorded: its failure is the task's own
            with PlanRunner(env, runs_dir=directory / "runs", started_by=owner) as plan_runner:
                result = plan_runner.run(load_source(path), vars=vars, answers=answers)
        except BlockError as exc:
            self.ran.append(Ran(request.request, "failed", reason=f"{exc.message} {exc.hint}"))
            return self._task(directory)
        ran = Ran(request.request, "ran" if result.status == "success" else "failed")
        if result.log_path is not None:
            kept = result.log_path.with_suffix(".files")
            ran.plan_text = (kept / "plan.yaml").read_text(encoding="utf-8")
            folder = kept / "#subflows"
            ran.subflows = {
                p.relative_to(folder).with_suffix("").as_posix(): p.read_text(encoding="utf-8")
                for p in folder.rglob("*.yaml")
            }
            with result.log_path.open(encoding="utf-8") as log:
                start = next(e for e in map(json.loads, log) if e["event"] == "plan_start")
            ran.recorded = start.get("subflow_versions") or {}
        if result.error is not None:
            ran.reason = f"{result.error.message} {result.error.hint or ''}"
        self.ran.append(ran)
        return self._task(directory)

    def _task(self, folder: Path) -> Any:
        class _Task:
            id = f"task-{len(self.ran)}"
            directory = folder

        return _Task()


def _judge(seed: int, space: Workspace, ran: Ran, want: Want, pin: str) -> list[tuple[Any, ...]]:
    where = (seed, ran.label, pin, space.required, space.log[-6:])
    if want.plan is None:  # the plan itself may not run: refused, said in Japanese
        if ran.status == "ran":
            return [("ran without an approved plan", *where)]
        return [] if JAPANESE.search(ran.reason) else [("refused unsaid", *where, ran.reason)]
    if want.missing:
        if ran.status == "ran" or ran.subflows:
            return [("ran with an unapproved subflow", *where, want.missing)]
        if not (JAPANESE.search(ran.reason) and any(m in ran.reason for m in want.missing)):
            return [("refused without naming the subflow", *where, want.missing, ran.reason)]
        if ran.status != "refused" and pin != "working":
            return [("refusal not recorded at the start", *where, want.missing)]
        return []
    if ran.status != "ran":
        return [("refused though approved", *where, ran.reason)]
    wrong: list[tuple[Any, ...]] = []
    if vid(ran.plan_text or "") != vid(want.plan):
        wrong.append(("another plan text", *where))
    kept = ran.subflows or {}
    for sub, text in want.subflows.items():
        if sub not in kept:
            wrong.append(("subflow not kept", *where, sub))
        elif kept[sub] != text:
            approved = (
                [v for v, s in space.docs[sub].status.items() if s == "approved"]
                if pin != "working"
                else []
            )
            kind = "older approved subflow" if vid(kept[sub]) in approved else "unapproved subflow"
            wrong.append((kind, *where, sub))
    if want.recorded is not None and ran.recorded != want.recorded:
        wrong.append(("plan_start names other versions", *where))
    return wrong


def _case(seed: int, root: Path) -> tuple[int, list[tuple[Any, ...]]]:
    """One workspace and its fires; (how many starts, what went wrong)."""
    rnd = random.Random(seed)
    required = rnd.random() < 0.6
    settings = team_settings(
        root, keiri_require_approval="on" if required else "off", keiri_schedule_grace_s=3600.0
    )
    space = workspace(rnd, settings, required)
    first = space.docs[PLAN_ID].saved[0]
    unreviewed = space.save(PLAN_ID)  # a newer text, saved and never approved
    choices = ["latest-approved", first, unreviewed] + ([] if required else ["working"])
    pin = rnd.choice(choices)

    def between() -> None:  # (a working copy is read when its run starts: nothing to hold)
        for _ in range(0 if pin == "working" else rnd.choice([0, 1, 1, 2])):
            space.act(rnd)

    executor = Executor(settings, root / "tasks", between)
    registry = executor.registry
    registry.submit = executor.submit  # type: ignore[method-assign,assignment]
    clock = [START]
    scheduler = Scheduler(settings, registry, clock=lambda: clock[0])
    rule = CronRule(expr="* * * * *")
    request = ScheduleRequest(plan_id=PLAN_ID, rule=rule, calendar="none", version=pin)
    schedule = add_schedule(settings, request, created_by="sato", now=START)
    store = ScheduleStore.of(settings)
    wrong: list[tuple[Any, ...]] = []
    for index in range(FIRES):
        for _ in range(rnd.randint(1, 3)):
            space.act(rnd)
        wanted = want(space, pin)
        before = len(executor.ran)
        if rnd.random() < 0.5:  # the schedule's fire time, by the scheduler's tick
            clock[0] = START + timedelta(minutes=index + 1)
            scheduler.tick()
            fire = store.fires(schedule.id, limit=1)[0]
            if fire.outcome == "started" and wanted.recorded is not None and wanted.plan:
                ran_versions = {PLAN_ID: vid(wanted.plan), **wanted.recorded}
                if fire.versions != ran_versions:  # the schedule's history says what it ran
                    wrong.append(("fire row without its versions", seed, index, pin))
            if fire.outcome != "started":
                label = f"schedule {index}"
                executor.ran.append(Ran(label, "refused", reason=fire.error or ""))
        else:  # a trigger (a file in the watched folder, a webhook) starts the same way
            label = f"trigger {index}"
            try:
                scheduler.start_run(PLAN_ID, pin, {}, "sato", label)
            except BlockError as exc:
                executor.ran.append(Ran(label, "refused", reason=f"{exc.message} {exc.hint}"))
        assert len(executor.ran) == before + 1, (seed, index)
        wrong += _judge(seed, space, executor.ran[-1], wanted, pin)
    return len(executor.ran), wrong


def measure(seeds: range, root: Path) -> tuple[int, list[tuple[Any, ...]]]:
    starts, wrong = 0, []
    for seed in seeds:
        count, found = _case(seed, root / str(seed))
        starts += count
        wrong += found
    return starts, wrong


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_a_self_started_run_calls_only_approved_subflows(chunk: int, tmp_path: Path) -> None:
    _starts, wrong = measure(range(chunk * CASES, (chunk + 1) * CASES), tmp_path)
    kinds: dict[str, int] = {}
    for item in wrong:
        kinds[item[0]] = kinds.get(item[0], 0) + 1
    assert not wrong, f"{kinds}; first: {wrong[:3]}"
