"""Requests the server must refuse cleanly: a Host header it is not meant to be reached by
(DNS rebinding), and download paths no file can have (a JSON 404, not a 500 traceback)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.config import Settings
from tests.server.conftest import LiveServer, make_settings

PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8000", "10.0.0.5"])
def test_a_foreign_host_header_is_refused_in_japanese(
    serve: Callable[..., LiveServer], settings: Settings, host: str
) -> None:
    live = serve(settings)
    with live.client() as client:
        refused = client.post("/agent/run", json=PLAN_TASK, headers={"Host": host})
        page = client.get("/", headers={"Host": host})
    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == "HOST_NOT_ALLOWED"
    assert "Host ヘッダー" in body["message"]
    assert "KEIRI_ALLOWED_HOSTS" in body["hint"]
    assert page.status_code == 400
    assert live.registry.list() == []  # nothing was started


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1", "[::1]:8000"])
def test_local_names_are_answered(
    serve: Callable[..., LiveServer], settings: Settings, host: str
) -> None:
    live = serve(settings)
    with live.client() as client:
        response = client.get("/agent/tasks", headers={"Host": host})
    assert response.status_code == 200, response.text


def test_configured_host_names_are_answered(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_allowed_hosts="keiri.example.com, *.corp.example"))
    with live.client() as client:
        named = client.get("/agent/tasks", headers={"Host": "keiri.example.com"})
        pattern = client.get("/agent/tasks", headers={"Host": "pc1.corp.example"})
        other = client.get("/agent/tasks", headers={"Host": "evil.example"})
    assert named.status_code == 200
    assert pattern.status_code == 200
    assert other.status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        "files/" + "a" * 300,  # one component over NAME_MAX
        "/".join(["files"] + ["b" * 200] * 20),  # 4 KB
        "x" * 4096,
    ],
)
def test_overlong_download_paths_are_a_json_404_without_a_traceback(
    serve: Callable[..., LiveServer],
    settings: Settings,
    path: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    live = serve(settings)
    with live.client() as client:
        task_id = client.post("/agent/run", json=PLAN_TASK).json()["task_id"]
        live.wait_finished(task_id)
        with caplog.at_level(logging.ERROR):
            response = client.get(f"/agent/tasks/{task_id}/files/{path}")
    assert response.status_code == 404, response.text
    assert response.json()["code"] == "FILE_NOT_FOUND"
    assert response.json()["message"].startswith("タスクにファイル")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
