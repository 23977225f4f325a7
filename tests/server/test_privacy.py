"""An analysis task through the API over customer data (issue 37): the model gets
placeholders, the task's answer the real values, and neither the task's event log nor the run
logs under the server's folders hold any of the values."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.server.logconfig import JsonFormatter, RedactTokens
from tests.privacy.test_analysis import CODE, REPORT, ROWS
from tests.server.conftest import LiveServer, with_shared_data
from tests.support import ScriptedLLMServer
from tests.support.personal import COLUMNS, identifiers, leaked, names

pytestmark = pytest.mark.timeout(600)  # the sandbox inside a server task, on a loaded machine


def test_an_analysis_task_sends_placeholders_and_logs_no_value(
    serve: Callable[..., LiveServer], public_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    csv = "\n".join([",".join(COLUMNS), *(",".join(str(r[c]) for c in COLUMNS) for r in ROWS)])
    settings = with_shared_data(public_dir, {"customers.csv": csv + "\n"})
    llm_server.add_chat(json={"next_action": "act", "instruction": "数える", "rationale": "r"})
    llm_server.add_chat(json={"code": CODE, "expected_outputs": []})
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "十分"})
    llm_server.add_chat(json=REPORT)
    live = serve(settings)
    request = {"kind": "analysis", "request": "地域別の顧客数は？", "files": ["customers.csv"]}
    with live.client() as client:
        response = client.post("/agent/run", json=request)
        assert response.status_code == 202, response.text
        task_id = response.json()["task_id"]
        assert live.wait_finished(task_id, timeout=300) == "success"
        task = client.get(f"/agent/tasks/{task_id}").json()

    values = [*identifiers(ROWS), *names(ROWS)]
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.chat_requests()]
    assert len(bodies) == 4
    assert leaked(bodies, values) == []
    assert f"{ROWS[0]['氏名']}様（{ROWS[0]['携帯電話']}）" in task["answer"]
    assert task["details"]["masked"]["person"] == 10
    logs = [path.read_text(encoding="utf-8") for path in public_dir.rglob("*.jsonl")]
    assert any(f'"task_id": "{task_id}"' in text or task_id in text for text in logs)
    assert leaked(logs, values) == []


def test_the_server_log_masks_what_the_code_printed_of_a_customer(
    serve: Callable[..., LiveServer], public_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    # The code runs on the real data: its error names the first customer, and the server's
    # JSON log (the filter and formatter `keiri-agent serve --log-format json` installs) gets it.
    csv = "\n".join([",".join(COLUMNS), *(",".join(str(r[c]) for c in COLUMNS) for r in ROWS)])
    settings = with_shared_data(public_dir, {"customers.csv": csv + "\n"})
    failing = (
        "row = df.iloc[0]\nraise ValueError(f\"確認が必要: {row['氏名']} {row['携帯電話']}\")\n"
    )
    llm_server.add_chat(json={"next_action": "act", "instruction": "確認", "rationale": "r"})
    llm_server.add_chat(json={"code": failing, "expected_outputs": []})
    llm_server.add_chat(json={"next_action": "act", "instruction": "数える", "rationale": "r"})
    llm_server.add_chat(json={"code": CODE, "expected_outputs": []})
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "十分"})
    llm_server.add_chat(json=REPORT)
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.addFilter(RedactTokens())
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("keiri_agent")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        live = serve(settings)
        request = {"kind": "analysis", "request": "地域別の顧客数は？", "files": ["customers.csv"]}
        with live.client() as client:
            response = client.post("/agent/run", json=request)
            assert response.status_code == 202, response.text
            task_id = response.json()["task_id"]
            assert live.wait_finished(task_id, timeout=300) == "success"
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)

    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    failed = [
        line["message"] for line in lines if "分析コードの実行が失敗しました" in line["message"]
    ]
    assert failed == [
        # the code's own Japanese message as execlog says it (no class name), masked
        "分析コードの実行が失敗しました: 確認が必要: 〔人名〕 〔電話番号〕"
    ]
    values = [*identifiers(ROWS), *names(ROWS)]
    assert leaked(buffer.getvalue().splitlines(), values) == []
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.chat_requests()]
    assert leaked(bodies, values) == []
