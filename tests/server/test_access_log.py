"""`keiri-agent serve` writes an access log without the per-task tokens that URLs carry."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.processes import free_port

START_TIMEOUT_S = 120.0
SECRET = "tok3n-SECRET-value-0123456789"


def test_the_access_log_redacts_task_tokens(tmp_path: Path) -> None:
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "import keiri_agent.cli.serve; from keiri_agent.cli import app; app()",
        "serve",
        "--port",
        str(port),
    ]
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace"),
        "KEIRI_API_KEY": "k3y-for-the-access-log-test",
    }
    proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False) as client:
            while True:
                assert proc.poll() is None, "serve exited"
                try:
                    client.get("/")
                    break
                except httpx.ConnectError:
                    assert time.monotonic() < deadline, "serve did not start"
                    time.sleep(0.1)
            task = client.get(f"/agent/tasks/{'t' * 22}", params={"token": SECRET})
            sse = client.get("/agent/sse", params={"task_id": "t" * 22, "TOKEN": SECRET})
    finally:
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    log = (stdout + stderr).decode("utf-8", "replace")
    assert task.status_code == 401
    assert sse.status_code == 401
    assert f"/agent/tasks/{'t' * 22}?token=***" in log  # the request is still logged
    assert "TOKEN=***" in log
    assert SECRET not in log
