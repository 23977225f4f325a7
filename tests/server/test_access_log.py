"""`keiri-agent serve` writes an access log without the per-task tokens that URLs carry, however
the ``token`` parameter is spelled (``?%74oken=`` opens the task just as ``?token=`` does)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.server.service import ServerProcess

SECRET = "tok3n-SECRET-value-0123456789"
PLAN = "duplicate_invoice_check"


def test_the_access_log_redacts_task_tokens(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace"),
        "KEIRI_API_KEY": "k3y-for-the-access-log-test",
    }
    server = ServerProcess(tmp_path, env).start()  # another port if the chosen one is taken
    try:
        with server.client() as client:
            task = client.get(f"/agent/tasks/{'t' * 22}", params={"token": SECRET})
            sse = client.get("/agent/sse", params={"task_id": "t" * 22, "TOKEN": SECRET})
    finally:
        server.stop()
    log = server.log_path.read_text(encoding="utf-8")
    assert task.status_code == 401
    assert sse.status_code == 401
    assert f"/agent/tasks/{'t' * 22}?token=***" in log  # the request is still logged
    assert "TOKEN=***" in log
    assert SECRET not in log


@pytest.mark.timeout(600)
@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_token_spelled_with_percent_escapes_opens_its_task_and_stays_out_of_the_log(
    tmp_path: Path, log_format: str
) -> None:
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace"),
        "KEIRI_RUNS_DIR": str(tmp_path / "runs"),
        "KEIRI_API_KEY": "k3y-for-the-encoded-token-test",
        "KEIRI_LOG_FORMAT": log_format,
    }
    server = ServerProcess(tmp_path, env).start()
    admin = {"Authorization": f"Bearer {env['KEIRI_API_KEY']}"}
    try:
        with server.client(headers=admin) as client:
            started = client.post("/agent/run", json={"kind": "plan", "plan": PLAN}).json()
        task_id, token = started["task_id"], started["token"]
        server.wait_status(task_id, lambda s: s == "success", headers=admin)
        with server.client() as client:  # no key: the token alone, in the spellings a parser reads
            opened = [
                client.get(f"/agent/tasks/{task_id}?%74oken={token}"),
                client.get(f"/agent/tasks/{task_id}?tok%65n={token}&tok%65n={token}"),
                client.get(f"/agent/sse?task_id={task_id}&%74%6F%6B%65%6E={token}"),
            ]
            wrong = client.get(f"/agent/tasks/{task_id}?%74oken={token[:-4]}WRNG")
    finally:
        server.stop()
    assert [r.status_code for r in opened] == [200, 200, 200]
    assert wrong.status_code == 401
    log = server.log_path.read_text(encoding="utf-8")
    if log_format == "json":
        log = "\n".join(str(record["message"]) for record in server.log_records())
    assert f"/agent/tasks/{task_id}?%74oken=*** HTTP/1.1" in log  # still logged, redacted
    assert "tok%65n=***&tok%65n=***" in log
    assert "%74%6F%6B%65%6E=***" in log
    assert token not in log
    assert token[:-4] not in log
