"""Files a task reads come from its uploads or the shared data folders: plan answers,
analysis files and conversion sources that name outside paths are refused before anything is
read, identically whether the outside file exists, and the refusal names the allowed places,
not the server's folders. Uploads (multipart) are stored under the task; a paused plan run
continues from answers. (Users apart from each other: test_confinement.)"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.examples import example_answers
from keiri_agent.file_access import ALLOWED_PLACES
from tests.server.conftest import LiveServer, make_settings, with_shared_data

PLAN = "duplicate_invoice_check"
INVOICES = Path(example_answers(PLAN)["collect_inputs"]["invoice_list"])


def _answers(path: str) -> dict[str, object]:
    return {"kind": "plan", "plan": PLAN, "answers": {"collect_inputs": {"invoice_list": path}}}


@pytest.mark.parametrize(
    "body",
    [
        _answers("/etc/passwd"),
        _answers("/etc/no-such-file.xlsx"),
        _answers("../outside.xlsx"),
        {"kind": "analysis", "request": "分析", "files": ["/etc/passwd"]},
        {"kind": "analysis", "request": "分析", "files": ["/etc/no-such-file.csv"]},
        {"request": "変換して", "source": "/etc/hostname"},
    ],
)
def test_outside_paths_are_refused_before_a_task_starts(
    serve: Callable[..., LiveServer], settings: Settings, body: dict[str, object]
) -> None:
    live = serve(settings)
    with live.client() as client:
        response = client.post("/agent/run", json=body)
    assert response.status_code == 403, response.text
    error = response.json()
    assert error["code"] == "PERMISSION_DENIED"
    assert error["message"].startswith(f"{error['details']['field']} のパス「")  # the input
    assert ALLOWED_PLACES in error["hint"]  # which places are allowed, by name
    assert "アップロード" in error["hint"]
    assert str(settings.keiri_workspace_root.absolute().parent) not in response.text
    assert live.registry.list() == []
    assert not live.registry.root.exists() or not any(live.registry.root.iterdir())


def test_an_existing_and_a_missing_outside_file_get_the_same_answer(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    with live.client() as client:
        exists = client.post("/agent/run", json=_answers("/etc/passwd")).json()
        missing = client.post("/agent/run", json=_answers("/etc/passwd-no-such")).json()
    assert exists["code"] == missing["code"]
    assert exists["message"].replace("/etc/passwd", "P") == missing["message"].replace(
        "/etc/passwd-no-such", "P"
    )
    assert exists["hint"] == missing["hint"]


def test_an_answer_naming_shared_data_runs(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = with_shared_data(tmp_path, {})
    shutil.copy(INVOICES, tmp_path / "shared" / "請求書一覧.xlsx")
    live = serve(settings)
    with live.client() as client:
        task_id = client.post("/agent/run", json=_answers("請求書一覧.xlsx")).json()["task_id"]
    assert live.wait_finished(task_id) == "success", live.registry.get(task_id).error


def test_uploads_are_stored_under_the_task_and_a_paused_plan_continues(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    with live.client() as client:
        started = client.post("/agent/run", json={"kind": "plan", "plan": PLAN, "answers": {}})
        paused_id = started.json()["task_id"]
        assert live.wait_finished(paused_id) == "waiting_input"
        answers = {"answers": {"collect_inputs": {"invoice_list": "一覧.xlsx"}}}
        with INVOICES.open("rb") as content:
            resumed = client.post(
                f"/agent/tasks/{paused_id}/answers",
                headers={"Origin": live.url},  # multipart without a key: from its own origin
                data={"request": json.dumps(answers, ensure_ascii=False)},
                files=[("files", ("一覧.xlsx", content, "application/octet-stream"))],
            )
        assert resumed.status_code == 202, resumed.text
        assert resumed.json()["task_id"] == paused_id  # the same task goes on
        assert live.wait_finished(paused_id) == "success", live.registry.get(paused_id).error
        task = client.get(f"/agent/tasks/{paused_id}").json()
        again = client.post(f"/agent/tasks/{paused_id}/answers", json=answers)
    assert task["request"]["uploads"] == ["一覧.xlsx"]
    assert "重複の疑いがある請求書は 4 件" in task["answer"]
    # Seed 002 §12: the upload was read by the run, and is not kept once the task has ended.
    assert not (live.registry.get(paused_id).directory / "uploads").exists()
    assert again.status_code == 409
    assert again.json()["code"] == "TASK_NOT_WAITING"


def test_an_upload_over_the_limit_is_refused(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_max_upload_bytes=10_000))
    with live.client() as client:
        response = client.post(
            "/agent/run",
            data={"request": json.dumps({"request": "JSON に変換して"})},
            files=[("files", ("big.csv", b"a,b\n" + b"1,2\n" * 5_000, "text/csv"))],
        )
    assert response.status_code == 413
    assert response.json()["code"] == "UPLOAD_TOO_LARGE"
    assert "10,000 バイト" in response.json()["message"]
    assert "KEIRI_MAX_UPLOAD_BYTES" in response.json()["hint"]
    assert live.registry.list() == []
