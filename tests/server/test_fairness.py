"""One user cannot fill the server: over KEIRI_MAX_TASKS_PER_USER (running and queued together)
that user gets a 429 naming their own cap while other users still get in; continuations
(answers) count; a server without keys counts all its callers as one anonymous user."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from keiri_agent.examples import example_answers
from keiri_agent.server.jobs import Job, JobResult
from tests.server.conftest import LiveServer, make_settings

PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}
KEYS = {"sato": "sato-key-fairness-0123", "suzuki": "suzuki-key-fairness-0123"}
WAIT_S = 60.0
INVOICES = Path(example_answers("duplicate_invoice_check")["collect_inputs"]["invoice_list"])


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # never leave a blocked task behind


def _blocked(gate: threading.Event) -> Callable[[Job], JobResult]:
    def runner(job: Job) -> JobResult:
        gate.wait(WAIT_S)
        return JobResult("success", answer="済み")

    return runner


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def _users_file(root: Path) -> Path:
    path = root / "users.yaml"
    lines = ["users:"]
    for name, key in KEYS.items():
        lines += [
            f"  - name: {name}",
            f"    key_sha256: {hashlib.sha256(key.encode()).hexdigest()}",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name]}"}


def _assert_own_cap(body: dict[str, object], cap: int) -> None:
    assert body["code"] == "TOO_MANY_TASKS_PER_USER"
    assert "1 人あたりの上限" in str(body["message"])
    assert f"{cap} 件まで" in str(body["message"])
    assert "KEIRI_MAX_TASKS_PER_USER" in str(body["hint"])


def test_one_user_over_their_cap_is_refused_while_others_get_in(
    serve: Callable[..., LiveServer], tmp_path: Path, gate: threading.Event
) -> None:
    settings = make_settings(
        tmp_path,
        keiri_api_keys_file=_users_file(tmp_path),
        keiri_max_running_tasks=1,
        keiri_max_queued_tasks=10,
        keiri_max_tasks_per_user=2,
    )
    live = serve(settings)
    running = live.registry.start("test", {}, _blocked(gate), owner="sato")
    _until(lambda: running.status == "running")
    with (
        live.client(headers=_bearer("sato")) as sato,
        live.client(headers=_bearer("suzuki")) as suz,
    ):
        queued = sato.post("/agent/run", json=PLAN_TASK)
        assert queued.status_code == 202, queued.text
        refused = sato.post("/agent/run", json=PLAN_TASK)
        assert refused.status_code == 429, refused.text
        _assert_own_cap(refused.json(), 2)
        assert "sato" in refused.json()["message"]
        assert refused.headers["retry-after"]
        # The queue has room, and another user still gets in.
        others = [suz.post("/agent/run", json=PLAN_TASK) for _ in range(2)]
        assert [r.status_code for r in others] == [202, 202], others[-1].text
        assert len(live.registry.list()) == 4  # the refused one created nothing

        gate.set()  # sato's tasks end: their places are given back
        for task_id in [queued.json()["task_id"], *(r.json()["task_id"] for r in others)]:
            assert live.wait_finished(task_id) == "success", live.registry.get(task_id).error
        _until(lambda: live.registry.runtime.queue.held("sato") == 0)
        again = sato.post("/agent/run", json=PLAN_TASK)
        assert again.status_code == 202, again.text
        assert live.wait_finished(again.json()["task_id"]) == "success"


def test_a_server_without_keys_counts_every_caller_as_one_user(
    serve: Callable[..., LiveServer], tmp_path: Path, gate: threading.Event
) -> None:
    settings = make_settings(
        tmp_path, keiri_max_running_tasks=1, keiri_max_queued_tasks=10, keiri_max_tasks_per_user=2
    )
    live = serve(settings)
    running = live.registry.start("test", {}, _blocked(gate))
    _until(lambda: running.status == "running")
    with live.client() as client:
        assert client.post("/agent/run", json=PLAN_TASK).status_code == 202
        refused = client.post("/agent/run", json=PLAN_TASK)
    assert refused.status_code == 429, refused.text
    _assert_own_cap(refused.json(), 2)
    assert "キーなしのサーバーでは全員で" in refused.json()["message"]
    assert refused.json()["details"] == {"user": None, "max_tasks_per_user": 2}


def test_answers_to_a_paused_task_count_against_the_cap(
    serve: Callable[..., LiveServer], tmp_path: Path, gate: threading.Event
) -> None:
    settings = make_settings(
        tmp_path,
        keiri_api_keys_file=_users_file(tmp_path),
        keiri_max_running_tasks=1,
        keiri_max_queued_tasks=10,
        keiri_max_tasks_per_user=2,
    )
    live = serve(settings)
    answers = json.dumps({"answers": {"collect_inputs": {"invoice_list": "一覧.xlsx"}}})

    def answer(client: httpx.Client, task_id: str) -> httpx.Response:
        with INVOICES.open("rb") as content:
            return client.post(
                f"/agent/tasks/{task_id}/answers",
                data={"request": answers},
                files=[("files", ("一覧.xlsx", content, "application/octet-stream"))],
            )

    with live.client(headers=_bearer("sato")) as sato:
        paused_id = sato.post("/agent/run", json={**PLAN_TASK, "answers": {}}).json()["task_id"]
        assert live.wait_finished(paused_id) == "waiting_input"
        running = live.registry.start("test", {}, _blocked(gate), owner="sato")
        _until(lambda: running.status == "running")
        live.registry.start("test", {}, _blocked(gate), owner="sato")  # queued: cap reached
        refused = answer(sato, paused_id)
        assert refused.status_code == 429, refused.text
        _assert_own_cap(refused.json(), 2)
        assert sato.get(f"/agent/tasks/{paused_id}").json()["status"] == "waiting_input"
        gate.set()
        _until(lambda: live.registry.runtime.queue.held("sato") == 0)
        assert not (live.registry.get(paused_id).directory / "uploads" / "一覧.xlsx").exists()
        accepted = answer(sato, paused_id)
    assert accepted.status_code == 202, accepted.text
    assert live.wait_finished(paused_id) == "success", live.registry.get(paused_id).error
