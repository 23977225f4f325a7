"""Fixtures for agent tests: one warm sandbox for the session and workspaces it can reach."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from keiri_agent.sandbox import SandboxExecutor


@pytest.fixture(scope="session")
def sandbox_executor() -> Iterator[SandboxExecutor]:
    executor = SandboxExecutor()
    executor.warm()
    yield executor
    executor.close()


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A directory every parent of which the sandbox's unprivileged uid can traverse.

    pytest's tmp_path sits under a 0700 directory when running as root, where the worker
    (dropped to uid nobody) could not reach its workspace.
    """
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="keiri-agent-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
