"""What survives a restart, over real HTTP with a real server process: a plan task cut by
SIGTERM (its node still running when ``KEIRI_SHUTDOWN_TIMEOUT_S`` ran out) or SIGKILL finishes
after the restart with the same outputs as an uninterrupted run and without running a finished
node again; SIGTERM ends open SSE streams with a final event, and the stream of the restarted
server ends with ``done``. A node that finishes within the shutdown timeout ends its task
normally before the server exits."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import Message
from tests.server.service import ServerProcess, files_of, sse_messages
from tests.support import ScriptedLLMServer, prompt_contains

PLAN = """\
apiVersion: v1
id: restart_check
version: 1.0.0
graph:
  - id: first
    block: ai.process_llm
    in:
      prompt: "FIRST 請求書の要点をまとめてください"
      output_schema:
        summary: { type: object, properties: { text: string } }
    out:
      summary: first_summary
  - id: second
    block: ai.process_llm
    in:
      prompt: "SECOND 次の要点から結論を出してください: ${first.first_summary.text}"
      output_schema:
        summary: { type: object, properties: { text: string } }
    out:
      summary: second_summary
  - id: report
    block: report.markdown
    in:
      template: "# 確認結果\\n\\n{{ a }}\\n\\n{{ b }}\\n"
      data: { a: "${first.first_summary.text}", b: "${second.second_summary.text}" }
      output_path: 確認結果.md
exports:
  - { from: report.markdown, as: report }
