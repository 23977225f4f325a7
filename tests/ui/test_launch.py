"""`keiri-agent ui` starts a headless Streamlit server that serves the app."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.processes import free_port, stop_process_group

STARTUP_TIMEOUT_S = 180


def _get(url: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
    with opener.open(url, timeout=2) as response:
        return response.status, response.read().decode("utf-8", "replace")


def test_ui_command_serves_the_app(tmp_path: Path) -> None:
    command = Path(sys.executable).with_name("keiri-agent")
    if not command.exists():
        pytest.skip("the keiri-agent console script is not installed next to this Python")
    port = free_port()
    log = (tmp_path / "ui.log").open("w+b")
    proc = subprocess.Popen(
        [str(command), "ui", "--port", str(port), "--address", "127.0.0.1"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group, so the server and its children stop together
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        health = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                health = _get(f"http://127.0.0.1:{port}/_stcore/health")
                break
            except OSError:
                time.sleep(0.3)
        log.seek(0)
        output = log.read().decode("utf-8", "replace")
        assert health == (200, "ok"), output
        status, page = _get(f"http://127.0.0.1:{port}/")
        assert status == 200
        assert '<div id="root">' in page or "streamlit" in page.lower()
    finally:
        stop_process_group(proc)
        log.close()
