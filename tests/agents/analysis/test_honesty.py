"""The analysis agent never claims a success it did not earn (issue 24), through
`keiri-agent analyze --json` and the session, with the scripted LLM replying in the shapes real
models produce and generated code running in the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.agents.analysis import AnalysisContext, AnalysisSession, ExecutionResult
from keiri_agent.agents.analysis.honesty import UNVERIFIED_MESSAGE
from keiri_agent.agents.analysis.progress import describe_event
from keiri_agent.agents.analysis.prompts import PROMPT_BUDGET_CHARS, RECENT_IN_DETAIL
from keiri_agent.cli import app
from keiri_agent.errors import BlockError, LLMOutputError
from keiri_agent.events import read_events
from keiri_agent.sandbox import SandboxExecutor
from tests.support import ScriptedLLMServer

runner = CliRunner()

SALES_CSV = "取引先,金額\nあおば商事,120000\nミドリ物産,80000\nあおば商事,50000\n"
CHART_CODE = """import matplotlib.pyplot as plt
totals = df.groupby("取引先")["金額"].sum()
fig, ax = plt.subplots()
ax.bar(totals.index, totals.values)
fig.savefig("chart.png", dpi=50)
plt.close(fig)
print(totals.to_dict())
"""
ACT = {"next_action": "act", "instruction": "取引先別に合計する", "rationale": "集計が必要"}
FINALIZE = {"next_action": "finalize", "rationale": "要求を満たした"}
REPORT = {
    "title": "取引先別の売上",
    "conclusion": "あおば商事の売上が最も大きく、170,000円でした。",
    "evidence": ["あおば商事 170,000円"],
    "sections": [{"section_type": "image", "content": "chart.png", "description": "売上"}],
}
ENGLISH_REPORT = {
    "title": "Sales by vendor",
    "conclusion": "Aoba has the largest sales at 170,000 yen.",
    "evidence": ["Aoba 170,000 yen"],
    "sections": [],
}


def _codegen(code: str, *files: str) -> dict[str, object]:
    outputs = [{"file_name": n, "description": "図", "output_type": "figure"} for n in files]
    return {"code": code, "expected_outputs": outputs}


@pytest.fixture
def sales_csv(public_dir: Path) -> Path:
    path = public_dir / "売上.csv"
    path.write_text(SALES_CSV, encoding="utf-8")
    return path


def _analyze(sales_csv: Path, root: Path) -> tuple[int, dict[str, object]]:
    result = runner.invoke(
        app,
        [
            "analyze",
            str(sales_csv),
            "取引先別の売上を比べて",
            "--json",
            "--workspace-root",
            str(root),
        ],
    )
    return result.exit_code, json.loads(result.stdout)


def test_code_in_a_python_fence_runs_and_the_report_is_grounded(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=_codegen("```python\n" + CHART_CODE + "```", "chart.png"))
    llm_server.add_chat(json=FINALIZE)
    # The report arrives wrapped in prose, as many models send it.
    llm_server.add_chat(
        "レポートです。\n```json\n" + json.dumps(REPORT, ensure_ascii=False) + "\n```"
    )
    code, data = _analyze(sales_csv, public_dir / "ws")
    assert code == 0, data
    assert data["status"] == "success"
    assert data["grounded"] is True
    (run,) = data["execution_results"]  # type: ignore[misc]
    assert run["success"] is True
    assert "```" not in run["code"]
    assert any(Path(f).name == "chart.png" and Path(f).is_file() for f in data["files"])  # type: ignore[attr-defined]


def test_a_report_without_a_run_that_showed_anything_is_unverified_not_a_success(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=_codegen("total = df['金額'].sum()\n"))  # prints and saves nothing
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(
        json={**REPORT, "conclusion": "売上合計は 999,999 円でした。", "sections": []}
    )
    result = runner.invoke(
        app,
        ["analyze", str(sales_csv), "売上合計は？", "--json", "--workspace-root", str(public_dir)],
    )
    # Not a success: exit code 1, status unverified, and what was not backed on stderr.
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "unverified"
    assert data["grounded"] is False
    assert data["final_report"]["conclusion"] == "売上合計は 999,999 円でした。"  # kept
    (run,) = data["execution_results"]  # the run that showed nothing is there to inspect
    assert run["success"] is True
    assert not run["stdout"]
    assert UNVERIFIED_MESSAGE in result.stderr
    assert "コード実行: 1 回（失敗 0 回、出力のない成功 1 回）" in result.stderr
    report = Path(str(data["report_path"])).read_text(encoding="utf-8")
    assert "裏付けられていない" in report
    # The report prompt told the model that nothing was shown.
    assert "出力のあるコード実行が 1 度も成功していません" in json.dumps(
        llm_server.chat_requests()[-1], ensure_ascii=False
    )


def test_an_llm_failure_prints_status_error_and_the_turns_runs_and_charts_in_json(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=_codegen(CHART_CODE, "chart.png"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat('{"title": "取引先別', finish_reason="length")  # the report is cut
    code, data = _analyze(sales_csv, public_dir / "ws")
    assert code == 1
    assert data["status"] == "error"
    error = data["error"]
    assert error["code"] == "OUTPUT_TRUNCATED"  # type: ignore[index]
    assert "長さの上限" in error["message"]  # type: ignore[index]
    assert "turn" not in error["details"]  # type: ignore[index]
    (run,) = data["execution_results"]  # type: ignore[misc]
    assert run["success"] is True
    assert [Path(f).name for f in data["files"]] == ["chart.png"]  # type: ignore[attr-defined]
    assert data["final_report"] is None


def test_a_failed_run_event_carries_the_error_the_model_saw(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=_codegen("x = df['存在しない列']\n"))
    llm_server.add_chat(
        json={"next_action": "ask", "question": "列名を教えてください", "rationale": "列がない"}
    )
    code, data = _analyze(sales_csv, public_dir / "ws")
    assert code == 0
    assert data["status"] == "question"
    events = [json.loads(line) for line in Path(str(data["run_log"])).read_text().splitlines()]
    (failed,) = [e for e in events if e["event"] == "code_exec"]
    assert failed["success"] is False
    assert "KeyError" in failed["stderr"]
    assert "存在しない列" in failed["stderr"]
    # The progress line a person reads names it too, in Japanese (the model keeps Python's).
    (event,) = [e for e in read_events(str(data["run_log"])) if e.event == "code_exec"]
    assert "実行: 失敗（表や辞書にない列名・キーを使っています: 「存在しない列」（KeyError）" in (
        describe_event(event) or ""
    )
    # The agent's error event of the same run adds no line of Python's English after it (it
    # printed "エラー: KeyError: '存在しない列'" before): the agent goes on, the line said why.
    lines = [describe_event(e) for e in read_events(str(data["run_log"]))]
    shown = [line for line in lines if line]
    assert not [line for line in shown if "KeyError:" in line or "Traceback" in line], shown


@pytest.fixture
def session(
    public_dir: Path, sandbox_executor: SandboxExecutor, llm_server: ScriptedLLMServer
) -> AnalysisSession:
    session = AnalysisSession(
        workspace_root=public_dir / "workspace",
        runs_dir=public_dir / "runs",
        context=AnalysisContext(executor=sandbox_executor),
    )
    session.add_file(SALES_CSV.encode(), name="売上.csv")
    return session


def test_each_turn_keeps_its_own_report_file(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    for title in ("一回目", "二回目"):
        llm_server.add_chat(json=ACT)
        llm_server.add_chat(json=_codegen(CHART_CODE, "chart.png"))
        llm_server.add_chat(json=FINALIZE)
        llm_server.add_chat(json={**REPORT, "title": title})
    first = session.ask("比べて")
    second = session.ask("もう一度")
    assert first.report_path is not None
    assert second.report_path is not None
    assert first.report_path != second.report_path
    assert first.report_path.read_text(encoding="utf-8").startswith("# 一回目")
    assert second.report_path.read_text(encoding="utf-8").startswith("# 二回目")


def test_a_report_cut_at_the_length_limit_fails_with_the_runs_and_charts_kept(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=_codegen(CHART_CODE, "chart.png"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat('{"title": "取引先別', finish_reason="length")
    with pytest.raises(LLMOutputError) as info:
        session.ask("比べて")
    error = info.value.to_dict()  # what `--json` prints as its "error"
    assert error["code"] == "OUTPUT_TRUNCATED"
    assert "長さの上限で途中で切れました" in error["message"]
    turn = error["details"]["turn"]
    assert turn["status"] == "error"
    (run,) = turn["execution_results"]
    assert run["success"] is True
    assert "170000" in run["stdout"]
    assert [Path(f).name for f in turn["files"]] == ["chart.png"]
    assert Path(turn["files"][0]).is_file()


def test_an_english_report_is_sent_back_once_then_flagged(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=_codegen(CHART_CODE, "chart.png"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json=ENGLISH_REPORT)
    llm_server.add_chat(json=REPORT)  # the rewrite is Japanese
    turn = session.ask("比べて")
    assert turn.japanese is True
    assert "日本語ではありません" in json.dumps(llm_server.chat_requests()[-1], ensure_ascii=False)

    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json=ENGLISH_REPORT, repeat=True)
    turn = session.ask("まとめて")
    assert turn.japanese is False
    assert turn.report_path is not None
    assert "日本語で書かれていません" in turn.report_path.read_text(encoding="utf-8")


def test_prompts_stay_under_the_budget_however_long_the_session(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    long_code = "print('x')\n" * 300
    session.execution_results = [
        ExecutionResult(
            success=True,
            code=long_code,
            stdout="数値 " * 1000,
            instruction=f"分析 {n} 回目: " + "列を集計する" * 20,
            files_created=[f"chart_{n}.png"],
        )
        for n in range(200)
    ]
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json=REPORT)
    session.ask("まとめて")
    for request in llm_server.chat_requests():
        size = sum(len(str(m["content"])) for m in request["messages"])
        assert size < PROMPT_BUDGET_CHARS
    reason_prompt = json.dumps(llm_server.chat_requests()[0], ensure_ascii=False)
    assert "分析 199 回目" in reason_prompt  # the newest runs are there
    assert reason_prompt.count("標準出力") <= RECENT_IN_DETAIL  # older ones in one line each
    assert "件は省略" in reason_prompt  # and the oldest dropped with a count


def test_the_turn_deadline_ends_the_turn_with_a_clear_error(
    session: AnalysisSession, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_ANALYSIS_TURN_TIMEOUT_S", "0.5")
    llm_server.add_chat(json=ACT, delay=1.0)  # the reply arrives after the deadline
    with pytest.raises(BlockError) as info:
        session.ask("比べて")
    error = info.value
    assert error.code == "TIMEOUT_ERROR"
    assert "制限時間（0.5 秒）" in error.message
    assert "KEIRI_ANALYSIS_TURN_TIMEOUT_S" in error.hint
    assert error.details["turn"]["status"] == "error"
    assert llm_server.pending() == 0  # no code was generated after the deadline
