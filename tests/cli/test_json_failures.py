"""Every command with ``--json`` prints exactly one JSON document on stdout, also when it fails,
and nothing else there: a script reading stdout always gets something it can parse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from keiri_agent.cli import app

runner = CliRunner()

# (command path, the rest of the command line, exit code, error code in the document)
FAILURES: list[tuple[str, list[str], int, str]] = [
    ("analyze", ["missing.csv", "売上を集計して"], 2, "FILE_UNREADABLE"),
    ("doctor", [], 2, "CONFIGURATION_ERROR"),  # with a malformed setting (below)
    ("demo", [], 2, "CONFIGURATION_ERROR"),
    ("extract", ["missing.pdf"], 1, "FILE_UNREADABLE"),
    ("convert", ["売上.csv を Parquet に", "--source", "missing.csv"], 2, "CONFIGURATION_ERROR"),
    ("plan validate", ["missing.yaml"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan dry-run", ["missing.yaml", "--var", "no-equals-sign"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan run", ["missing.yaml"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan resume", ["run_unknown"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan rerun", ["run_unknown", "--from", "a"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan runs", ["--status", "finished"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan generate", ["-i", "照合", "--retrieval", "grep"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan save", ["missing.yaml"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan versions", ["../outside"], 2, "PERMISSION_DENIED"),
    ("plan diff", ["keiri/close", "v1", "v2"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan approve", ["keiri/close", "v1"], 2, "INPUT_VALIDATION_FAILED"),
    ("plan reject", ["keiri/close", "latest"], 2, "INPUT_VALIDATION_FAILED"),
    ("audit verify", [], 2, "INPUT_VALIDATION_FAILED"),
    ("schedule add", ["keiri/close", "--business-day", "99"], 2, "INPUT_VALIDATION_FAILED"),
    ("schedule list", [], 2, "CONFIGURATION_ERROR"),  # with a malformed setting (below)
    ("schedule run-now", ["no-such-schedule"], 2, "DEPENDENCY_NOT_FOUND"),
    ("trigger add", ["keiri/close"], 2, "INPUT_VALIDATION_FAILED"),
    ("trigger list", [], 2, "CONFIGURATION_ERROR"),  # with a malformed setting (below)
    ("blocks list", ["--category", "no-such-category"], 2, "INPUT_VALIDATION_FAILED"),
    ("blocks show", ["no.such_block"], 2, "BLOCK_NOT_FOUND"),
    ("blocks search", ["照合", "--mode", "grep"], 2, "INPUT_VALIDATION_FAILED"),
    (
        "helpdesk ingest",
        ["--manual", "missing-folder", "--index", "ix"],
        2,
        "INPUT_VALIDATION_FAILED",
    ),
    ("helpdesk search", ["パスワード", "--tool", "web"], 2, "INPUT_VALIDATION_FAILED"),
    ("helpdesk ask", ["パスワードは？", "--index", "missing-index"], 2, "DEPENDENCY_NOT_FOUND"),
    ("helpdesk eval", ["--questions", "missing.jsonl", "--index", "ix"], 2, "FILE_UNREADABLE"),
    ("sandbox run", ["missing.py", "--workdir", "w"], 2, "FILE_UNREADABLE"),
    ("templates list", ["--category", "no-such-category"], 2, "INPUT_VALIDATION_FAILED"),
    ("templates show", ["no_such_template"], 2, "INPUT_VALIDATION_FAILED"),
    ("gc", ["--older-than", "0"], 2, "INPUT_VALIDATION_FAILED"),
    # sandbox doctor cannot fail on its own; a usage error is its failure.
    ("sandbox doctor", ["--no-such-option"], 2, "INPUT_VALIDATION_FAILED"),
]


def json_commands() -> set[str]:
    """Every command of the CLI that has a --json option, as "group sub"."""
    found: set[str] = set()

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])
        if any("--json" in getattr(p, "opts", ()) for p in command.params):
            found.add(" ".join(path))

    walk(typer.main.get_command(app), [])
    return found


def test_every_json_command_has_a_failure_case() -> None:
    assert json_commands() == {path for path, *_ in FAILURES}


@pytest.mark.parametrize(
    ("path", "args", "exit_code", "code"), FAILURES, ids=[case[0] for case in FAILURES]
)
def test_a_failing_json_command_prints_one_json_document(
    path: str,
    args: list[str],
    exit_code: int,
    code: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    if path in ("doctor", "demo", "schedule list", "trigger list"):
        monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "many")
    if path == "helpdesk ask":  # with a key: without one, the missing key is reported first
        monkeypatch.setenv("OPENAI_API_KEY", "sk-never-sent")

    result = runner.invoke(app, [*path.split(), *args, "--json"])

    assert result.exit_code == exit_code, result.output
    document = json.loads(result.stdout)  # one document, nothing before or after it
    if path == "extract":  # one entry per file, each with its own error
        (entry,) = document
        error = entry["error"]
    else:  # a result that failed (convert) or no result at all
        assert document["status"] in ("failed", "error")
        error = document["error"]
    assert error["code"] == code
    assert error["message"]
    assert error["hint"]
    assert "Traceback" not in result.output


def test_a_usage_error_of_a_json_command_is_a_json_document() -> None:
    result = runner.invoke(app, ["blocks", "list", "--json", "--no-such-option"])
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert document["status"] == "error"
    assert "--no-such-option" in document["error"]["message"]


def test_without_json_a_failure_is_japanese_text_on_stderr_only() -> None:
    result = runner.invoke(app, ["blocks", "show", "no.such_block"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "エラー（ないブロック）: " in result.stderr
    assert "ヒント:" in result.stderr
