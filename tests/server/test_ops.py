"""What an operator watches: liveness, readiness, Prometheus metrics, and JSON logs that parse
line by line, carry request and task ids, hold an internal error's traceback and no key."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from keiri_agent.sandbox.cgroups import CgroupTree
from keiri_agent.sandbox.layers import LIMIT_NAMES
from keiri_agent.server.ops import readiness
from keiri_agent.server.tasks import TaskRegistry
from tests.server.conftest import LiveServer, make_settings
from tests.server.service import ServerProcess

PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}
KEY = "ops-test-key-0123456789"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_health_readiness_and_metrics_answer(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_api_key=KEY))
    admin = {"Authorization": f"Bearer {KEY}"}
    with live.client() as client:
        health = client.get("/healthz")  # no key needed
        ready = client.get("/readyz")
        refused = client.get("/metrics")
        task_id = client.post("/agent/run", json=PLAN_TASK, headers=admin).json()["task_id"]
        assert live.wait_finished(task_id) == "success"
        metrics = client.get("/metrics", headers=admin)
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    assert ready.status_code == 200, ready.text
    assert ready.json()["status"] == "ready"
    assert set(ready.json()["checks"]) == {"tasks_dir", "runs_dir", "sandbox", "accepting"}
    # This machine's own answer (none as root on the CI machine, both cgroup limits otherwise).
    assert ready.json()["not_enforced"] == [
        {"property": name, "limit": LIMIT_NAMES[name], "reason": reason}
        for name, reason in CgroupTree().plan().unenforced().items()
    ]
    assert refused.status_code == 401
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain")
    samples = _samples(metrics.text)
    assert samples[("keiri_tasks_settled_total", (("kind", "plan"), ("status", "success")))] == 1
    assert samples[("keiri_task_queue_length", ())] == 0
    assert samples[("keiri_task_duration_seconds_count", (("kind", "plan"),))] == 1
    assert samples[("keiri_http_requests_total", (("method", "POST"), ("status", "202")))] == 1


def test_readiness_names_a_directory_it_cannot_write(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    blocker = tmp_path / "runs-is-a-file"
    blocker.write_text("x", encoding="utf-8")
    settings = make_settings(tmp_path).model_copy(update={"keiri_runs_dir": blocker})
    live = serve(settings)
    with live.client() as client:
        ready = client.get("/readyz")
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["runs_dir"]["ok"] is False
    assert str(blocker) in checks["runs_dir"]["problem"]
    assert checks["tasks_dir"]["ok"] is True


def test_readiness_names_each_sandbox_limit_not_enforced_and_stays_ready(
    tmp_path: Path,
) -> None:
    # A machine as most current distributions set it up: cgroup v2 only, this process in a
    # session scope whose memory and pids cannot be enabled for children (see test_cgroups).
    own = "/user.slice/user-1000.slice/session-3.scope"
    scope = tmp_path / "cgroup" / own.lstrip("/")
    scope.mkdir(parents=True)
    (tmp_path / "cgroup" / "cgroup.controllers").write_text("cpu io memory pids\n")
    (scope / "cgroup.controllers").write_text("memory pids\n")
    (scope / "cgroup.subtree_control").write_text("\n")
    membership = tmp_path / "proc-self-cgroup"
    membership.write_text(f"0::{own}\n")
    registry = TaskRegistry(make_settings(tmp_path))

    report = readiness(registry, CgroupTree(root=tmp_path / "cgroup", membership=membership))

    assert report["status"] == "ready", report
    assert [(item["property"], item["limit"]) for item in report["not_enforced"]] == [
        ("memory_cgroup", "アクションごとのメモリ上限（cgroup）"),
        ("pids_cgroup", "アクションごとのプロセス・スレッド数の上限（cgroup）"),
    ]
    for item, controller in zip(report["not_enforced"], ("memory", "pids"), strict=True):
        assert item["reason"] == (
            f"このプロセスの cgroup v2（{scope}）では {controller} が子の cgroup に"
            "有効化されていません（cgroup.subtree_control。プロセスのいる cgroup では、"
            "階層のルート以外は有効化できません）"
        )


@pytest.mark.timeout(600)
def test_json_logs_carry_ids_and_an_internal_errors_traceback(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace"),
        "KEIRI_RUNS_DIR": str(tmp_path / "runs"),
        "KEIRI_API_KEY": KEY,
    }
    server = ServerProcess(tmp_path, env)
    server.env["KEIRI_LOG_FORMAT"] = "json"
    server.start()
    admin = {"Authorization": f"Bearer {KEY}"}
    try:
        with server.client(headers=admin) as client:
            task_id = client.post("/agent/run", json=PLAN_TASK).json()["task_id"]
            task = server.wait_status(task_id, lambda s: s == "success", headers=admin)
            # A task record the server cannot read as a file: an unexpected failure.
            broken = secrets.token_urlsafe(16)
            (tmp_path / "workspace" / "tasks" / broken / "task.json").mkdir(parents=True)
            failed = client.get(f"/agent/tasks/{broken}")
            client.get(task["files"][0]["url"], params={"token": task["token"]})
    finally:
        server.stop()
    assert failed.status_code == 500
    assert failed.json()["code"] == "INTERNAL_ERROR"
    request_id = failed.headers["x-request-id"]
    assert request_id in failed.json()["hint"]
    records = server.log_records()  # every line is one JSON object
    assert all(
        {"time", "level", "logger", "message", "request_id", "task_id"} <= set(r) for r in records
    )
    assert any(r["task_id"] == task_id and r["logger"].startswith("keiri_agent") for r in records)
    (error,) = [r for r in records if r["request_id"] == request_id and r["level"] == "error"]
    assert "IsADirectoryError" in error["traceback"]
    text = server.log_path.read_text(encoding="utf-8")
    assert KEY not in text
    assert task["token"] not in text
