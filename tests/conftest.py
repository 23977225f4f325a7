"""Test-wide fixtures: a clean environment per test, and the scripted LLM server plugin."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from keiri_agent.sandbox import SandboxExecutor

pytest_plugins = ["tests.support.fixtures"]

# Every variable keiri-agent reads, so a developer's own keys or .env never leak into a test.
_PREFIXES = ("KEIRI_", "OPENAI_", "AZURE_OPENAI_", "ANTHROPIC_")


# Fixtures that ingest the sample knowledge base with the bundled embedding model: the first test
# of the session to use one waits for its 660 texts to be embedded (tests.support.helpdesk
# sample_embedding_cache), minutes on a loaded two-core machine, more than the suite's 120 s.
SAMPLE_KB_FIXTURES = frozenset({"helpdesk_index_dir", "semantic_index"})
SAMPLE_KB_TIMEOUT_S = 900


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        uses = SAMPLE_KB_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if uses and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SAMPLE_KB_TIMEOUT_S))


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Run each test in its own empty directory with no provider or keiri settings."""
    for name in list(os.environ):
        if name.upper().startswith(_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    return workdir


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A directory every parent of which the sandbox's unprivileged uid can traverse.

    As root the sandboxed worker drops to uid nobody, which cannot enter pytest's tmp_path
    (under a 0700 directory); workspaces handed to the sandbox live here instead.
    """
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="keiri-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def sandbox_executor() -> Iterator[SandboxExecutor]:
    """One warm sandbox fork server shared by the tests that run generated code."""
    executor = SandboxExecutor()
    executor.warm()
    yield executor
    executor.close()
