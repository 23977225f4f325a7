"""The progress page gets a failed code step's reason in Japanese (server/event_words.py).

A failed ``code_exec`` event and the analysis agent's ``error`` event of the code step carry
Python's text; the SSE message adds ``reason`` (the failure said in Japanese, the values the code
looked for quoted) and leaves every other field as the log line has it. Events of our own words
(a block's error with its code and hint, a successful run, a log line) go out unchanged.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from keiri_agent.events import CodeExec, ErrorEvent, Log, RunEvent
from keiri_agent.server.event_words import REASON_FIELD, shown_json

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
    reason = json.loads(shown_json(event))[REASON_FIELD]
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
