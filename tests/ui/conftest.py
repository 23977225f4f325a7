"""Fixtures for the Streamlit app tests: a workspace root the sandbox can reach, and the app."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.ui import APP_PATH

# The first run imports pandas, LangGraph and the LLM clients; generated code runs in the sandbox.
APP_TIMEOUT_S = 60


@pytest.fixture
def workspace_root(public_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """KEIRI_WORKSPACE_ROOT under ``public_dir`` (set inside the test: the root conftest clears
    KEIRI_* variables at each test start)."""
    root = public_dir / "workspace"
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(root))
    return root


@pytest.fixture
def app() -> AppTest:
    """The whole app (navigation, sidebar, データ分析 page) as ``keiri-agent ui`` runs it."""
    return AppTest.from_file(str(APP_PATH), default_timeout=APP_TIMEOUT_S)
