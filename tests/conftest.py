"""Test-wide fixtures: a clean environment per test, and the scripted LLM server plugin."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["tests.support.fixtures"]

# Every variable keiri-agent reads, so a developer's own keys or .env never leak into a test.
_PREFIXES = ("KEIRI_", "OPENAI_", "AZURE_OPENAI_", "ANTHROPIC_")


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
