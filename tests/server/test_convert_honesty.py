"""Conversion tasks through the API never claim a success they did not earn (issue 24): a
wrong format is sent back to CodeAct, a question pauses the task for an answer, an LLM failure
is a failed task that keeps what the run had made. The scripted LLM replies in the shapes real
models produce; CodeAct's code runs in the real sandbox."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.config import Settings
from tests.server.conftest import LiveServer, Message, events_of, read_messages, with_shared_data
from tests.support import ScriptedLLMServer, prompt_contains

SALES_CSV = "月,売上\n2024-04,120000\n2024-05,80000\n"
XML_JOB = {
    "action": "convert",
    "target_format": "xml",
    "output_name": "sales",
    "summary_ja": "売上表を XML に変換します。",
}
CODEACT = prompt_contains("You are CodeAct")


def fenced(code: str) -> str:
    return f"```python\n{code}```"


@pytest.fixture
def convert_settings(public_dir: Path, llm_server: ScriptedLLMServer) -> Settings:
    """Shared data holding 売上.csv, CodeAct under a folder the sandbox user can reach."""
    return with_shared_data(
        public_dir,
        {"売上.csv": SALES_CSV},
        keiri_codeact_root=public_dir / "codeact",
        keiri_llm_max_retries=0,
    )


def _start(live: LiveServer, body: dict[str, Any]) -> dict[str, Any]:
    with live.client() as client:
        response = client.post("/agent/run", json=body)
        assert response.status_code == 202, response.text
        task_id = response.json()["task_id"]
        live.wait_finished(task_id)
        task: dict[str, Any] = client.get(f"/agent/tasks/{task_id}").json()
        return task


def _events(live: LiveServer, task_id: str) -> list[Message]:
    with live.client() as client, client.stream("GET", f"/agent/sse?task_id={task_id}") as sse:
        return events_of(read_messages(sse))


def test_a_wrong_format_is_sent_back_and_only_the_xml_is_the_result(
    serve: Callable[..., LiveServer], convert_settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat(fenced('df.to_csv("売上.csv", index=False)\n'), when=CODEACT)
    llm_server.add_chat(
        fenced('df.to_xml("sales.xml", parser="etree", index=False)\n'), when=CODEACT
    )
    live = serve(convert_settings)

    task = _start(live, {"request": "売上を XML にして", "source": "売上.csv"})

    assert task["status"] == "success", task
    assert [f["name"] for f in task["files"]] == ["sales.xml"]
    with live.client() as client:
        body = client.get(task["files"][0]["url"]).content
    assert ET.fromstring(body)[0].find("売上").text == "120000"  # type: ignore[union-attr]
    assert "依頼の形式（XML）ではありません" in str(llm_server.chat_requests()[-1])


def test_a_wrong_format_every_time_is_a_failed_task_not_a_success(
    serve: Callable[..., LiveServer], convert_settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat(fenced('df.to_csv("sales.csv", index=False)\n'), when=CODEACT, repeat=True)
    live = serve(convert_settings)

    task = _start(live, {"request": "売上を XML にして", "source": "売上.csv"})

    assert task["status"] == "failed"
    assert task["files"] == []
    assert task["error"]["code"] == "CODE_EXECUTION_FAILED"
    assert "。。" not in task["error"]["message"]
    events = _events(live, task["task_id"])
    assert "error" in [m.event for m in events]
    (done,) = [m for m in events if m.event == "done"]
    assert done.json()["status"] == "failed"  # the terminal event never says success
    assert task["details"]["code_runs"][0]["wrong_format"]


def test_a_question_pauses_the_task_and_an_answer_continues_it(
    serve: Callable[..., LiveServer], convert_settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat("ルート要素名は何にしますか？", when=CODEACT)
    live = serve(convert_settings)

    paused = _start(live, {"request": "売上を XML にして", "source": "売上.csv"})

    assert paused["status"] == "waiting_input", paused
    assert paused["details"]["question"] == "ルート要素名は何にしますか？"
    assert paused["files"] == []
    llm_server.add_chat(
        fenced('df.to_xml("sales.xml", parser="etree", root_name="売上一覧", index=False)\n'),
        when=prompt_contains("回答: 売上一覧"),
    )
    with live.client() as client:
        empty = client.post(f"/agent/tasks/{paused['task_id']}/answers", json={"answer": " "})
        assert empty.status_code in (400, 422)
        assert "回答" in empty.json()["message"]
        response = client.post(
            f"/agent/tasks/{paused['task_id']}/answers", json={"answer": "売上一覧"}
        )
        assert response.status_code == 202, response.text
        task_id = response.json()["task_id"]  # the same task goes on
        assert task_id == paused["task_id"]
        live.wait_finished(task_id)
        task = client.get(f"/agent/tasks/{task_id}").json()
        assert task["status"] == "success", task
        body = client.get(task["files"][0]["url"]).content
    assert ET.fromstring(body).tag == "売上一覧"


def test_an_llm_failure_is_a_failed_task_that_keeps_the_runs(
    serve: Callable[..., LiveServer], convert_settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat(fenced("print(df['存在しない列'])\n"), when=CODEACT)
    llm_server.add_error(500, "upstream exploded", when=CODEACT)
    live = serve(convert_settings)

    task = _start(live, {"request": "売上を XML にして", "source": "売上.csv"})

    assert task["status"] == "failed"
    assert task["error"]["code"] == "API_ERROR"
    assert task["files"] == []
    (run,) = task["details"]["code_runs"]
    assert "KeyError" in run["error"]
    assert task["details"]["used_fallback"] is True
