"""HTTP plumbing of the scripted LLM server (standard library only).

A :class:`ThreadingHTTPServer` speaking HTTP/1.1 with keep-alive: JSON responses carry
a ``Content-Length``, server-sent-event streams use chunked transfer encoding and are
flushed per event, exactly what ``httpx`` (under the ``openai`` SDK) expects from a real
endpoint. Deciding *what* to answer is delegated to an :class:`App` (the
:class:`~tests.support.llm_server.ScriptedLLMServer`); this module only records, waits
and writes.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urlsplit

from tests.support import llm_wire as wire


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received. Header names are lower-cased; ``body`` is parsed JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    timestamp: float


@dataclass
class Response:
    """What to send back: a JSON ``payload``, or SSE ``events`` (a streaming response)."""

    status: int
    payload: Any = None
    events: list[dict[str, Any]] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class App(Protocol):
    """The request-answering side the HTTP layer talks to."""

    @property
    def stopping(self) -> threading.Event: ...

    def record(self, request: RecordedRequest) -> None: ...

    def respond(self, method: str, path: str, body: Any, bad_json: bool) -> Response: ...


class ScriptedHTTPServer(ThreadingHTTPServer):
    """Threading server on ``127.0.0.1:0`` that can cut its open keep-alive connections."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, app: App) -> None:
        self.app = app
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Shut down every open client socket so idle handler threads exit at once."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out or disconnect mid-response are expected in tests.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptedHTTPServer

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request stderr logging."""

    def _dispatch(self) -> None:
        app = self.server.app
        path = urlsplit(self.path).path
        raw = self._read_body()
        body: Any = None
        bad_json = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                bad_json = True
        headers = {name.lower(): value for name, value in self.headers.items()}
        app.record(RecordedRequest(self.command, path, headers, body, time.time()))
        response = app.respond(self.command, path, body, bad_json)
        if response.delay > 0 and app.stopping.wait(response.delay):
            self.close_connection = True  # the server is stopping: drop the request
            return
        if response.events is None:
            self._send_json(response)
        else:
            self._send_events(response)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                data += self.rfile.read(size)
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailer section
                pass
            return bytes(data)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _start(self, response: Response, content_type: str) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", content_type)
        for name, value in response.headers.items():
            self.send_header(name, value)

    def _send_json(self, response: Response) -> None:
        data = wire.dumps(response.payload)
        self._start(response, "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_events(self, response: Response) -> None:
        self._start(response, "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in [*(response.events or []), None]:
            payload = b"[DONE]" if event is None else wire.dumps(event)
            data = b"data: " + payload + b"\n\n"
            self.wfile.write(f"{len(data):X}\r\n".encode("ascii") + data + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
