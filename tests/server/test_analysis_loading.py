"""An analysis task loads its data files all or none: a file it cannot read fails the task
before any model call, and no copy of the files read before it is left in the task's folder
(nor listed as a result)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.config import Settings
from tests.server.conftest import LiveServer, with_shared_data
from tests.support import ScriptedLLMServer

pytestmark = pytest.mark.timeout(300)


def test_an_unreadable_second_file_fails_the_task_and_keeps_no_copy_of_the_first(
    serve: Callable[..., LiveServer], public_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    settings: Settings = with_shared_data(public_dir, {"sales.csv": "月,売上\n4月,100\n"})
    (public_dir / "shared" / "costs.xlsx").write_bytes(b"this is not a workbook")
    live = serve(settings)
    request = {"kind": "analysis", "request": "売上は？", "files": ["sales.csv", "costs.xlsx"]}
    with live.client() as client:
        response = client.post("/agent/run", json=request)
        assert response.status_code == 202, response.text
        task_id = response.json()["task_id"]
        live.wait_finished(task_id, timeout=240)
        task = client.get(f"/agent/tasks/{task_id}").json()

    assert task["status"] == "failed", task
    assert "costs.xlsx" in task["error"]["message"]
    assert task["files"] == []
    workspace = settings.keiri_workspace_root
    assert workspace is not None
    assert list(workspace.rglob("sales.csv")) == []  # no copy of the file read first
    assert [p for p in workspace.rglob("*") if p.name.startswith(".keiri-staging-")] == []
    assert llm_server.chat_requests() == []
