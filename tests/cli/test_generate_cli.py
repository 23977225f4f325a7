"""`keiri-agent plan generate` and its answers file, as a person at a terminal uses them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.blocks.registry import default_registry
from keiri_agent.cli import app
from keiri_agent.plan.validator import validate_file
from tests.design.test_generate import EXPENSES, INSTRUCTION, SKELETON, wiring
from tests.support.llm_server import ScriptedLLMServer

runner = CliRunner()


def asks_for(tool: str) -> Callable[[dict[str, Any]], bool]:
    """A scripted step for requests whose structured output is ``tool``."""
    return lambda body: body["tools"][0]["function"]["name"] == tool


def test_generate_saves_a_valid_plan_under_designs(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())

    result = runner.invoke(app, ["plan", "generate", "--instruction", INSTRUCTION, "--json"])

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "ok"
    saved = Path(data["saved"])
    assert saved.parent == design_env / "designs" / "expense"
    assert saved.name.startswith("high_amount_")
    assert saved.suffix == ".yaml"
    assert validate_file(saved, default_registry(), env={}).valid


def test_generate_asks_then_completes_with_an_answers_file(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON, repeat=True, when=asks_for("PlanSkeleton"))
    llm_server.add_chat(
        json=wiring(expense_file=None), repeat=True, when=asks_for("LLMDesignModel")
    )
    out = design_env / "plan.yaml"

    asked = runner.invoke(app, ["plan", "generate", "-i", INSTRUCTION, "--out", str(out)])

    assert asked.exit_code == 1
    assert "expense_file" in asked.stderr
    assert "回答ファイルの例" in asked.stderr
    assert not out.exists()

    answers = design_env / "answers.yaml"
    answers.write_text(yaml.safe_dump({"expense_file": str(EXPENSES)}, allow_unicode=True), "utf-8")
    done = runner.invoke(
        app, ["plan", "generate", "-i", INSTRUCTION, "--answers", str(answers), "--out", str(out)]
    )

    assert done.exit_code == 0, done.output
    assert "保存しました" in done.stdout
    plan = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert plan["vars"]["expense_file"] == str(EXPENSES)


def test_generate_compose_mode_needs_no_llm(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    result = runner.invoke(
        app,
        [
            "plan", "generate", "-i", "請求書と入金明細を照合",
            "--templates", "evidence_zip_invoices,bank_statement,invoice_payment",
            "--apply-mode", "compose", "--plan-id", "keiri/reconcile", "--json",
        ],
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "ok"
    assert llm_server.chat_requests() == []


def test_generate_reports_failures_in_japanese(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON, when=asks_for("PlanSkeleton"))
    llm_server.add_chat(
        json=wiring(source="${read.deposits}"), repeat=True, when=asks_for("LLMDesignModel")
    )

    result = runner.invoke(app, ["plan", "generate", "-i", INSTRUCTION])

    assert result.exit_code == 1
    assert "Plan を完成できませんでした" in result.stderr
    assert "提案:" in result.stderr
    assert not (design_env / "designs").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--apply-mode", "magic"], "apply_mode"),
        (["--retrieval", "fuzzy"], "--retrieval"),
        (["--docs", "ない.pdf"], "ない.pdf"),
        (["--answers", "ない.yaml"], "回答ファイル"),
    ],
)
def test_generate_rejects_bad_options(design_env: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["plan", "generate", "-i", INSTRUCTION, *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert "ヒント" in result.stderr
