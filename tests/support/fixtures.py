"""Pytest fixtures around :class:`~tests.support.llm_server.ScriptedLLMServer`.

Loaded as a plugin via ``pytest_plugins = ["tests.support.fixtures"]`` in the root
``tests/conftest.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.support.browser import chromium_args, ensure_chromium
from tests.support.helpdesk import HelpDeskScript
from tests.support.llm_server import ScriptedLLMServer

TEST_API_KEY = "sk-test-scripted-0000"
TEST_MODEL_SPEC = "openai:scripted-model"


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLMServer]:
    """A fresh scripted LLM server that the product code is configured to use.

    Points ``OPENAI_BASE_URL`` at the server, sets a dummy ``OPENAI_API_KEY``, selects
    ``KEIRI_LLM_MODEL=openai:scripted-model`` and shortens the product's retry backoff.
    Variables that would send traffic elsewhere (``OPENAI_API_BASE``, the LangSmith
    gateway, an HTTP proxy for 127.0.0.1) are neutralized. Script replies with
    ``llm_server.add_chat(...)``; the server is stopped after the test.
    """
    server = ScriptedLLMServer().start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
        monkeypatch.setenv("KEIRI_LLM_MODEL", TEST_MODEL_SPEC)
        monkeypatch.setenv("KEIRI_LLM_RETRY_BACKOFF_S", "0.01")
        # langchain_openai prefers OPENAI_API_BASE / LANGSMITH_GATEWAY over OPENAI_BASE_URL.
        monkeypatch.delenv("OPENAI_API_BASE", raising=False)
        monkeypatch.delenv("LANGSMITH_GATEWAY", raising=False)
        no_proxy = os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or ""
        bypass = ",".join(filter(None, [no_proxy, "127.0.0.1", "localhost"]))
        monkeypatch.setenv("NO_PROXY", bypass)
        monkeypatch.setenv("no_proxy", bypass)
        yield server
    finally:
        server.stop()


@pytest.fixture
def design_env(
    llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Plan generation against the scripted server: runs, designs and caches under tmp_path,
    no embedding model (retrieval is BM25), no retries, no fallback."""
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    monkeypatch.setenv("KEIRI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    monkeypatch.delenv("KEIRI_LLM_MODEL_EMBEDDING", raising=False)
    monkeypatch.delenv("KEIRI_AGENT_LLM_FALLBACK", raising=False)
    return tmp_path


@pytest.fixture
def helpdesk_script(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> HelpDeskScript:
    """Scripted replies for the help-desk agent (no retries, runs under tmp_path)."""
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    return HelpDeskScript(llm_server)


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium for Playwright (installed when missing and root, else the test skips)."""
    return ensure_chromium()


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Browser]:
    """One headless Chromium for the pages of a test module."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=chromium_args()
        )
        yield launched
        launched.close()


@pytest.fixture
def convert_env(tmp_path: Path, public_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The conversion pipeline under tmp_path: runs and workspace there, CodeAct under a folder
    the sandbox user can reach (``public_dir``), no LLM retries. Returns tmp_path."""
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_CODEACT_ROOT", str(public_dir / "codeact"))
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    return tmp_path
