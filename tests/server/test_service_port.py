"""The service tests' server restarts even when another process took its port meanwhile, and an
answer from that process is never taken for the server's (tests/server/service.py)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.server.service import ServerProcess, listens_on


class _AlwaysHealthy(BaseHTTPRequestHandler):
    """Another program on the port, answering 200 to anything (a /healthz too)."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _another_server_on(port: int) -> Iterator[None]:
    squatter = ThreadingHTTPServer(("127.0.0.1", port), _AlwaysHealthy)
    thread = threading.Thread(target=squatter.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        squatter.shutdown()
        squatter.server_close()
        thread.join()


@pytest.mark.timeout(600)
def test_a_restart_whose_port_another_process_took_starts_on_another(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace"),
        "KEIRI_RUNS_DIR": str(tmp_path / "runs"),
    }
    server = ServerProcess(tmp_path, env).start()
    try:
        first = server.port
        server.stop()
        with _another_server_on(first):
            server.start()
            assert server.proc is not None
            assert server.proc.poll() is None
            assert server.port != first
            assert listens_on(server.proc.pid, server.port)
            with server.client() as client:
                assert client.get("/healthz").json()  # the server's own answer, a JSON body
    finally:
        server.stop()
