"""Fixtures for the API server tests: a real uvicorn on 127.0.0.1.

``serve`` starts ``create_app`` under uvicorn in a background thread on a free port (port 0)
and stops it after the test, so the tests talk real HTTP, real SSE and real disconnects.
The ``chromium`` fixture (Debian's chromium, installed when missing) comes from
``tests.support.fixtures``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
import uvicorn

from keiri_agent.config import Settings
from keiri_agent.server import TaskRegistry, create_app
from keiri_agent.server.lifecycle import Lifecycle
from keiri_agent.server.scheduler import Clock, utc_now
from keiri_agent.server.sse import DEFAULT_PING_S
from tests.support import ScriptedLLMServer

SERVER_START_TIMEOUT_S = 90.0
TASK_TIMEOUT_S = 120.0


@dataclass
class LiveServer:
    """A running app: its base URL, settings and task registry."""

    url: str
    settings: Settings
    registry: TaskRegistry
    server: uvicorn.Server
    thread: threading.Thread

    def client(self, **kwargs: Any) -> httpx.Client:
        # trust_env=False: a proxy configured in the environment must not see loopback traffic.
        return httpx.Client(base_url=self.url, trust_env=False, timeout=30.0, **kwargs)

    @property
    def lifecycle(self) -> Lifecycle:
        """The app's lifecycle: ``begin_shutdown()`` starts the drain a stop signal starts in
        ``keiri-agent serve`` (the app itself goes on answering, as it does for the requests
        in flight when the signal comes)."""
        life: Lifecycle = self.server.config.app.state.lifecycle  # type: ignore[union-attr]
        return life

    def stop(self) -> None:
        """Stop the server as ``keiri-agent serve`` stops at SIGTERM: its tasks are drained
        (``KEIRI_SHUTDOWN_TIMEOUT_S``), then it exits."""
        self.lifecycle.begin_shutdown()
        self.server.should_exit = True
        self.thread.join(SERVER_START_TIMEOUT_S)
        assert not self.thread.is_alive(), "the server did not stop"

    def wait_finished(self, task_id: str, timeout: float = TASK_TIMEOUT_S) -> str:
        """Wait until the task has settled (finished, or paused); returns its status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            task = self.registry.get(task_id)
            if not task.active:
                return str(task.status)
            time.sleep(0.05)
        raise AssertionError(f"task {task_id} did not finish in {timeout} s")


def make_settings(root: Path, **overrides: Any) -> Settings:
    return Settings(
        _env_file=None,
        keiri_workspace_root=root / "workspace",
        keiri_runs_dir=root / "runs",
        **overrides,
    )


def with_shared_data(root: Path, files: dict[str, str], **overrides: Any) -> Settings:
    """Settings whose shared data folder (``root/shared``, KEIRI_SHARED_DATA_DIRS) holds
    ``files`` (name → text): data every task may read by its name."""
    shared = root / "shared"
    shared.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (shared / name).write_text(text, encoding="utf-8")
    return make_settings(root, keiri_shared_data_dirs=str(shared), **overrides)


@dataclass
class Message:
    """One SSE block as it came over the wire (comments are kept, unlike in a browser)."""

    id: str | None = None
    event: str | None = None
    data: str | None = None
    retry: int | None = None
    comments: list[str] = field(default_factory=list)

    def json(self) -> Any:
        assert self.data is not None
        return json.loads(self.data)


def read_messages(
    response: httpx.Response, stop: Callable[[Message], bool] | None = None
) -> list[Message]:
    """Parse an SSE response into blocks; stop after the block ``stop`` accepts, or at EOF."""
    messages: list[Message] = []
    current = Message()
    for line in response.iter_lines():
        if line == "":
            if current != Message():
                messages.append(current)
                if stop is not None and stop(current):
                    return messages
            current = Message()
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "":
            current.comments.append(value)
        elif name == "data":
            current.data = value if current.data is None else current.data + "\n" + value
        elif name == "retry":
            current.retry = int(value)
        elif name in ("id", "event"):
            setattr(current, name, value)
    return messages


def events_of(messages: list[Message]) -> list[Message]:
    """The blocks that are events (not heartbeat comments)."""
    return [m for m in messages if m.event is not None]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def analysis_settings(public_dir: Path, llm_server: ScriptedLLMServer) -> Settings:
    """Settings for analysis tasks: a workspace the sandbox can reach and a shared data folder
    holding ``sales.csv``, made after ``llm_server`` so that the agent talks to it."""
    sales = pd.DataFrame({"月": ["4月", "5月"], "売上": [100, 200]}).to_csv(index=False)
    return with_shared_data(public_dir, {"sales.csv": sales})


@pytest.fixture
def serve() -> Iterator[Callable[..., LiveServer]]:
    """Start the app for given settings; every server is stopped after the test."""
    started: list[LiveServer] = []

    def start(
        settings: Settings, *, ping_s: float = DEFAULT_PING_S, clock: Clock | None = None
    ) -> LiveServer:
        registry = TaskRegistry(settings)
        app = create_app(settings, registry=registry, ping_s=ping_s, clock=clock or utc_now)
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=2
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="test-uvicorn", daemon=True)
        thread.start()
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        live = LiveServer(f"http://127.0.0.1:{port}", settings, registry, server, thread)
        started.append(live)
        return live

    yield start
    for live in started:
        live.server.should_exit = True
    for live in started:
        live.thread.join(15)
