"""Whether personal data is masked before the models is said where an operator looks:
``keiri-agent doctor`` (text and JSON), the app's sidebar and ``/readyz``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from keiri_agent import doctor
from keiri_agent.cli import app as cli
from keiri_agent.server.ops import readiness
from keiri_agent.server.tasks import TaskRegistry
from tests.server.conftest import make_settings
from tests.ui.conftest import APP_PATH, APP_TIMEOUT_S, open_page

runner = CliRunner()


@pytest.fixture(scope="module")
def sandbox_rows() -> list[dict[str, Any]]:
    """The sandbox's layers, probed once for the file: doctor probes them in a throwaway child
    (3-4 s of waiting on a loaded machine each time) and what is asserted here is its privacy
    lines, so the six doctor runs below report the one real probe."""
    return doctor.sandbox_layers()


@pytest.mark.parametrize(("value", "on"), [(None, True), ("off", False), ("on", True)])
def test_doctor_says_whether_personal_data_is_masked(
    monkeypatch: pytest.MonkeyPatch,
    sandbox_rows: list[dict[str, Any]],
    value: str | None,
    on: bool,
) -> None:
    monkeypatch.setattr(doctor, "sandbox_layers", lambda: sandbox_rows)
    if value is not None:
        monkeypatch.setenv("KEIRI_LLM_MASK_PII", value)
    data = json.loads(runner.invoke(cli, ["doctor", "--json"]).stdout)
    assert data["privacy"]["mask_pii"] is on
    assert "マイナンバー" in data["privacy"]["masked"]
    assert "金額" in data["privacy"]["not_masked"]
    text = runner.invoke(cli, ["doctor"], env={"COLUMNS": "200"}).stdout.replace("\n", "")
    assert "個人情報のマスク:" in text
    assert ("KEIRI_LLM_MASK_PII=on" if on else "KEIRI_LLM_MASK_PII=off") in text


def test_readyz_says_whether_personal_data_is_masked(tmp_path: Path) -> None:
    report = readiness(TaskRegistry(make_settings(tmp_path, keiri_llm_mask_pii=False)))
    assert report["privacy"]["mask_pii"] is False
    assert "KEIRI_LLM_MASK_PII=off" in report["privacy"]["summary"]


def test_the_sidebar_says_whether_personal_data_is_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = open_page(AppTest.from_file(str(APP_PATH), default_timeout=APP_TIMEOUT_S), "analysis")
    page.run()
    assert "**個人情報のマスク**: オン" in "\n".join(m.value for m in page.sidebar.markdown)
    monkeypatch.setenv("KEIRI_LLM_MASK_PII", "off")
    page = open_page(AppTest.from_file(str(APP_PATH), default_timeout=APP_TIMEOUT_S), "analysis")
    page.run()
    assert "**個人情報のマスク**: オフ" in "\n".join(m.value for m in page.sidebar.markdown)
