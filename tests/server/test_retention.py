"""Retention (seed 002 §12): `keiri-agent gc` removes finished tasks, run logs and analysis
workspaces past the period and says what it removed; paused tasks, the runs they continue and
the runs those reuse outputs from stay, and so do the user's own files in the workspace."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.server.store import TaskStore
from keiri_agent.server.task_model import Task, TaskStatus

DAY = 86_400.0


def _task(
    store: TaskStore, task_id: str, status: TaskStatus, days_ago: float, run: str = ""
) -> Path:
    directory = store.directory(task_id)
    directory.mkdir(parents=True)
    finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days_ago * DAY))
    task = Task(id=task_id, kind="plan", directory=directory, request={}, created_at=finished)
    task.status = status
    task.finished_at = finished if task.finished else None
    task.details = {"run_id": run} if run else {}
    store.save(task)
    return directory


def _run(runs: Path, stem: str, run_id: str, days_ago: float, reuses: str = "") -> Path:
    log = runs / "plan_a" / f"{stem}.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"id": 1, "event": "plan_start", "run_id": run_id}]
    if reuses:
        lines.append(
            {"id": 2, "event": "node_complete", "outputs_file": f"{reuses}.files/n/o.json"}
        )
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (log.parent / f"{stem}.files").mkdir()
    (log.parent / f"{stem}.files" / "out.txt").write_text("x", encoding="utf-8")
    old = time.time() - days_ago * DAY
    os.utime(log, (old, old))
    return log


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    workspace, runs = tmp_path / "workspace", tmp_path / "runs"
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(workspace))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(runs))
    monkeypatch.setenv("KEIRI_RETENTION_DAYS", "30")
    store = TaskStore(workspace / "tasks")
    session = workspace / "20240101120000"
    session.mkdir(parents=True)
    (session / "report.md").write_text("old", encoding="utf-8")
    old = time.time() - 90 * DAY
    for path in (session, session / "report.md"):
        os.utime(path, (old, old))
    (workspace / "売上.csv").write_text("user data", encoding="utf-8")
    os.utime(workspace / "売上.csv", (old, old))
    return {
        "old_done": _task(store, "A" * 22, TaskStatus.SUCCESS, 40),
        "old_unverified": _task(store, "D" * 22, TaskStatus.UNVERIFIED, 40),  # finished too
        "new_done": _task(store, "B" * 22, TaskStatus.FAILED, 2),
        "old_paused": _task(store, "C" * 22, TaskStatus.WAITING_INPUT, 40, run="run_paused"),
        "old_run": _run(runs, "20240101T000000Z", "run_old", 40),
        "paused_run": _run(runs, "20240102T000000Z", "run_paused", 40, reuses="20240103T000000Z"),
        "reused_run": _run(runs, "20240103T000000Z", "run_reused", 40),
        "new_run": _run(runs, "20240104T000000Z", "run_new", 1),
        "session": session,
        "user_file": workspace / "売上.csv",
    }


def test_gc_removes_what_is_past_the_period_and_keeps_what_is_still_needed(
    layout: dict[str, Path],
) -> None:
    preview = CliRunner().invoke(app, ["gc", "--dry-run", "--json"])
    assert preview.exit_code == 0, preview.output
    planned = json.loads(preview.stdout)
    assert all(path.exists() for path in layout.values())  # --dry-run removes nothing
    result = CliRunner().invoke(app, ["gc", "--json"])
    assert result.exit_code == 0, result.output
    removed = {(item["kind"], Path(item["path"])) for item in json.loads(result.stdout)["removed"]}
    assert removed == {
        ("task", layout["old_done"]),
        ("task", layout["old_unverified"]),
        ("run", layout["old_run"]),
        ("workspace", layout["session"]),
    }
    assert {(i["kind"], Path(i["path"])) for i in planned["removed"]} == removed
    for name in ("old_done", "old_unverified", "old_run", "session"):
        assert not layout[name].exists()
    assert not layout["old_run"].with_suffix(".files").exists()
    for name in ("new_done", "old_paused", "paused_run", "reused_run", "new_run", "user_file"):
        assert layout[name].exists(), name


def test_gc_with_no_period_refuses_and_says_how(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_RETENTION_DAYS", "0")
    result = CliRunner().invoke(app, ["gc"])
    assert result.exit_code == 2
    assert "--older-than" in result.output
    assert all(path.exists() for path in layout.values())
    text = CliRunner().invoke(app, ["gc", "--older-than", "30"])
    assert text.exit_code == 0, text.output
    assert "4 件" in text.output


def test_gc_names_each_item_by_its_time_in_keiri_timezone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time an item's age counts from is shown where the person lives (JSON keeps UTC)."""
    workspace, runs = tmp_path / "workspace", tmp_path / "runs"
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(workspace))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(runs))
    store = TaskStore(workspace / "tasks")
    done = _task(store, "A" * 22, TaskStatus.SUCCESS, 40)
    record = json.loads((done / "task.json").read_text(encoding="utf-8"))
    record["finished_at"] = "2024-01-10T20:00:00.000Z"
    (done / "task.json").write_text(json.dumps(record), encoding="utf-8")
    log = _run(runs, "20240101T153000Z", "run_old", 40)
    changed = datetime(2024, 1, 1, 15, 30, 5, tzinfo=UTC).timestamp()
    os.utime(log, (changed, changed))

    text = CliRunner().invoke(app, ["gc", "--dry-run"]).stdout
    assert f"タスク: {done}（終了 2024-01-11 05:00:00 JST、" in text
    assert f"実行ログ: {log}（最終更新 2024-01-02 00:30:05 JST、" in text
    removed = json.loads(CliRunner().invoke(app, ["gc", "--dry-run", "--json"]).stdout)["removed"]
    assert {item["kind"]: item["since"] for item in removed} == {
        "task": "2024-01-10T20:00:00Z",
        "run": "2024-01-01T15:30:05Z",
    }

    monkeypatch.setenv("KEIRI_TIMEZONE", "America/New_York")
    text = CliRunner().invoke(app, ["gc", "--dry-run"]).stdout
    assert f"実行ログ: {log}（最終更新 2024-01-01 10:30:05 EST、" in text
