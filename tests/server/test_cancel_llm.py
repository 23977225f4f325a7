"""Cancelling a task aborts its LLM call in flight: the task is cancelled long before the
model would have answered, and the HTTP connection to the model is closed (a real provider
stops generating)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import psutil

from tests.server.conftest import LiveServer, make_settings
from tests.support import ScriptedLLMServer

# The reply never comes in the test (stopping the scripted server cuts the wait short).
REPLY_DELAY_S = 600.0
# For the task to call the model, then to end once cancelled: generous on a loaded machine
# (15 s also had to cover the task starting and the call going out).
DEADLINE_S = 90.0


def _open_connections_to(port: int) -> list[object]:
    return [
        c
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    ]


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_cancel_aborts_the_llm_call_in_flight(
    serve: Callable[..., LiveServer], tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    job = {"action": "convert", "source": "a.csv", "target_format": "json"}
    llm_server.add_chat(json=job, delay=REPLY_DELAY_S)
    live = serve(make_settings(tmp_path))  # after llm_server: the settings point at it
    port = int(llm_server.url.split(":")[-1].split("/")[0])
    with live.client() as client:
        task_id = client.post("/agent/run", json={"request": "a.csv を JSON に"}).json()["task_id"]
        _until(lambda: len(llm_server.requests) == 1, "the model was never asked")
        _until(lambda: bool(_open_connections_to(port)), "no connection to the model")
        started = time.monotonic()
        assert client.post(f"/agent/tasks/{task_id}/cancel").status_code == 202
        status = live.wait_finished(task_id, timeout=DEADLINE_S)
        elapsed = time.monotonic() - started
        task = client.get(f"/agent/tasks/{task_id}").json()
    assert status == "cancelled"
    assert elapsed < REPLY_DELAY_S  # it did not wait for the reply
    assert task["error"]["code"] == "CANCELLED"
    _until(lambda: not _open_connections_to(port), "the connection to the model stayed open")
    assert len(llm_server.requests) == 1  # no retry after the cancel
