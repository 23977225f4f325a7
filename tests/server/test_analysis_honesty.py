"""Analysis tasks through the API never pass an unsupported report off as a success (issue 33).

A report after code runs that showed nothing (no output, or a failed run) ends the task with the
finished status ``unverified``: ``details.grounded`` is false, the answer opens with what was not
backed, SSE's ``done`` says ``unverified``, the task list and the metrics count it as such and it
cannot be cancelled or retried. A report backed by a run that printed its figures is a success
with ``details.grounded`` true. The scripted LLM plays the model; the code runs in the real
sandbox.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from keiri_agent.agents.analysis.honesty import (
    UNGROUNDED_NOTE,
    UNVERIFIED_HINT,
    UNVERIFIED_MESSAGE,
)
from keiri_agent.config import Settings
from tests.server.conftest import LiveServer, events_of, read_messages
from tests.support import ScriptedLLMServer

# Sandbox runs inside a server task: slow on a loaded two-core machine.
pytestmark = pytest.mark.timeout(600)

ANALYSIS = {"kind": "analysis", "request": "売上の合計は？", "files": ["sales.csv"]}
ACT = {"next_action": "act", "instruction": "売上を合計する", "rationale": "集計が必要"}
FINALIZE = {"next_action": "finalize", "rationale": "要求を満たした"}
REPORT = {
    "title": "売上の合計",
    "conclusion": "売上の合計は 999,999 円でした。",
    "evidence": ["合計 999,999 円"],
    "sections": [],
    "suggestions": [],
}


def _script(llm_server: ScriptedLLMServer, code: str, conclusion: str) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json={"code": code, "expected_outputs": []})
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "conclusion": conclusion})


def _run(live: LiveServer) -> dict[str, Any]:
    with live.client() as client:
        response = client.post("/agent/run", json=ANALYSIS)
        assert response.status_code == 202, response.text
        task_id = response.json()["task_id"]
        live.wait_finished(task_id, timeout=300)
        task: dict[str, Any] = client.get(f"/agent/tasks/{task_id}").json()
        return task


def _settled(metrics: str, status: str) -> float:
    labels = {"kind": "analysis", "status": status}
    return sum(
        sample.value
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
        if sample.name == "keiri_tasks_settled_total" and sample.labels == labels
    )


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("total = df['売上'].sum()\n", id="a-run-without-output"),
        pytest.param("print(df['存在しない列'].sum())\n", id="a-failed-run"),
    ],
)
def test_a_report_no_run_with_output_backs_ends_unverified_not_success(
    serve: Callable[..., LiveServer],
    analysis_settings: Settings,
    llm_server: ScriptedLLMServer,
    code: str,
) -> None:
    _script(llm_server, code, "売上の合計は 999,999 円でした。")
    live = serve(analysis_settings)

    task = _run(live)

    assert task["status"] == "unverified", task
    assert task["error"] is None
    assert task["progress"] == 1.0
    assert task["details"]["grounded"] is False
    assert task["details"]["code_runs"] == 1
    assert task["details"]["unverified"] == {
        "code": "RESULT_UNVERIFIED",
        "message": UNVERIFIED_MESSAGE,
        "hint": UNVERIFIED_HINT,
    }
    # The answer does not read as a plain success: it opens with what was not backed.
    assert task["answer"].startswith(UNGROUNDED_NOTE)
    assert task["answer"].endswith("売上の合計は 999,999 円でした。")
    assert [f["name"] for f in task["files"]] == ["report.md"]  # the report is still there
    task_id = task["task_id"]
    with live.client() as client:
        with client.stream("GET", f"/agent/sse?task_id={task_id}") as sse:
            events = events_of(read_messages(sse))
        listed = {t["task_id"]: t["status"] for t in client.get("/agent/tasks").json()["tasks"]}
        metrics = client.get("/metrics").text
        cancel = client.post(f"/agent/tasks/{task_id}/cancel")
        retry = client.post(f"/agent/tasks/{task_id}/retry")
    (done,) = [m for m in events if m.event == "done"]
    assert done.json()["status"] == "unverified"  # the terminal event never says success
    warnings = [m.json()["msg"] for m in events if m.event == "log"]
    assert UNVERIFIED_MESSAGE in warnings
    assert listed[task_id] == "unverified"
    assert _settled(metrics, "unverified") == 1
    assert _settled(metrics, "success") == 0
    assert (cancel.status_code, cancel.json()["code"]) == (409, "TASK_FINISHED")  # finished
    assert (retry.status_code, retry.json()["code"]) == (409, "TASK_NOT_INTERRUPTED")


def test_a_report_backed_by_printed_figures_is_a_grounded_success(
    serve: Callable[..., LiveServer], analysis_settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    _script(llm_server, "print(df['売上'].sum())\n", "売上の合計は 300 円でした。")
    live = serve(analysis_settings)

    task = _run(live)

    assert task["status"] == "success", task
    assert task["details"]["grounded"] is True
    assert task["details"]["code_runs"] == 1
    assert task["answer"] == "売上の合計\n\n売上の合計は 300 円でした。"
    assert UNGROUNDED_NOTE not in task["answer"]
    assert "unverified" not in task["details"]