"""
FIRST = {"summary": {"text": "請求書は 3 件、合計 330,000 円です。"}}
SECOND = {"summary": {"text": "結論: 支払は期限内に完了しています。"}}
TASK = {"kind": "plan", "plan": "restart_check"}


def _server(root: Path, name: str, shutdown_timeout_s: float = 1) -> ServerProcess:
    base = root / name
    designs = base / "designs"
    designs.mkdir(parents=True)
    (designs / "restart_check.yaml").write_text(PLAN, encoding="utf-8")
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(base / "workspace"),
        "KEIRI_RUNS_DIR": str(base / "runs"),
        "KEIRI_DESIGNS_DIR": str(designs),
        "KEIRI_SHUTDOWN_TIMEOUT_S": str(shutdown_timeout_s),
        "KEIRI_LOG_FORMAT": "json",
    }
    return ServerProcess(base, env)


def _calls(llm: ScriptedLLMServer, marker: str) -> int:
    return sum(marker in str(request.body) for request in llm.requests)


def _wait_for_call(llm: ScriptedLLMServer, marker: str) -> None:
    deadline = time.monotonic() + 120
    while _calls(llm, marker) == 0:
        assert time.monotonic() < deadline, f"no LLM call with {marker}"
        time.sleep(0.05)


def _outputs(server: ServerProcess, task: dict[str, Any]) -> tuple[str, dict[str, bytes]]:
    return task["answer"], dict(files_of(server, task))


@pytest.fixture
def uninterrupted(tmp_path: Path, llm_server: ScriptedLLMServer) -> tuple[str, dict[str, bytes]]:
    """The outputs of the plan run without a stop."""
    llm_server.add_chat(json=FIRST, when=prompt_contains("FIRST"))
    llm_server.add_chat(json=SECOND, when=prompt_contains("SECOND"))
    server = _server(tmp_path, "baseline").start()
    try:
        with server.client() as client:
            task_id = client.post("/agent/run", json=TASK).json()["task_id"]
        task = server.wait_status(task_id, lambda s: s not in ("queued", "running"))
        assert task["status"] == "success", task["error"]
        outputs = _outputs(server, task)
    finally:
        server.stop()
    llm_server.requests.clear()
    return outputs


@pytest.mark.timeout(900)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
def test_a_plan_cut_by_a_stop_finishes_after_a_restart_with_the_same_outputs(
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    uninterrupted: tuple[str, dict[str, bytes]],
    stop: signal.Signals,
) -> None:
    llm_server.add_chat(json=FIRST, when=prompt_contains("FIRST"))
    llm_server.add_chat(json=SECOND, when=prompt_contains("SECOND"), delay=600)  # cut here
    llm_server.add_chat(json=SECOND, when=prompt_contains("SECOND"))  # after the restart
    server = _server(tmp_path, "service").start()
    try:
        with server.client() as client:
            task_id = client.post("/agent/run", json=TASK).json()["task_id"]
        seen: list[Message] = []
        stream: list[Message] = []

        def read() -> None:
            try:
                stream.extend(sse_messages(server, task_id, on_message=seen.append))
            except httpx.TransportError:  # SIGKILL: the connection is cut, no final event
                assert stop == signal.SIGKILL

        reader = threading.Thread(target=read)
        reader.start()
        _wait_for_call(llm_server, "SECOND")  # the first node has finished, the second runs
        code = server.signal(stop)
        reader.join(timeout=120)
        assert not reader.is_alive()
        if stop == signal.SIGTERM:
            assert code in (0, -signal.SIGTERM)
            # The open stream ended with the server's final event, the task is interrupted.
            assert stream[-1].event == "shutdown"
            assert stream[-1].json()["status"] == "interrupted"
            assert "再起動後に終わったノードの続きから再開します" in stream[-2].json()["msg"]
        last_id = max(int(m.id) for m in seen if m.id)

        server.start()
        task = server.wait_status(task_id, lambda s: s not in ("queued", "running", "interrupted"))
        assert task["status"] == "success", task["error"]
        assert task["interruptions"] == 1
        assert _outputs(server, task) == uninterrupted
        # The finished node was not run again: one call for it over both server processes.
        assert _calls(llm_server, "FIRST") == 1
        assert _calls(llm_server, "SECOND") == 2
        # The stream goes on where it stopped and ends with the restarted server's `done`.
        after = sse_messages(server, task_id, after=last_id)
        assert [int(m.id or 0) for m in after] == list(range(last_id + 1, last_id + len(after) + 1))
        assert after[-1].event == "done"
        assert after[-1].json()["status"] == "success"
        records = server.log_records()
        assert any(r["task_id"] == task_id and "再開" in r["message"] for r in records)
    finally:
        server.stop()


# The running node's reply comes this long after its call: inside the 120 s shutdown timeout, and
# long enough that SIGTERM surely comes first on a loaded machine (the test asserts the task was
# still running when the server began to stop; 5 s left a slow signal a chance to miss it).
FINISHING_S = 20.0


@pytest.mark.timeout(900)
def test_a_node_that_finishes_within_the_shutdown_timeout_ends_its_task_normally(
    tmp_path: Path, llm_server: ScriptedLLMServer, uninterrupted: tuple[str, dict[str, bytes]]
) -> None:
    llm_server.add_chat(json=FIRST, when=prompt_contains("FIRST"))
    llm_server.add_chat(json=SECOND, when=prompt_contains("SECOND"), delay=FINISHING_S)
    server = _server(tmp_path, "service", shutdown_timeout_s=120).start()
    try:
        with server.client() as client:
            task_id = client.post("/agent/run", json=TASK).json()["task_id"]
        stream: list[Message] = []
        reader = threading.Thread(target=lambda: stream.extend(sse_messages(server, task_id)))
        reader.start()
        _wait_for_call(llm_server, "SECOND")  # the second node is running

        code = server.signal(signal.SIGTERM)

        assert code in (0, -signal.SIGTERM)
        reader.join(timeout=120)
        assert not reader.is_alive()
        # The open stream ended with the task's own end, not with the server's shutdown event.
        assert stream[-1].event == "done"
        assert stream[-1].json()["status"] == "success"
        messages = [r["message"] for r in server.log_records()]
        stopping = next(i for i, m in enumerate(messages) if m.startswith("停止します"))
        assert "実行中・順番待ちのタスク 1 件" in messages[stopping]  # it was running then
        assert "タスクが success になりました" in messages[stopping:]

        server.start()
        with server.client() as client:
            task = client.get(f"/agent/tasks/{task_id}").json()
        assert task["status"] == "success", task["error"]
        assert task["interruptions"] == 0
        assert _outputs(server, task) == uninterrupted  # its outputs kept
        assert _calls(llm_server, "FIRST") == 1
        assert _calls(llm_server, "SECOND") == 1  # nothing ran again
    finally:
        server.stop()
