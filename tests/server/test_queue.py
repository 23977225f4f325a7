"""At most KEIRI_MAX_RUNNING_TASKS tasks run; later ones are queued (visible in the task and
over SSE) up to KEIRI_MAX_QUEUED_TASKS; beyond that a submission is refused with 429."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from keiri_agent.server.jobs import Job, JobResult
from tests.server.conftest import LiveServer, events_of, make_settings, read_messages

PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}
WAIT_S = 60.0


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # never leave a blocked task behind


def _blocked(gate: threading.Event) -> Callable[[Job], JobResult]:
    def runner(job: Job) -> JobResult:
        job.log("実行中")
        gate.wait(WAIT_S)
        return JobResult("success", answer="済み")

    return runner


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def test_tasks_beyond_the_limit_queue_then_429(
    serve: Callable[..., LiveServer], tmp_path: Path, gate: threading.Event
) -> None:
    settings = make_settings(tmp_path, keiri_max_running_tasks=1, keiri_max_queued_tasks=1)
    live = serve(settings)
    running = live.registry.start("test", {}, _blocked(gate))
    _until(lambda: running.status == "running")
    with live.client() as client:
        queued = client.post("/agent/run", json=PLAN_TASK)
        refused = client.post("/agent/run", json=PLAN_TASK)
        assert queued.status_code == 202
        queued_id = queued.json()["task_id"]
        status = client.get(f"/agent/tasks/{queued_id}").json()
        assert status["status"] == "queued"
        assert status["step"] == "queued"
        assert refused.status_code == 429
        body = refused.json()
        assert body["code"] == "TOO_MANY_TASKS"
        assert "上限" in body["message"]
        assert "KEIRI_MAX_RUNNING_TASKS" in body["hint"]
        assert len(live.registry.list()) == 2  # the refused one created nothing

        gate.set()  # the running task ends; the queued one takes its slot
        assert live.wait_finished(queued_id) == "success", live.registry.get(queued_id).error
        with client.stream("GET", "/agent/sse", params={"task_id": queued_id}) as response:
            messages = events_of(read_messages(response))
    first = messages[0].json()
    assert (first["event"], first["step"]) == ("stage", "queued")
    assert messages[-1].json()["status"] == "success"


def test_a_queued_task_can_be_cancelled_before_it_starts(
    serve: Callable[..., LiveServer], tmp_path: Path, gate: threading.Event
) -> None:
    settings = make_settings(tmp_path, keiri_max_running_tasks=1, keiri_max_queued_tasks=2)
    live = serve(settings)
    live.registry.start("test", {}, _blocked(gate))
    with live.client() as client:
        queued_id = client.post("/agent/run", json=PLAN_TASK).json()["task_id"]
        cancelled = client.post(f"/agent/tasks/{queued_id}/cancel")
        assert cancelled.status_code == 202
        assert live.wait_finished(queued_id) == "cancelled"
        # Its place is free again: two more fit in the queue.
        assert client.post("/agent/run", json=PLAN_TASK).status_code == 202
        assert client.post("/agent/run", json=PLAN_TASK).status_code == 202
    assert live.registry.get(queued_id).started_at is None  # it never ran
