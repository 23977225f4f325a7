"""`keiri-agent serve`: the real command serves the page and the API on the given port, and
warns when it listens beyond this machine without an API key."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import keiri_agent.cli.serve as serve_cli  # registers the command on the shared app
from keiri_agent.cli import app
from tests.server.conftest import make_settings
from tests.support.processes import free_port

START_TIMEOUT_S = 120.0


def test_serve_runs_the_api_and_the_page(tmp_path: Path) -> None:
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "import keiri_agent.cli.serve; from keiri_agent.cli import app; app()",
        "serve",
        "--port",
        str(port),
    ]
    env = {**os.environ, "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace")}
    proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False) as client:
            while True:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                try:
                    page = client.get("/")
                    break
                except httpx.ConnectError:
                    assert time.monotonic() < deadline, "serve did not start"
                    time.sleep(0.1)
            tasks = client.get("/agent/tasks")
        assert page.status_code == 200
        assert "keiri-agent" in page.text
        assert tasks.status_code == 200
        assert tasks.json() == {"tasks": []}
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    # uvicorn shuts down gracefully, then re-raises the signal it caught.
    assert "Application shutdown complete" in stderr
    assert proc.returncode == -signal.SIGTERM
    assert f"http://127.0.0.1:{port}/" in stderr
    assert "警告" not in stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.5.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.10", False),
        ("::", False),
        ("example.com", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert serve_cli.is_loopback(host) is loopback


def test_no_key_on_a_public_address_is_warned_about(tmp_path: Path) -> None:
    lines = serve_cli.startup_lines(make_settings(tmp_path), "0.0.0.0", 8000)
    warnings = [line for line, warning in lines if warning]
    assert len(warnings) == 1
    assert "KEIRI_API_KEY" in warnings[0]
    assert "0.0.0.0" in warnings[0]
    assert not any(w for _, w in serve_cli.startup_lines(make_settings(tmp_path), "127.0.0.1", 1))
    secured = make_settings(tmp_path, keiri_api_key="secret-key")
    lines = serve_cli.startup_lines(secured, "0.0.0.0", 8000)
    assert not any(warning for _, warning in lines)
    assert any("API キー" in line for line, _ in lines)
    assert "secret-key" not in "".join(line for line, _ in lines)


def test_help_is_japanese() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"])
    assert result.exit_code == 0
    assert "API サーバー" in result.output
    assert "--host" in result.output
    assert "--port" in result.output
