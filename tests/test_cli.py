"""The `keiri-agent` command: version, help, and doctor as a newcomer would use them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from keiri_agent import __version__
from keiri_agent.cli import app
from tests.support import ScriptedLLMServer

runner = CliRunner()


def test_version_and_help() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"keiri-agent {__version__}"
    assert __version__ != "0.0.0+unknown"
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "doctor" in result.output


def test_doctor_on_a_fresh_machine_explains_what_is_missing() -> None:
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "OPENAI_API_KEY" in result.output
    assert "openai:gpt-4.1-mini" in result.output
    assert "BM25" in result.output  # no embedding model: said, not hidden
    assert "KEIRI_HELPDESK_MIN_SCORE" not in result.output  # retired: not a setting to show


def test_doctor_masks_secrets_and_reports_usable_providers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-proj-VERYSECRETVALUE-9876"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-ANOTHERSECRET-4321")
    monkeypatch.setenv("KEIRI_LLM_MODEL_CODEACT", "anthropic:claude-sonnet-4-6")
    monkeypatch.setenv("KEIRI_LLM_MODEL_PLAN", "azure:keiri-gpt")
    result = runner.invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0
    assert "VERYSECRETVALUE" not in result.output
    assert "ANOTHERSECRET" not in result.output
    report = json.loads(result.output)
    assert report["settings"]["OPENAI_API_KEY"] == "****9876"
    assert report["providers"]["openai"]["usable"] is True
    assert report["providers"]["anthropic"]["usable"] is True
    assert report["providers"]["azure"]["missing"] == [
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "OPENAI_API_VERSION",
    ]
    assert report["roles"]["codeact"] == {
        "model": "anthropic:claude-sonnet-4-6",
        "usable": True,
        "missing": [],
        "overridden": True,
    }
    assert report["roles"]["plan"]["usable"] is False
    assert any("plan" in line for line in report["problems"])


def test_doctor_ping_reaches_the_configured_server(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("OK", repeat=True)
    result = runner.invoke(app, ["doctor", "--ping", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["pings"]["openai:scripted-model"]["ok"] is True
    assert report["providers"]["openai"]["endpoint"] == llm_server.url


def test_doctor_ping_failure_exits_non_zero(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(500, times=5)
    result = runner.invoke(app, ["doctor", "--ping", "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["pings"]["openai:scripted-model"]["ok"] is False


def test_malformed_setting_is_a_japanese_error_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL", "gpt-4o")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 2
    assert "設定値が不正です" in result.output
    assert "KEIRI_LLM_MODEL" in result.output
    assert "Traceback" not in result.output
