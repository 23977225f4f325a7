"""`keiri-agent plan generate` and its answers file, as a person at a terminal uses them."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from typer.testing import CliRunner, Result

from keiri_agent.blocks.registry import default_registry
from keiri_agent.cli import app
from keiri_agent.plan import validate_file
from keiri_agent.users import os_user
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


def test_generate_says_when_it_saved_in_the_persons_zone(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    """The file is named by the UTC minute; the message says that minute in Tokyo time."""
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())

    result = runner.invoke(app, ["plan", "generate", "--instruction", INSTRUCTION])

    assert result.exit_code == 0, result.output
    (saved,) = (design_env / "designs" / "expense").glob("high_amount_*.yaml")
    stamp = saved.stem.rsplit("_", 1)[1][:12]
    utc = datetime.strptime(stamp, "%Y%m%d%H%M").replace(tzinfo=UTC)
    local = utc.astimezone(ZoneInfo("Asia/Tokyo"))
    assert f"✓ 保存しました: {saved}（{local:%Y-%m-%d %H:%M} JST 保存）" in result.stdout


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
    assert f"✓ 保存しました: {out}\n" in done.stdout  # a name of the user's: no stamp read
    plan = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert plan["vars"]["expense_file"] == str(EXPENSES)


def _generate_reconcile_by_compose() -> Result:
    """``plan generate`` of the reconciliation plan from three templates, compose mode, JSON."""
    return runner.invoke(
        app,
        [
            "plan", "generate", "-i", "請求書と入金明細を照合",
            "--templates", "evidence_zip_invoices,bank_statement,invoice_payment",
            "--apply-mode", "compose", "--plan-id", "keiri/reconcile", "--json",
        ],
    )  # fmt: skip


def test_generate_compose_mode_needs_no_llm(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    result = _generate_reconcile_by_compose()

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
    assert "コード " in result.stderr
    assert "[pick]" not in result.stderr  # a step by its name, not its node id
    assert "提案:" in result.stderr
    assert not (design_env / "designs").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--apply-mode", "magic"], "apply_mode"),
        (["--retrieval", "fuzzy"], "--retrieval"),
        (["--docs", "ない.pdf"], "ない.pdf"),
        (["--answers", "ない.yaml"], "回答ファイル"),
        (["--max-attempts", "0"], "--max-attempts 0"),
        (["--k", "31"], "--k 31"),
        (["--bind", "excel_report.table"], "の形ではありません"),
        (["--bind", "excel_report.table=invoice_list.invoices"], "--apply-mode compose"),
    ],
)
def test_generate_rejects_bad_options(design_env: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["plan", "generate", "-i", INSTRUCTION, *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert "ヒント" in result.stderr


def unwrapped(text: str) -> str:
    """The text without the line breaks Rich adds at the terminal width."""
    return text.replace("\n", "")


DUPLICATES = "請求書一覧の二重計上をチェックして、重複の疑いを Excel に出したい"
DUPLICATE_TEMPLATES = ["--templates", "invoice_list,duplicate_invoices,excel_report"]
COMPOSE = ["--apply-mode", "compose", "--plan-id", "check/duplicates"]


def test_compose_conflict_from_the_issue_completes_with_bind(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    base = ["plan", "generate", "-i", DUPLICATES, *DUPLICATE_TEMPLATES, *COMPOSE]

    stuck = runner.invoke(app, base)

    assert stuck.exit_code == 1
    assert "COMPOSE_AMBIGUOUS" in stuck.stderr
    assert "--bind excel_report.table=invoice_list.invoices" in unwrapped(stuck.stderr)

    out = design_env / "duplicates.yaml"
    bind = ["--bind", "excel_report.table=duplicate_invoices.duplicates", "--out", str(out)]
    done = runner.invoke(app, [*base, *bind, "--json"])

    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["status"] == "ok"
    assert data["saved"] == str(out)
    assert validate_file(out, default_registry(), env={}).valid
    plan = yaml.safe_load(out.read_text(encoding="utf-8"))
    writer = next(n for n in plan["graph"] if n["id"] == "excel_report_write_table")
    assert "${duplicate_invoices_find_duplicates.duplicates}" in json.dumps(
        writer["in"], ensure_ascii=False
    )
    assert llm_server.chat_requests() == []


def test_out_is_not_overwritten_without_force(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    out = design_env / "plan.yaml"
    out.write_text("# 手で直した Plan\n", encoding="utf-8")
    args = ["plan", "generate", "-i", "請求書と入金明細を照合", "--out", str(out), *COMPOSE]
    args += ["--templates", "evidence_zip_invoices,bank_statement,invoice_payment"]

    refused = runner.invoke(app, args)

    assert refused.exit_code == 2
    assert "すでにあります" in refused.stderr
    assert "--force" in refused.stderr
    assert out.read_text(encoding="utf-8") == "# 手で直した Plan\n"

    forced = runner.invoke(app, [*args, "--force"])

    assert forced.exit_code == 0, forced.output
    assert validate_file(out, default_registry(), env={}).valid


def test_max_attempts_and_k_reach_the_engine(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON, when=asks_for("PlanSkeleton"))
    llm_server.add_chat(
        json=wiring(source="${read.deposits}"), repeat=True, when=asks_for("LLMDesignModel")
    )

    result = runner.invoke(
        app, ["plan", "generate", "-i", INSTRUCTION, "--max-attempts", "3", "--k", "10", "--json"]
    )

    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "failed"
    assert data["metrics"]["attempts"] == 3
    wiring_calls = [r for r in llm_server.chat_requests() if asks_for("LLMDesignModel")(r)]
    assert len(wiring_calls) == 3
    assert len(data["candidates"]) == 10  # of all the bundled blocks
    assert "ui.interactive_input" in data["candidates"]


def test_failure_recommends_templates_for_a_japanese_sentence(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    # table.filter is no candidate for a duplicates request: the skeleton uses table.dedupe
    steps = [
        {**step, "block": "table.dedupe"} if step["block"] == "table.filter" else step
        for step in SKELETON["steps"]
    ]
    llm_server.add_chat(json={**SKELETON, "steps": steps}, when=asks_for("PlanSkeleton"))
    llm_server.add_chat(
        json=wiring(source="${read.deposits}"), repeat=True, when=asks_for("LLMDesignModel")
    )

    result = runner.invoke(app, ["plan", "generate", "-i", DUPLICATES])

    assert result.exit_code == 1
    assert "（duplicate_invoices）を選んで再生成すると安定します" in unwrapped(result.stderr)


def test_fallback_flag_returns_the_marked_fallback_plan(
    design_env: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_error(500, "upstream down", times=2)
    out = tmp_path / "fallback.yaml"

    without = runner.invoke(app, ["plan", "generate", "-i", INSTRUCTION])
    assert without.exit_code != 0
    assert "エラー（AI サービスの失敗）: " in unwrapped(without.stderr)

    result = runner.invoke(
        app, ["plan", "generate", "-i", INSTRUCTION, "--fallback", "--out", str(out)]
    )

    assert result.exit_code == 0, result.output
    assert "代替 Plan です" in unwrapped(result.stderr)
    assert "fallback" in result.stdout
    assert validate_file(out, default_registry(), env={}).valid


def test_the_blocks_left_out_are_printed_with_the_reason(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())

    result = runner.invoke(app, ["plan", "generate", "-i", INSTRUCTION, "--plan-id", "expense/x"])

    assert result.exit_code == 0, result.output
    text = unwrapped(result.stdout)
    count = int(text.split("候補ブロック（")[1].split(" 件")[0])
    assert count <= 12
    assert f"除外 {len(default_registry().list()) - count} 件（" in text
    chart = default_registry().get("report.chart")
    assert f"  - 「{chart.label}」（report.chart）: " in text or "ほか" in text
    # each candidate by the label people read, its id after it
    listed = text.split("候補ブロック（")[1].split("除外 ")[0].split(": ", 1)[1].split(", ")
    assert len(listed) == count
    assert [
        i for i in listed if not re.fullmatch(r"「[^」]+」（[a-z0-9_.]+(?:@[0-9.]+)?）", i)
    ] == []


def test_a_generated_plan_is_kept_as_a_version_with_its_author_and_hash(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    result = _generate_reconcile_by_compose()

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    text = Path(data["saved"]).read_bytes()
    assert data["version"]["version"] == hashlib.sha256(text).hexdigest()
    assert (data["version"]["author"], data["version"]["number"]) == (os_user(), 1)
    assert data["version"]["message"] == "自動生成: 請求書と入金明細を照合"
    listed = runner.invoke(app, ["plan", "versions", "keiri/reconcile", "--json"])
    (version,) = json.loads(listed.stdout)["versions"]
    assert (version["version"], version["status"]) == (data["version"]["version"], "pending")


def test_a_missing_answers_file_is_named_like_every_file_the_user_gives(
    design_env: Path,
) -> None:
    result = runner.invoke(
        app, ["plan", "generate", "-i", INSTRUCTION, "--answers", "ない.yaml", "--json"]
    )
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "INPUT_VALIDATION_FAILED"
    assert error["message"] == "回答ファイル（--answers）に指定した「ない.yaml」が見つかりません。"
    assert error["details"] == {"answers": "ない.yaml"}
