"""S3 fixtures for the conversion tests: moto's S3 server on loopback behind a fault proxy.

``s3_server`` is moto's ``ThreadedMotoServer`` on 127.0.0.1 (a real S3 API over HTTP), one per
session. ``s3_proxy`` is a small HTTP reverse proxy in front of it that forwards every request
as it is, except when a test queues faults: ``s3_proxy.fail(times, status=500)`` answers the
next matching requests with an S3 error document, ``s3_proxy.drop(times)`` closes the
connection without an answer. The product code reaches the proxy exactly as it reaches MinIO:
through ``KEIRI_S3_ENDPOINT_URL``, which ``s3_env`` sets along with dummy AWS credentials.
``s3_proxy.requests`` records what reached the proxy (method and path), so tests can count
attempts and see that nothing was downloaded. ``s3_admin`` talks to moto directly for setup.
"""

from __future__ import annotations

import http.client
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
REGION = "us-east-1"
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


@dataclass
class Fault:
    remaining: int
    status: int  # 0: close the connection without answering
    code: str
    match: str  # substring of "METHOD /path?query"; "" matches everything


class FaultProxy:
    """A reverse proxy to ``upstream`` that can fail chosen requests."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.requests: list[str] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                line = f"{self.command} {self.path}"
                fault = proxy._take_fault(line)
                if fault is not None and fault.status == 0:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if fault is not None:
                    payload = (
                        f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{fault.code}</Code>'
                        f"<Message>injected by the test proxy</Message></Error>"
                    ).encode()
                    self._reply(fault.status, [("Content-Type", "application/xml")], payload)
                    return
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=30)
                try:
                    headers = {
                        k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP
                    }
                    conn.request(self.command, self.path, body=body, headers=headers)
                    response = conn.getresponse()
                    data = response.read()
                    kept = [
                        (k, v)
                        for k, v in response.getheaders()
                        if k.lower() not in _HOP_BY_HOP and k.lower() != "content-length"
                    ]
                    self._reply(response.status, kept, data)
                finally:
                    conn.close()

            def _reply(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
                self.send_response(status)
                for key, value in headers:
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle  # noqa: N815

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        host, port = self._server.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    def _take_fault(self, line: str) -> Fault | None:
        with self._lock:
            self.requests.append(line)
            for fault in self._faults:
                if fault.remaining != 0 and fault.match in line:
                    fault.remaining -= 1  # negative: fails for ever
                    return fault
        return None

    def fail(
        self, times: int = 1, *, status: int = 500, code: str = "InternalError", match: str = ""
    ) -> None:
        """Answer the next ``times`` matching requests (-1: all of them) with an S3 error."""
        with self._lock:
            self._faults.append(Fault(times, status, code, match))

    def drop(self, times: int = 1, *, match: str = "") -> None:
        """Close the connection of the next ``times`` matching requests without answering."""
        with self._lock:
            self._faults.append(Fault(times, 0, "", match))

    def count(self, fragment: str) -> int:
        with self._lock:
            return sum(fragment in line for line in self.requests)

    def reset(self) -> None:
        with self._lock:
            self._faults.clear()
            self.requests.clear()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 (a free port); yields its endpoint URL."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
def _s3_proxy_session(s3_server: str) -> Iterator[FaultProxy]:
    host, _sep, port = s3_server.removeprefix("http://").rpartition(":")
    proxy = FaultProxy((host, int(port)))
    yield proxy
    proxy.close()


@pytest.fixture
def s3_proxy(_s3_proxy_session: FaultProxy) -> Iterator[FaultProxy]:
    """The fault proxy in front of moto, with no faults queued and an empty request log."""
    _s3_proxy_session.reset()
    yield _s3_proxy_session
    _s3_proxy_session.reset()


@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch, s3_proxy: FaultProxy) -> str:
    """Dummy AWS credentials and KEIRI_S3_ENDPOINT_URL pointing at the proxy; yields its URL."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_CREDENTIALS["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", DUMMY_CREDENTIALS["aws_secret_access_key"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("KEIRI_S3_ENDPOINT_URL", s3_proxy.url)
    return s3_proxy.url


@pytest.fixture(scope="session")
def s3_admin(s3_server: str) -> Any:
    """A boto3 client straight to moto (not through the proxy), for setting data up."""
    return boto3.client("s3", endpoint_url=s3_server, region_name=REGION, **DUMMY_CREDENTIALS)


@pytest.fixture
def s3_bucket(s3_admin: Any) -> str:
    """A fresh, empty bucket."""
    name = f"keiri-test-{uuid.uuid4().hex[:12]}"
    s3_admin.create_bucket(Bucket=name)
    return name
