"""The progress page gets a failed code step's reason in Japanese (server/event_words.py).

A failed ``code_exec`` event and the analysis agent's ``error`` event of the code step carry
Python's text; the SSE message adds ``reason`` (the failure said in Japanese, the values the code
looked for quoted) and leaves every other field as the log line has it. Events of our own words
(a block's error with its code and hint, a successful run, a log line) go out unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from keiri_agent.config import Settings
from keiri_agent.events import CodeExec, ErrorEvent, Log, RunEvent
from keiri_agent.server.event_words import CONTINUES_FIELD, REASON_FIELD, shown_json
from tests.server.conftest import LiveServer, events_of, read_messages
from tests.support import ScriptedLLMServer

_COMMON: dict[str, Any] = {
    "id": 7,
    "run_id": "run-1",
    "timestamp": datetime(2026, 4, 1, tzinfo=UTC),
}
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "<analysis>", line 1, in <module>\n'
    "KeyError: '得意先コード'"
)


def test_a_failed_code_run_carries_its_reason_in_japanese() -> None:
    event = CodeExec(**_COMMON, node_id="code_exec", stdout="", stderr=TRACEBACK, success=False)
    data = json.loads(shown_json(event))
    reason = data.pop(REASON_FIELD)
    assert reason.startswith("表や辞書にない列名・キーを使っています")
    assert "「得意先コード」" in reason
    assert "Traceback" not in reason
    assert data == event.to_dict()  # Python's text itself is still there, for the toggle


def test_the_agents_error_of_the_code_step_carries_its_reason() -> None:
    message = "ZeroDivisionError: division by zero\n" + TRACEBACK.rsplit("\n", 1)[0]
    event = ErrorEvent(**_COMMON, step="code_exec", message=message)
    data = json.loads(shown_json(event))
    assert data[CONTINUES_FIELD] is True  # the agent tries again: the page logs it, no banner
    reason = data[REASON_FIELD]
    assert reason.startswith("0 で割っています")
    assert "division" not in reason


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(CodeExec(**_COMMON, stdout="300\n", stderr="", success=True), id="success"),
        pytest.param(
            ErrorEvent(
                **_COMMON,
                step="fetch",
                message="「売上.csv」が見つかりません。",
                error={"code": "FILE_UNREADABLE", "hint": "ファイル名を確認してください。"},
            ),
            id="our-own-error",
        ),
        pytest.param(Log(**_COMMON, msg="データを読み込みました。"), id="log"),
    ],
)
def test_events_in_our_own_words_go_out_as_logged(event: RunEvent) -> None:
    assert shown_json(event) == event.to_json()


def test_a_task_failing_after_a_failed_code_step_still_sends_its_own_error(
    serve: Callable[..., LiveServer], analysis_settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    # The code step fails (the agent would try again), then the model's service refuses: the
    # task fails with its own Japanese error and hint, which the stream must send as the error.
    llm_server.add_chat(json={"next_action": "act", "instruction": "合計", "rationale": "集計"})
    llm_server.add_chat(json={"code": "print(df['存在しない列'].sum())\n", "expected_outputs": []})
    llm_server.add_error(400, "scripted refusal")
    live = serve(analysis_settings)
    with live.client() as client:
        request = {"kind": "analysis", "request": "売上の合計は？", "files": ["sales.csv"]}
        task_id = client.post("/agent/run", json=request).json()["task_id"]
        with client.stream("GET", f"/agent/sse?task_id={task_id}") as sse:  # ends with done
            events = events_of(read_messages(sse))
    errors = [m.json() for m in events if m.event == "error"]
    code_step, final = errors  # the step the agent retries, then the task's end
    assert code_step[CONTINUES_FIELD] is True
    assert CONTINUES_FIELD not in final
    (done,) = [m.json() for m in events if m.event == "done"]
    assert done["status"] == "failed"
    assert final["error"]["code"] == done["error"]["code"]
    assert final["message"] == done["error"]["message"]
