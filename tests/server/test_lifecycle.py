"""A server that stops and starts again, over real HTTP: a conversion or an analysis cut by the
stop is run again by ``POST /agent/tasks/{id}/retry`` on the restarted server, with the files
uploaded with its request; while the server stops, new work (a run, answers, a retry) is
refused with 503 and changes nothing, and the tasks already there are left as they were.
(A plan task cut by a stop continues by itself after the restart: ``test_restart``.)"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.config import Settings
from keiri_agent.events import read_events
from tests.plan.blockkit import SPEC_DIR
from tests.server.conftest import TASK_TIMEOUT_S, LiveServer, make_settings
from tests.support import ScriptedLLMServer, prompt_contains

SALES_CSV = "月,売上\n4月,120\n5月,180\n"  # 売上 sums to 300
UPLOAD = {"files": ("売上.csv", SALES_CSV.encode("utf-8"), "text/csv")}
JSON_JOB = {
    "action": "convert",
    "target_format": "json",
    "output_name": "sales",
    "summary_ja": "売上表を JSON にします。",
}
CUT_S = 600.0  # an LLM reply the stop cuts short
ACT = {"next_action": "act", "instruction": "売上を合計する", "rationale": "合計が必要"}
TOTAL_CODE = "print(int(df['売上'].sum()))\n"
FINALIZE = {"next_action": "finalize", "rationale": "合計を出した"}
REPORT = {
    "title": "売上の合計",
    "conclusion": "4月と5月の売上の合計は 300 です。",
    "evidence": ["合計 300"],
    "sections": [],
}


def SAME_ORIGIN(live: LiveServer) -> dict[str, str]:  # noqa: N802 - reads as a constant
    """The header the progress page's uploads carry (CSRF: server/csrf.py)."""
    return {"Origin": live.url}


def _submit(live: LiveServer, request: dict[str, Any]) -> str:
    with live.client() as client:
        response = client.post(
            "/agent/run",
            data={"request": json.dumps(request, ensure_ascii=False)},
            files=UPLOAD,
            headers=SAME_ORIGIN(live),  # multipart to a server without keys: its own page
        )
    assert response.status_code == 202, response.text
    return str(response.json()["task_id"])


def _until(condition: Callable[[], bool], what: str, timeout: float = TASK_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _cut_by_a_stop(live: LiveServer, task_id: str) -> dict[str, Any]:
    """Stop the server while the task runs; the task as a restarted server shows it."""
    live.stop()
    with live.registry.get(task_id).events_path.open(encoding="utf-8") as log:
        last = json.loads(log.readlines()[-1])
    assert f"POST /agent/tasks/{task_id}/retry でやり直せます" in last["msg"]
    return live.registry.get(task_id).to_dict()


def _retry(live: LiveServer, task_id: str, timeout: float = TASK_TIMEOUT_S) -> dict[str, Any]:
    with live.client() as client:
        response = client.post(f"/agent/tasks/{task_id}/retry")
        assert response.status_code == 202, response.text
        assert response.json()["task_id"] == task_id  # the same task goes on
        live.wait_finished(task_id, timeout=timeout)
        task: dict[str, Any] = client.get(f"/agent/tasks/{task_id}").json()
    return task


def test_an_interrupted_conversion_is_retried_with_its_uploads(
    serve: Callable[..., LiveServer], tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=JSON_JOB, delay=CUT_S)
    settings = make_settings(tmp_path, keiri_shutdown_timeout_s=0)
    first = serve(settings)
    task_id = _submit(first, {"request": "売上表を JSON にして"})
    _until(lambda: len(llm_server.requests) == 1, "the conversion never asked the model")

    cut = _cut_by_a_stop(first, task_id)

    assert cut["status"] == "interrupted"
    assert cut["error"] is None
    assert cut["request"]["uploads"] == ["売上.csv"]
    llm_server.add_chat(json=JSON_JOB)
    restarted = serve(settings)
    task = _retry(restarted, task_id)
    assert task["status"] == "success", task["error"]
    assert task["interruptions"] == 1
    assert [f["name"] for f in task["files"]] == ["sales.json"]
    with restarted.client() as client:
        converted = client.get(task["files"][0]["url"]).json()
    assert converted == [
        {"月": "4月", "売上": 120},
        {"月": "5月", "売上": 180},
    ]  # the upload's rows
    assert not (restarted.registry.get(task_id).directory / "uploads").exists()  # finished: gone


@pytest.mark.timeout(900)  # the task's jail starts twice, minutes on a loaded machine
def test_an_interrupted_analysis_is_retried_with_its_uploads(
    serve: Callable[..., LiveServer], public_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=ACT, delay=CUT_S)
    settings = make_settings(public_dir, keiri_shutdown_timeout_s=0)
    first = serve(settings)
    task_id = _submit(first, {"kind": "analysis", "request": "売上の合計は？"})
    _until(lambda: len(llm_server.requests) == 1, "the analysis never asked the model")

    cut = _cut_by_a_stop(first, task_id)

    assert cut["status"] == "interrupted"
    assert cut["request"]["uploads"] == ["売上.csv"]
    llm_server.add_chat(json=ACT, when=prompt_contains("5月"))  # it sees the uploaded table
    llm_server.add_chat(json={"code": TOTAL_CODE, "expected_outputs": []})
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json=REPORT)
    restarted = serve(settings)
    task = _retry(restarted, task_id, timeout=600)
    assert task["status"] == "success", task["error"]
    assert task["answer"].endswith("4月と5月の売上の合計は 300 です。")
    events = read_events(restarted.registry.get(task_id).events_path)
    # The sandbox computed the total from the uploaded file.
    assert [e.stdout.strip() for e in events if e.event == "code_exec"] == ["300"]  # type: ignore[attr-defined]
    assert llm_server.pending() == 0


