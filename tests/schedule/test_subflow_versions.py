"""The subflows of a run that starts by itself are their approved versions, not the working
copies: on the live server (a cron fire), at the command line (``schedule run-now``), and when
a paused run resumes after the working copy changed; a subflow with no approved version refuses
the fire with a recorded Japanese reason naming it. (The generated workspaces are
``test_subflow_fires``.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.schedule.conftest import Clock, jst, plan_start, team_settings, wait_for
from tests.schedule.subflow_workspaces import PLAN_ID, Call, plan_text, vid
from tests.server.conftest import LiveServer
from typer.testing import CliRunner

from keiri_agent.config import Settings
from keiri_agent.schedule import Fire, ScheduleStore
from keiri_agent.versions import SaveNote, VersionStore

SUB = "lib/tax"
DEEP = "common/check"


def _write(settings: Settings, plan_id: str, text: str) -> Path:
    path = Path(settings.keiri_designs_dir) / f"{plan_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _save(settings: Settings, plan_id: str, text: str, *, approve: bool = True) -> str:
    store = VersionStore.of(settings)
    version, _ = store.save(plan_id, text, SaveNote(author="sato", source="cli"))
    if approve:
        store.decide(plan_id, version.id, "approve", by="kato")
    _write(settings, plan_id, text)
    return version.id


def _team(settings: Settings) -> dict[str, str]:
    """keiri/close calls lib/tax in a loop, lib/tax calls common/check under a condition; all
    approved at revision 1. The texts approved, by plan id."""
    texts = {
        DEEP: plan_text(DEEP, [], 1, top=False),
        SUB: plan_text(SUB, [Call("c0", DEEP, "when")], 1, top=False),
        PLAN_ID: plan_text(PLAN_ID, [Call("c0", SUB, "loop")], 1, top=True),
    }
    for plan_id, text in texts.items():
        _save(settings, plan_id, text)
    return texts


def _kept(task_dir: Path, seen: frozenset[Path] = frozenset()) -> dict[str, str]:
    """The subflow texts the one run under ``task_dir`` (besides those ``seen``) kept."""
    (folder,) = set(task_dir.rglob("#subflows")) - seen
    return {
        p.relative_to(folder).with_suffix("").as_posix(): p.read_text(encoding="utf-8")
        for p in folder.rglob("*.yaml")
    }


def _settled(settings: Settings, schedule_id: str, count: int) -> Fire | None:
    fires = ScheduleStore.of(settings).fires(schedule_id)
    done = [f for f in fires if f.task_id is not None or f.outcome != "started"]
    return done[0] if len(done) >= count else None


@pytest.mark.parametrize("required", ["on", "off"])
def test_a_fire_calls_the_approved_subflows_whatever_the_working_copies_say(
    serve: Callable[..., LiveServer], tmp_path: Path, required: str
) -> None:
    settings = team_settings(tmp_path, keiri_require_approval=required)
    approved = _team(settings)
    _write(settings, SUB, plan_text(SUB, [Call("c0", DEEP, "when")], 7, top=False))  # edited
    deep = Path(settings.keiri_designs_dir) / f"{DEEP}.yaml"
    deep.rename(deep.with_name("check_old.yaml"))  # renamed away
    clock = Clock(jst("2026-12-07 09:00:30"))
    live = serve(settings, clock=clock)
    scheduler = live.server.config.app.state.scheduler  # type: ignore[union-attr]
    with live.client() as client:
        made = client.post(
            "/agent/schedules",
            json={
                "plan_id": PLAN_ID,
                "rule": {"kind": "cron", "expr": "* * * * *"},
                "calendar": "none",
                "version": "latest-approved",
            },
        )
        assert made.status_code == 201, made.text
        schedule_id = made.json()["id"]

        clock.set(jst("2026-12-07 09:01:02"))
        scheduler.wake()
        fire = wait_for(lambda: _settled(settings, schedule_id, 1), "the first fire")
        assert fire.outcome == "started", fire.error
        assert fire.task_id is not None
        assert live.wait_finished(fire.task_id) == "success"
        task = live.registry.get(fire.task_id)
        assert _kept(task.directory) == {SUB: approved[SUB], DEEP: approved[DEEP]}
        assert plan_start(task.directory)["subflow_versions"] == {
            SUB: vid(approved[SUB]),
            DEEP: vid(approved[DEEP]),
        }

        # A new text of the deepest subflow is saved, not approved, and the older approval is
        # withdrawn: no approved version is left, and the next fire is refused, saying why.
        _save(settings, DEEP, plan_text(DEEP, [], 2, top=False), approve=False)
        VersionStore.of(settings).decide(DEEP, vid(approved[DEEP]), "reject", by="kato")
        clock.set(jst("2026-12-07 09:02:02"))
        scheduler.wake()
        wait_for(lambda: _settled(settings, schedule_id, 2), "the second fire")
        latest = ScheduleStore.of(settings).fires(schedule_id, limit=1)[0]
        assert latest.outcome == "failed"
        assert latest.task_id is None
        reason = latest.error or ""
        assert f"サブフロー {DEEP} には承認済みの版がない" in reason, reason
        listed = client.get("/agent/schedules").json()["schedules"][0]
        assert listed["recent_fires"][0]["error"] == reason
        assert f"サブフロー {DEEP} には承認済みの版がない" in listed["warning"]  # the next one too


def test_run_now_calls_the_approved_subflows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = team_settings(tmp_path, keiri_require_approval="off")
    approved = _team(settings)
    edited = plan_text(SUB, [Call("c0", DEEP, "when")], 9, top=False)
    _write(settings, SUB, edited)
    for name, value in {
        "KEIRI_WORKSPACE_ROOT": settings.keiri_workspace_root,
        "KEIRI_DESIGNS_DIR": settings.keiri_designs_dir,
        "KEIRI_RUNS_DIR": settings.keiri_runs_dir,
        "KEIRI_REQUIRE_APPROVAL": "off",
        "KEIRI_RUN_LOG_FSYNC": "false",
    }.items():
        monkeypatch.setenv(name, str(value))
    from keiri_agent.cli import app

    runner = CliRunner()
    added = runner.invoke(
        app,
        ["schedule", "add", PLAN_ID, "--cron", "0 9 * * *", "--version", "latest-approved"],
    )
    assert added.exit_code == 0, added.output
    schedule_id = ScheduleStore.of(settings).schedules.all()[0].id
    ran = runner.invoke(app, ["schedule", "run-now", schedule_id, "--json"])
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["status"] == "success"
    runs = Path(settings.keiri_runs_dir)
    assert _kept(runs) == {SUB: approved[SUB], DEEP: approved[DEEP]}

    # A run by hand of the plan's file calls the working copies, as it always did.
    seen = frozenset(runs.rglob("#subflows"))
    manual = runner.invoke(app, ["plan", "run", str(_write(settings, PLAN_ID, approved[PLAN_ID]))])
    assert manual.exit_code == 0, manual.output
    assert _kept(runs, seen)[SUB] == edited


def test_a_paused_scheduled_run_resumes_with_the_subflow_texts_it_started_with(
    tmp_path: Path,
) -> None:
    """A fire that waits for a person's answer overnight: the subflow's working copy is edited
    and then removed before the answer comes; the resumed run (the server's: a plain env,
    ``server.plan_task.prepare_resume``) calls the approved texts its run kept."""
    from keiri_agent.plan import PlanEnv, PlanRunner, parse_source

    settings = team_settings(tmp_path, keiri_require_approval="on")
    asking = (
        "apiVersion: v1\nid: lib/ask\nvars:\n  x: 0\ngraph:\n"
        "  - id: ask\n    block: ui.interactive_input\n    in:\n      mode: collect\n"
        '      message: "件数を入力してください"\n'
        "      requirements:\n        - {id: count, type: number, label: 件数}\n"
    )
    _save(settings, "lib/ask", asking)
    plan = plan_text(PLAN_ID, [Call("c0", "lib/ask", "plain")], 1, top=True)
    _save(settings, PLAN_ID, plan)
    runs = tmp_path / "task-runs"
    env = PlanEnv.of(settings=settings).saved_subflows(parse_source(plan))
    with PlanRunner(env, runs_dir=runs) as runner:
        first = runner.run(parse_source(plan))
    assert first.status == "waiting_input", first.error
    working = _write(settings, "lib/ask", asking.replace("件数を", "金額を"))
    working.unlink()
    with PlanRunner(PlanEnv.of(settings=settings), runs_dir=runs) as runner:
        resumed = runner.resume(first.run_id, answers={"c0/ask": {"count": 3}})
    assert resumed.status == "success", resumed.error
    assert resumed.log_path is not None
    kept = resumed.log_path.with_suffix(".files") / "#subflows" / "lib/ask.yaml"
    assert kept.read_text(encoding="utf-8") == asking
