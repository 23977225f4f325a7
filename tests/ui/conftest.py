"""Fixtures for the Streamlit app tests: a workspace root the sandbox can reach, and the app.

``open_page`` selects a page of the navigation as clicking its link does: ``AppTest.switch_page``
only knows pages defined by files, and the app's pages are functions registered under their
``url_path`` (Streamlit identifies such a page by the hash of that path).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from keiri_agent.ui import APP_PATH

# The first run imports pandas, LangGraph and the LLM clients; generated code runs in the sandbox.
APP_TIMEOUT_S = 120
# A test of the app runs the script several times (each within APP_TIMEOUT_S): on a loaded
# two-core machine their sum can pass the suite's 120 s per test.
UI_TEST_TIMEOUT_S = 600


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(UI_TEST_TIMEOUT_S))


@pytest.fixture
def workspace_root(public_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """KEIRI_WORKSPACE_ROOT under ``public_dir`` (set inside the test: the root conftest clears
    KEIRI_* variables at each test start)."""
    root = public_dir / "workspace"
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(root))
    return root


def open_page(app: AppTest, url_path: str) -> AppTest:
    """Show the page registered under ``url_path`` on the next ``run()``."""
    app._page_hash = calc_hash(url_path)
    return app


def run_page() -> None:
    """The 実行 page alone, for ``AppTest.from_function``."""
    from keiri_agent.ui.run.page import render

    render()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs, workspace and designs under ``tmp_path`` (returned)."""
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    return tmp_path


@pytest.fixture
def app() -> AppTest:
    """The whole app (navigation, sidebar, データ分析 page) as ``keiri-agent ui`` runs it."""
    return open_page(AppTest.from_file(str(APP_PATH), default_timeout=APP_TIMEOUT_S), "analysis")