SLEEPER = """
id: sleeper
graph:
  - {id: long, block: test.sleep, in: {seconds: 300, value: 1}}
"""


@pytest.fixture
def stopping_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """One task at a time, a long shutdown timeout, and a plan whose node runs for minutes."""
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    designs = tmp_path / "designs"
    designs.mkdir()
    (designs / "sleeper.yaml").write_text(SLEEPER, encoding="utf-8")
    return make_settings(
        tmp_path,
        keiri_designs_dir=designs,
        keiri_max_running_tasks=1,
        keiri_shutdown_timeout_s=600,
    )


def _listing(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b""
        for p in sorted(folder.rglob("*"))
        if p.name != "lease"
    }


def test_new_work_is_refused_with_503_while_the_server_stops(
    serve: Callable[..., LiveServer], stopping_settings: Settings
) -> None:
    live = serve(stopping_settings)
    with live.client() as client:
        waiting = client.post(
            "/agent/run", json={"kind": "plan", "plan": "duplicate_invoice_check", "answers": {}}
        ).json()["task_id"]
        assert live.wait_finished(waiting) == "waiting_input"
        running = client.post("/agent/run", json={"kind": "plan", "plan": "sleeper"}).json()
    queued = live.registry.get(_submit(live, {"request": "売上表を JSON にして"})).to_dict()
    assert queued["status"] == "queued"  # a conversion behind the running task
    log = live.registry.get(running["task_id"]).events_path
    _until(lambda: '"node_id": "long"' in log.read_text(encoding="utf-8"), "the node never ran")

    live.lifecycle.begin_shutdown()  # what SIGTERM starts; the node has 600 s to finish

    _until(lambda: live.registry.get(queued["task_id"]).status == "interrupted", "not drained")
    interrupted = live.registry.get(queued["task_id"]).directory
    (interrupted / "files").mkdir()
    (interrupted / "files" / "途中.json").write_text("[", encoding="utf-8")  # a partial result
    before = {t: _listing(live.registry.get(t).directory) for t in (waiting, queued["task_id"])}
    request = {"request": json.dumps({"request": "JSON にして"})}
    with live.client() as client:
        refused = {
            "run": client.post("/agent/run", json={"request": "売上表を JSON にして"}),
            "run with a file": client.post(
                "/agent/run", data=request, files=UPLOAD, headers=SAME_ORIGIN(live)
            ),
            "answers": client.post(
                f"/agent/tasks/{waiting}/answers",
                data={"request": json.dumps({"answers": {"collect_inputs": {"sheet": "1"}}})},
                files=UPLOAD,
                headers=SAME_ORIGIN(live),
            ),
            "retry": client.post(f"/agent/tasks/{queued['task_id']}/retry"),
        }
        listed = client.get("/agent/tasks").json()["tasks"]
        still = client.get(f"/agent/tasks/{running['task_id']}").json()

    for what, response in refused.items():
        assert response.status_code == 503, (what, response.text)
        body = response.json()
        assert body["code"] == "SERVER_STOPPING", what
        assert "停止処理中" in body["message"]
        assert "再起動" in body["hint"]
        assert response.headers["Retry-After"] == "10", what
    assert len(listed) == 3  # no task was made
    assert still["status"] == "running"  # the running task goes on; reading is still served
    statuses = {t["task_id"]: t["status"] for t in listed}
    assert statuses[waiting] == "waiting_input"
    assert statuses[queued["task_id"]] == "interrupted"
    after = {t: _listing(live.registry.get(t).directory) for t in (waiting, queued["task_id"])}
    assert after == before  # nothing stored, nothing removed
    with live.client() as client:  # end the drain: the sleeping node stops at its next check
        assert client.post(f"/agent/tasks/{running['task_id']}/cancel").status_code == 202
    _until(lambda: live.lifecycle.stopped, "the drain did not end")
    assert live.registry.get(running["task_id"]).status == "cancelled"


def test_a_retry_refused_by_a_full_queue_leaves_the_interrupted_task_as_it_was(
    serve: Callable[..., LiveServer],
    llm_server: ScriptedLLMServer,
    stopping_settings: Settings,  # after llm_server: the settings point at it
) -> None:
    llm_server.add_chat(json=JSON_JOB, delay=CUT_S)
    settings = stopping_settings.model_copy(
        update={"keiri_shutdown_timeout_s": 0, "keiri_max_queued_tasks": 1}
    )
    first = serve(settings)
    cut = _submit(first, {"request": "売上表を JSON にして"})
    _until(lambda: len(llm_server.requests) == 1, "the conversion never asked the model")
    _cut_by_a_stop(first, cut)
    folder = first.registry.get(cut).directory
    (folder / "files").mkdir(exist_ok=True)
    (folder / "files" / "途中.json").write_text("[", encoding="utf-8")  # a partial result
    before = _listing(folder)
    restarted = serve(settings)
    with restarted.client() as client:
        busy = [client.post("/agent/run", json={"kind": "plan", "plan": "sleeper"}).json()]
        busy.append(client.post("/agent/run", json={"kind": "plan", "plan": "sleeper"}).json())
        assert [t["status"] for t in busy] == ["running", "queued"]  # the queue is full

        refused = client.post(f"/agent/tasks/{cut}/retry")

        assert refused.status_code == 429, refused.text
        assert client.get(f"/agent/tasks/{cut}").json()["status"] == "interrupted"
        assert _listing(folder) == before  # the partial result and the upload are still there
        for task in busy:
            assert client.post(f"/agent/tasks/{task['task_id']}/cancel").status_code == 202
