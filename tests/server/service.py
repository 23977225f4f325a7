"""A real ``keiri-agent serve`` process for the service tests: start, wait until ready, stop.

The server runs as a child process in its own session (so SIGTERM and SIGKILL reach it the
way a process manager sends them), with its logs in files the tests read line by line.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from tests.server.conftest import Message, read_messages
from tests.support.processes import free_port, stop_process_group

START_TIMEOUT_S = 120.0
TASK_TIMEOUT_S = 180.0
EXIT_TIMEOUT_S = 120.0
PORT_ATTEMPTS = 5


@dataclass
class ServerProcess:
    """One ``keiri-agent serve`` child process."""

    root: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    args: list[str] = field(default_factory=list)  # more options of `serve`
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.root / f"server-{self.starts}.log"

    def start(self) -> ServerProcess:
        """Start the server (again, after a stop) and wait until it answers on a port it listens
        on itself. Another process may take the port between two starts, or between
        ``free_port`` and the bind: the server then starts on another free port (``url`` says
        which), and an answer from the other process is never taken for this server's."""
        self.starts += 1
        for _ in range(PORT_ATTEMPTS):
            if self._launch():
                return self
            self.port = free_port()
        raise AssertionError(f"serve: every port tried was taken\n{self._log()}")

    def _launch(self) -> bool:
        """True once the server listens on ``port`` and answers; False if it ended because
        another process holds the port."""
        command = [
            sys.executable,
            "-c",
            "import keiri_agent.cli.serve; from keiri_agent.cli import app; app()",
            "serve",
            "--port",
            str(self.port),
            *self.args,
        ]
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            command,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self.root,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        with self.client() as client:
            while True:
                if self.proc.poll() is not None:
                    assert port_taken(self.port), self._log()
                    return False
                if listens_on(self.proc.pid, self.port):
                    try:
                        if client.get("/healthz").status_code == 200:
                            return True
                    except httpx.TransportError:
                        pass
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.1)

    def _log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")

    def client(self, **kwargs: Any) -> httpx.Client:
        kwargs.setdefault("timeout", 60.0)
        return httpx.Client(base_url=self.url, trust_env=False, **kwargs)

    def signal(self, sig: signal.Signals) -> int:
        """Send ``sig`` and wait for the process to end; returns its exit code."""
        assert self.proc is not None
        os.killpg(self.proc.pid, sig)
        return self.proc.wait(timeout=EXIT_TIMEOUT_S)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc)

    def log_records(self, start: int | None = None) -> list[dict[str, Any]]:
        """The JSON log records of one run of the process (every line must be JSON)."""
        path = self.root / f"server-{start or self.starts}.log"
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def wait_status(
        self, task_id: str, accept: Callable[[str], bool], headers: dict[str, str] | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + TASK_TIMEOUT_S
        with self.client(headers=headers or {}) as client:
            while True:
                task: dict[str, Any] = client.get(f"/agent/tasks/{task_id}").json()
                if accept(str(task.get("status"))):
                    return task
                assert time.monotonic() < deadline, f"task stayed {task.get('status')}"
                time.sleep(0.1)


def listens_on(pid: int, port: int) -> bool:
    """Whether process ``pid`` listens on ``port`` (its own socket, not another process's)."""
    try:
        sockets = psutil.Process(pid).net_connections(kind="tcp")
    except psutil.NoSuchProcess:
        return False
    return any(s.status == psutil.CONN_LISTEN and s.laddr.port == port for s in sockets)


def port_taken(port: int) -> bool:
    """Whether another process listens on ``port`` (bound as the server binds: SO_REUSEADDR)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def sse_messages(
    server: ServerProcess,
    task_id: str,
    after: int = 0,
    on_message: Callable[[Message], None] = lambda _m: None,
) -> list[Message]:
    """Every SSE block of a task's stream until the server ends it."""
    headers = {"Last-Event-ID": str(after)} if after else {}
    with (
        server.client(timeout=httpx.Timeout(60.0, read=TASK_TIMEOUT_S)) as client,
        client.stream("GET", "/agent/sse", params={"task_id": task_id}, headers=headers) as r,
    ):
        assert r.status_code == 200, r.read()

        def stop(message: Message) -> bool:
            on_message(message)
            return False

        return [m for m in read_messages(r, stop) if m.event is not None]


def files_of(server: ServerProcess, task: dict[str, Any]) -> Iterator[tuple[str, bytes]]:
    with server.client() as client:
        for file in task["files"]:
            yield file["name"], client.get(file["url"]).content
