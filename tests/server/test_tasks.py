"""Tasks over real HTTP: list, status, result and files; downloads confined to the task's
directory; cancellation that kills the sandbox process; requests refused before a task starts."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import psutil
import pytest

from keiri_agent.config import Settings
from tests.plan.blockkit import SPEC_DIR
from tests.server.conftest import LiveServer, make_settings
from tests.support import ScriptedLLMServer

PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}
SLEEPING_CODE = "import time\nprint('start', flush=True)\ntime.sleep(60)\nprint('never')\n"


def _run_plan(live: LiveServer) -> str:
    with live.client() as client:
        response = client.post("/agent/run", json=PLAN_TASK)
    assert response.status_code == 202, response.text
    task_id = str(response.json()["task_id"])
    assert live.wait_finished(task_id) == "success"
    return task_id


def test_list_status_result_and_downloads(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    task_id = _run_plan(live)
    with live.client() as client:
        listed = client.get("/agent/tasks").json()["tasks"]
        task = client.get(f"/agent/tasks/{task_id}").json()
        downloads = {f["name"]: client.get(f["url"]) for f in task["files"]}
    assert [t["task_id"] for t in listed] == [task_id]
    assert task["status"] == "success"
    assert task["kind"] == "plan"
    assert task["progress"] == 1.0
    assert task["step"] == "finish"
    assert "重複の疑いがある請求書は 4 件" in task["answer"]
    assert task["details"]["plan_id"] == "examples/duplicate_invoice_check"
    assert task["error"] is None
    assert task["sse_url"] == f"/agent/sse?task_id={task_id}"
    assert "token" not in task  # no API key configured
    assert set(downloads) == {"重複チェック結果.xlsx", "重複チェック.md", "重複チェック.html"}
    directory = live.registry.get(task_id).directory
    for file in task["files"]:
        response = downloads[file["name"]]
        assert response.status_code == 200
        assert response.content == (directory / file["path"]).read_bytes()
        assert len(response.content) == file["size"]
        assert "attachment" in response.headers["content-disposition"]
    assert downloads["重複チェック.md"].text.startswith("# 請求書の二重計上チェック")


def _local(stamp: str, zone: str) -> str:
    when = datetime.fromisoformat(stamp).astimezone(ZoneInfo(zone))
    return f"{when:%Y-%m-%d %H:%M:%S} {when.tzname()}"


def test_task_times_stay_utc_and_come_with_the_time_people_read(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    """``created_at``/``finished_at`` keep the stored UTC value; ``local_times`` is the same
    instant in KEIRI_TIMEZONE with the zone named, what the progress page shows."""
    live = serve(make_settings(tmp_path, keiri_timezone="America/New_York"))
    with live.client() as client:
        accepted = client.post("/agent/run", json=PLAN_TASK).json()
        assert live.wait_finished(accepted["task_id"]) == "success"
        task = client.get(f"/agent/tasks/{accepted['task_id']}").json()
        (listed,) = client.get("/agent/tasks").json()["tasks"]

    assert accepted["created_at"].endswith("Z")
    assert accepted["local_times"]["created_at"] == _local(
        accepted["created_at"], "America/New_York"
    )
    for field in ("created_at", "started_at", "finished_at"):
        assert task[field].endswith("Z")
        assert task["local_times"][field] == _local(task[field], "America/New_York")
        assert task["local_times"][field].endswith((" EST", " EDT"))
    assert listed["local_times"] == task["local_times"]
    record = json.loads((live.registry.get(task["task_id"]).directory / "task.json").read_text())
    assert "local_times" not in record  # stored: UTC only


def test_tasks_are_listed_newest_first_and_limited(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    first, second = _run_plan(live), _run_plan(live)
    with live.client() as client:
        ids = [t["task_id"] for t in client.get("/agent/tasks").json()["tasks"]]
        one = client.get("/agent/tasks", params={"limit": 1}).json()["tasks"]
        bad = client.get("/agent/tasks", params={"limit": 0})
    assert ids == [second, first]
    assert [t["task_id"] for t in one] == [second]
    assert bad.status_code == 422
    assert bad.json()["code"] == "INPUT_VALIDATION_FAILED"


def test_task_ids_are_unguessable(serve: Callable[..., LiveServer], settings: Settings) -> None:
    live = serve(settings)
    ids = {_run_plan(live) for _ in range(2)}
    assert all(len(task_id) >= 22 for task_id in ids)  # token_urlsafe(16): 128 random bits
    assert len(ids) == 2


@pytest.mark.parametrize(
    "path",
    [
        "%2E%2E/task.json",
        "files/%2E%2E/%2E%2E/other",
        "%2E%2E/%2E%2E/config.py",
        "/etc/passwd",
        "files/escape.txt",
        "files/escape_dir/passwd",
    ],
)
def test_downloads_stay_inside_the_task_directory(
    serve: Callable[..., LiveServer], settings: Settings, path: str
) -> None:
    live = serve(settings)
    task_id = _run_plan(live)
    other = _run_plan(live)
    files = live.registry.get(task_id).directory / "files"
    (files / "escape.txt").symlink_to(live.registry.get(other).directory / "task.json")
    (files / "escape_dir").symlink_to("/etc")
    with live.client() as client:
        response = client.get(f"/agent/tasks/{task_id}/files/{path.replace('other', other)}")
    body = response.json()
    assert response.status_code == 403, body
    assert body["code"] == "PERMISSION_DENIED"
    assert "パス" in body["message"]
    assert body["hint"]


def test_missing_file_and_unknown_task_are_404(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    task_id = _run_plan(live)
    with live.client() as client:
        missing = client.get(f"/agent/tasks/{task_id}/files/files/none.csv")
        unknown = client.get(f"/agent/tasks/{'x' * 22}")
        malformed = client.get("/agent/tasks/..%2F..%2Fetc")
    assert missing.status_code == 404
    assert missing.json()["code"] == "FILE_NOT_FOUND"
    assert unknown.status_code == 404
    assert unknown.json()["message"] == "指定されたタスクはありません。"
    assert malformed.status_code == 404


def _processes(pids: list[int]) -> list[psutil.Process]:
    found = []
    for pid in pids:
        try:
            found.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            continue
    return found


def _name(process: psutil.Process) -> str:
    """The process's name; "" once it has ended (an action's short-lived helper may end between
    being listed and being asked)."""
    try:
        return str(process.name())
    except psutil.NoSuchProcess:  # ZombieProcess too
        return ""


def _gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.timeout(600)  # the jail's start below may take minutes on a loaded machine
def test_cancel_stops_the_running_sandbox_process(
    serve: Callable[..., LiveServer], analysis_settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"next_action": "act", "instruction": "待つ", "rationale": "試験"})
    llm_server.add_chat(json={"code": SLEEPING_CODE, "expected_outputs": []})
    live = serve(analysis_settings)
    with live.client() as client:
        body = {"kind": "analysis", "request": "売上を調べて", "files": ["sales.csv"]}
        task_id = client.post("/agent/run", json=body).json()["task_id"]
        # Includes starting the task's jail (the warm server's imports): a minute or more on a
        # loaded two-core machine.
        deadline = time.monotonic() + 180
        sandbox: list[psutil.Process] = []
        pid: int | None = None
        # Until the worker is sleeping and the jail's fork server is known: the action may show
        # up between the two reads (psutil.Process(None) would be this test's own process).
        while pid is None or not any("python" in _name(p) for p in sandbox):
            assert time.monotonic() < deadline, live.registry.get(task_id)
            executor = live.registry.get(task_id).executor
            # The running action's processes, not the spare forked for the next one.
            sandbox = _processes(executor.action_pids()) if executor is not None else []
            pid = executor.server_pid if executor is not None else None
            time.sleep(0.05)
        server = psutil.Process(pid)
        started = time.monotonic()
        cancelled = client.post(f"/agent/tasks/{task_id}/cancel")
        assert cancelled.status_code == 202
        assert cancelled.json()["cancel_requested"] is True
        assert live.wait_finished(task_id, timeout=60) == "cancelled"
        assert time.monotonic() - started < 60  # not the sandbox's own 180 s limit
        # Killed at the cancel; on a loaded machine the kernel may take a moment to reap them.
        gone_by = time.monotonic() + 30
        while not all(_gone(p) for p in [server, *sandbox]):
            assert time.monotonic() < gone_by, [p.pid for p in [server, *sandbox] if not _gone(p)]
            time.sleep(0.05)
        task = client.get(f"/agent/tasks/{task_id}").json()
        again = client.post(f"/agent/tasks/{task_id}/cancel")
    assert task["status"] == "cancelled"
    assert task["error"]["code"] == "CANCELLED"
    assert again.status_code == 409
    assert again.json()["code"] == "TASK_FINISHED"
    assert os.path.isdir(live.registry.get(task_id).directory)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"kind": "plan", "plan": "no_such_plan"}, 404, "DEPENDENCY_NOT_FOUND"),
        ({"kind": "plan", "plan": "../../etc/passwd"}, 404, "DEPENDENCY_NOT_FOUND"),
        (
            {"kind": "analysis", "request": "分析", "files": ["/etc/passwd"]},
            403,
            "PERMISSION_DENIED",
        ),
        (
            {"kind": "analysis", "request": "分析", "files": ["none.csv"]},
            400,
            "INPUT_VALIDATION_FAILED",
        ),
        ({"request": "変換して", "source": "../secret.csv"}, 403, "PERMISSION_DENIED"),
        ({"kind": "analysis", "request": "分析"}, 400, "INPUT_VALIDATION_FAILED"),  # no file
        ({"kind": "unknown", "request": "?"}, 422, "INPUT_VALIDATION_FAILED"),
        ({"request": "変換して", "extra": 1}, 422, "INPUT_VALIDATION_FAILED"),
    ],
)
def test_bad_requests_are_refused_before_a_task_starts(
    serve: Callable[..., LiveServer],
    settings: Settings,
    body: dict[str, object],
    status: int,
    code: str,
) -> None:
    live = serve(settings)
    with live.client() as client:
        response = client.post("/agent/run", json=body)
        listed = client.get("/agent/tasks").json()["tasks"]
    assert response.status_code == status, response.text
    assert response.json()["code"] == code
    assert response.json()["message"]
    assert response.json()["hint"]
    assert listed == []


def test_a_plan_run_without_answers_waits_for_input(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    with live.client() as client:
        response = client.post("/agent/run", json={**PLAN_TASK, "answers": {}})
        task_id = response.json()["task_id"]
        assert live.wait_finished(task_id) == "waiting_input"
        task = client.get(f"/agent/tasks/{task_id}").json()
    assert task["error"] is None
    assert task["files"] == []
    (waiting,) = task["details"]["waiting"]
    assert waiting["node_id"] == "collect_inputs"
    fields = {req["id"]: req["type"] for req in waiting["request"]["requirements"]}
    assert fields == {"invoice_list": "file", "sheet": "text"}
    events = live.registry.get(task_id).events_path.read_text(encoding="utf-8")
    assert '"event": "node_waiting"' in events


ASK_THEN_WAIT = """
id: ask_then_wait
graph:
  - {id: ask, block: ui.interactive_input, in: {mode: collect, message: 金額を入力, requirements: [{id: amount, type: number, label: 金額}]}}
  - {id: long, block: test.sleep, in: {seconds: 300, value: "${ask.collected_data}"}}
