"""Start-up of the command line: what makes a command slow to start, checked without a clock.

``convert`` took 3.6 s of CPU to say there was no key (issue 33): it loaded its pipeline
(LangGraph, LangChain, the OpenAI SDK, pandas, matplotlib) and opened a run log before the first
model call found the key missing. A command that calls a model now checks the key first
(``require_llm``); these tests run each one without a key in a fresh interpreter and look at
which modules it loaded and what it wrote. Wall time is the benchmark's business
(benchmarks/cli_start.py, budget 1.5 s); the tests check that it measures every command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from benchmarks.cli_start import NO_KEY_ARGS, SAMPLE_CSV, cases, model_commands
from typer.testing import CliRunner

from keiri_agent.cli import app

runner = CliRunner()

# Loaded only by the work itself: the SDKs, LangGraph, the data and document libraries, the
# agents' pipelines, the LLM layer and the sandbox.
HEAVY_PACKAGES = frozenset(
    {
        "anthropic",
        "boto3",
        "botocore",
        "langchain_anthropic",
        "langchain_core",
        "langchain_openai",
        "langgraph",
        "langsmith",
        "matplotlib",
        "openai",
        "openpyxl",
        "pandas",
        "pypdfium2",
        "qdrant_client",
        "sudachipy",
    }
)
# The LLM layer's package and its pure-Python notices (``field_problems``) are light since its
# ``__init__`` loads names on first use; its clients, providers and repair pull in the SDKs.
HEAVY_KEIRI = (
    "keiri_agent.agents",
    "keiri_agent.design.engine",
    "keiri_agent.llm.client",
    "keiri_agent.llm.providers",
    "keiri_agent.llm.repair",
    "keiri_agent.sandbox",
)
# Runs the app with the given arguments, then writes the names of the loaded modules to the file
# named by the first argument (also when the command exits with an error).
RUN_AND_LIST_MODULES = """
import json, sys
out = sys.argv.pop(1)
sys.argv[0] = "keiri-agent"
from keiri_agent.cli import app
try:
    app()
finally:
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(sorted(sys.modules), handle)
"""
# Runs --help of each command line given as a JSON list, then prints the loaded modules.
HELP_AND_LIST_MODULES = """
import json, sys
from keiri_agent.cli import app
for words in json.loads(sys.argv[1]):
    try:
        app([*words, "--help"], prog_name="keiri-agent")
    except SystemExit as exc:
        assert exc.code == 0, (words, exc.code)
print(json.dumps(sorted(sys.modules)))
"""


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY_PACKAGES or m.startswith(HEAVY_KEIRI)]


def every_command() -> list[tuple[str, ...]]:
    """Every command and group of the app, walked here independently of the benchmark."""
    found: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


def test_the_benchmark_measures_every_command_and_every_missing_key() -> None:
    measured = {case.label: case for case in cases()}

    for path in every_command():
        assert " ".join((*path, "--help")) in measured
    # The commands that call a model are found in the app (not listed by hand): the four of
    # today at least, each with its missing-key case.
    assert {"analyze", "convert", "helpdesk ask", "plan generate"} <= model_commands()
    assert model_commands() == set(NO_KEY_ARGS)
    for command in NO_KEY_ARGS:
        case = measured[f"{command} (no key)"]
        assert case.exit_code == 2
        assert case.stderr_has == "OPENAI_API_KEY"


@pytest.mark.parametrize("command", sorted(NO_KEY_ARGS))
def test_a_missing_key_is_reported_before_anything_heavy_is_loaded(
    command: str, isolated_env: Path, helpdesk_index_dir: Path, tmp_path: Path
) -> None:
    listing = tmp_path / "modules.json"
    env = {**os.environ, "KEIRI_HELPDESK_INDEX": str(helpdesk_index_dir)}  # no key, no base URL

    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_MODULES, str(listing),
         *command.split(), *NO_KEY_ARGS[command]],
        env=env, cwd=isolated_env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert "エラー（設定の誤り）: " in done.stderr
    assert "OPENAI_API_KEY" in done.stderr
    assert "ヒント: 環境変数または .env に OPENAI_API_KEY を設定してください。" in done.stderr
    assert heavy(json.loads(listing.read_text(encoding="utf-8"))) == []
    assert list(isolated_env.iterdir()) == []  # no run log, no workspace: nothing half-made


def test_help_of_every_command_loads_nothing_heavy(isolated_env: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", HELP_AND_LIST_MODULES, json.dumps(every_command())],
        env=dict(os.environ), cwd=isolated_env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert heavy(json.loads(done.stdout.splitlines()[-1])) == []


def test_the_key_checked_is_that_of_the_model_the_command_calls_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-sent")
    monkeypatch.setenv("KEIRI_LLM_MODEL_INTERPRET", "anthropic:claude-sonnet-4-6")

    result = runner.invoke(app, ["convert", "CSV に変換して", "--source", str(SAMPLE_CSV)])

    assert result.exit_code == 2
    assert (
        "LLM プロバイダー 'anthropic' を使うための設定がありません（用途: 変換: 要求の解釈）"
        in (result.stderr)
    )
    assert "ANTHROPIC_API_KEY" in result.stderr


COMPOSE = [
    "--apply-mode", "compose", "--plan-id", "keiri/reconcile",
    "--templates", "evidence_zip_invoices,bank_statement,invoice_payment",
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "shown"),
    # --fallback: the engine's failure becomes the fallback plan; compose calls no model
    [(["--fallback"], "代替 Plan です"), (COMPOSE, "保存しました")],
    ids=["fallback", "compose"],
)
def test_plan_generate_that_needs_no_model_needs_no_key(
    args: list[str], shown: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("RUNS", "DESIGNS", "CACHE"):
        monkeypatch.setenv(f"KEIRI_{name}_DIR", str(tmp_path / name.lower()))

    result = runner.invoke(app, ["plan", "generate", "-i", "請求書と入金明細を照合", *args])

    assert result.exit_code == 0, result.output
    assert shown in result.output.replace("\n", "")
    assert list((tmp_path / "designs").rglob("*.yaml"))


def test_analyze_without_a_question_still_opens_the_conversation_without_a_key() -> None:
    result = runner.invoke(app, ["analyze", str(SAMPLE_CSV)], input="\n")

    assert result.exit_code == 0, result.output
    assert "読み込みました: 売上明細.csv" in result.stderr
    assert "対話モードです" in result.stderr
