"""`keiri-agent helpdesk ask` as a user runs it: the sample knowledge base (ingested once for
this module) and the scripted LLM server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import keiri_agent.cli.helpdesk_ask  # noqa: F401  (registers `helpdesk ask`)
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.agents.helpdesk.models import AgentResult, citation
from keiri_agent.cli import app
from tests.support.helpdesk import HelpDeskScript

runner = CliRunner()
TASK = "パスワード再設定の手順を調べる"
QUERY = "パスワード 再設定"


@pytest.fixture
def script(helpdesk_script: HelpDeskScript) -> HelpDeskScript:
    return helpdesk_script


def top_citation(helpdesk_index_dir: Path) -> str:
    with KnowledgeBase.open(helpdesk_index_dir) as kb:
        return citation(kb.search_manual(QUERY, 3)[0])


def script_answer(script: HelpDeskScript, cite: str) -> None:
    script.plan(TASK)
    script.subtask(TASK, QUERY, f"ログイン画面の「パスワードをお忘れの方」から再設定します{cite}")
    script.final(f"ログイン画面の「パスワードをお忘れの方」から再設定できます{cite}。")


def test_ask_prints_the_plan_the_answer_and_its_sources(
    script: HelpDeskScript, helpdesk_index_dir: Path
) -> None:
    cite = top_citation(helpdesk_index_dir)
    assert "XYZシステム_ユーザーマニュアル.pdf p." in cite
    script_answer(script, cite)

    result = runner.invoke(
        app, ["helpdesk", "ask", "パスワードの再設定方法は？", "--index", str(helpdesk_index_dir)]
    )

    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"計画:\n  1. {TASK}（解決、試行 1 回）" in out
    assert f"回答:\nログイン画面の「パスワードをお忘れの方」から再設定できます{cite}。" in out
    assert f"出典:\n  - {cite}" in out
    assert "LLM: 5 回" in out
    assert "実行ログ: " in out
    # Progress went to stderr while the agent worked.
    assert "[計画立案] 開始" in result.stderr
    assert "[サブタスク 1: ツール選択] 開始" in result.stderr
    assert "[計画立案]" not in out


def test_ask_json_prints_the_agent_result(script: HelpDeskScript, helpdesk_index_dir: Path) -> None:
    cite = top_citation(helpdesk_index_dir)
    script_answer(script, cite)

    result = runner.invoke(
        app,
        [
            "helpdesk",
            "ask",
            "パスワードの再設定方法は？",
            "--index",
            str(helpdesk_index_dir),
            "--json",
        ],
    )

    assert result.exit_code == 0, result.output
    agent_result = AgentResult.model_validate(json.loads(result.stdout))
    assert agent_result.plan.subtasks == [TASK]
    assert agent_result.sources[0].citation == cite
    assert agent_result.sources[0].file_name == "XYZシステム_ユーザーマニュアル.pdf"
    assert agent_result.usage.calls == 5
    assert agent_result.usage.total_tokens > 0
    assert agent_result.run_log is not None
    assert Path(agent_result.run_log).is_file()


def test_a_missing_knowledge_base_exits_2_with_a_hint(
    script: HelpDeskScript, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, ["helpdesk", "ask", "再設定は？", "--index", str(tmp_path / "missing")]
    )
    assert result.exit_code == 2
    assert "ナレッジベース" in result.stderr
    assert "ヒント:" in result.stderr
    assert "helpdesk ingest" in result.stderr
    assert script.server.chat_requests() == []


def test_an_llm_failure_exits_1(script: HelpDeskScript, helpdesk_index_dir: Path) -> None:
    script.server.add_error(500, "upstream exploded")
    result = runner.invoke(
        app, ["helpdesk", "ask", "再設定は？", "--index", str(helpdesk_index_dir)]
    )
    assert result.exit_code == 1
    assert "エラー（AI サービスの失敗）: " in result.stderr
    assert "Traceback" not in result.output