"""


def test_a_plan_continued_with_answers_can_be_cancelled(
    serve: Callable[..., LiveServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    designs = tmp_path / "designs"
    designs.mkdir()
    (designs / "ask_then_wait.yaml").write_text(ASK_THEN_WAIT, encoding="utf-8")
    live = serve(make_settings(tmp_path, keiri_designs_dir=designs))
    with live.client() as client:
        task_id = client.post("/agent/run", json={"kind": "plan", "plan": "ask_then_wait"}).json()[
            "task_id"
        ]
        assert live.wait_finished(task_id) == "waiting_input"
        answered = client.post(
            f"/agent/tasks/{task_id}/answers", json={"answers": {"ask": {"amount": 5}}}
        )
        assert answered.status_code == 202, answered.text
        deadline = time.monotonic() + 120
        log = live.registry.get(task_id).events_path
        while '"node_id": "long"' not in log.read_text(encoding="utf-8"):  # the long node runs
            assert time.monotonic() < deadline, live.registry.get(task_id)
            time.sleep(0.05)
        started = time.monotonic()
        cancelled = client.post(f"/agent/tasks/{task_id}/cancel")
        assert cancelled.status_code == 202, cancelled.text
        assert live.wait_finished(task_id, timeout=120) == "cancelled"
        task = client.get(f"/agent/tasks/{task_id}").json()
    assert time.monotonic() - started < 120  # the cancel, not the node's 300 s
    assert task["error"]["code"] == "CANCELLED"
    assert task["details"]["plan_status"] == "cancelled"
