"""`keiri-agent analyze` as a user runs it, against the scripted LLM server and the real sandbox.

The command builds its own session, so generated code runs in the process-wide sandbox
executor; workspaces go under a directory its unprivileged uid can reach (see
``tests/agents/conftest.py``: pytest's tmp_path cannot be reached when running as root).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from keiri_agent.agents.analysis.honesty import UNVERIFIED_HINT, UNVERIFIED_MESSAGE
from keiri_agent.cli import app
from tests.support import ScriptedLLMServer

runner = CliRunner()

SALES_CSV = "取引先,金額,月\nあおば商事,120000,2024-04\nミドリ物産,80000,2024-04\nあおば商事,50000,2024-05\n"
CHART_CODE = """import matplotlib.pyplot as plt
totals = df.groupby("取引先")["金額"].sum().sort_values(ascending=False)
fig, ax = plt.subplots()
ax.bar(totals.index, totals.values)
ax.set_title("取引先別の売上合計")
fig.savefig("sales_by_vendor.png", dpi=60)
plt.close(fig)
print(totals.to_dict())
"""
FINALIZE = {"next_action": "finalize", "rationale": "要求を満たした"}
REPORT = {
    "title": "取引先別の売上",
    "conclusion": "あおば商事の売上が最も大きく、170,000円でした。",
    "evidence": ["あおば商事 170,000円、ミドリ物産 80,000円"],
    "sections": [
        {"section_type": "image", "content": "sales_by_vendor.png", "description": "取引先別売上"}
    ],
    "suggestions": ["月別の推移も確認する"],
}
QUESTION = "「伸び」は前月比と前年同月比のどちらですか？"


@pytest.fixture
def sales_csv(public_dir: Path) -> Path:
    path = public_dir / "売上.csv"
    path.write_text(SALES_CSV, encoding="utf-8")
    return path


def _act(instruction: str) -> dict[str, object]:
    return {"next_action": "act", "instruction": instruction, "rationale": "集計が必要"}


def _codegen(code: str, *files: tuple[str, str]) -> dict[str, object]:
    outputs = [{"file_name": n, "description": "出力", "output_type": k} for n, k in files]
    return {"code": code, "expected_outputs": outputs}


def _script_chart_run(server: ScriptedLLMServer) -> None:
    server.add_chat(json=_act("取引先別の売上合計を棒グラフにする"))
    server.add_chat(json=_codegen(CHART_CODE, ("sales_by_vendor.png", "figure")))
    server.add_chat(json=FINALIZE)
    server.add_chat(json=REPORT)


def test_one_request_prints_the_report_markdown_and_the_workspace(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    _script_chart_run(llm_server)
    root = public_dir / "ws"
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "取引先別の売上を比べて", "--workspace-root", str(root)]
    )
    assert result.exit_code == 0, result.output
    assert llm_server.pending() == 0
    assert result.stdout.startswith("# 取引先別の売上")
    assert "## 結論\n\nあおば商事の売上が最も大きく" in result.stdout
    assert "![取引先別売上](sales_by_vendor.png)" in result.stdout
    assert "## 追加の分析案" in result.stdout
    (workspace,) = root.iterdir()
    # Named by the session's start in UTC, shown with that start in Tokyo time, labelled.
    utc = datetime.strptime(workspace.name[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    local = utc.astimezone(ZoneInfo("Asia/Tokyo"))
    assert f"作業ディレクトリ: {workspace}（開始 {local:%Y-%m-%d %H:%M:%S} JST）" in result.stdout
    assert (workspace / "sales_by_vendor.png").stat().st_size > 1000
    assert (workspace / "report.md").read_text(encoding="utf-8") in result.stdout
    assert (workspace / "売上.csv").read_text(encoding="utf-8") == SALES_CSV
    # Progress went to stderr while the graph ran, not into the report on stdout.
    for line in ("読み込みました: 売上.csv（3 行 × 3 列", "[判断] 開始", "コードを生成しました"):
        assert line in result.stderr
    assert "[判断]" not in result.stdout


def test_json_output_has_the_documented_shape(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    _script_chart_run(llm_server)
    result = runner.invoke(
        app,
        ["analyze", str(sales_csv), "売上を比べて", "--json", "--workspace-root", str(public_dir)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {
        "workspace",
        "report_path",
        "next_action",
        "question",
        "loop_count",
        "final_report",
        "execution_results",
    } <= data.keys()
    assert data["next_action"] == "finalize"
    assert data["question"] is None
    assert data["loop_count"] == 2
    assert data["report_path"] == str(Path(data["workspace"]) / "report.md")
    assert Path(data["report_path"]).is_file()
    assert data["final_report"]["conclusion"].startswith("あおば商事")
    (execution,) = data["execution_results"]
    assert execution["success"] is True
    assert "170000" in execution["stdout"]
    assert data["run_log"]
    assert Path(data["run_log"]).is_file()


def test_a_question_from_the_agent_is_printed_and_exits_zero(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    llm_server.add_chat(json={"next_action": "ask", "question": QUESTION, "rationale": "曖昧"})
    args = ["analyze", str(sales_csv), "伸びを見せて", "--workspace-root", str(public_dir)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"エージェントからの質問: {QUESTION}" in result.stdout
    assert "対話モード" in result.stderr  # how to answer it

    llm_server.add_chat(json={"next_action": "ask", "question": QUESTION, "rationale": "曖昧"})
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["next_action"] == "ask"
    assert data["question"] == QUESTION
    assert data["report_path"] is None
    assert data["final_report"] is None


def test_cp932_csv_is_read(llm_server: ScriptedLLMServer, public_dir: Path) -> None:
    data_file = public_dir / "取引先.csv"
    data_file.write_bytes("取引先,金額\n髙橋工業,5000\n①商店,300\n".encode("cp932"))
    llm_server.add_chat(json=_act("取引先の一覧と合計を出す"))
    llm_server.add_chat(json=_codegen("print(df['取引先'].tolist(), df['金額'].sum())"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    result = runner.invoke(
        app,
        ["analyze", str(data_file), "合計は？", "--json", "--workspace-root", str(public_dir)],
    )
    assert result.exit_code == 0, result.output
    (execution,) = json.loads(result.stdout)["execution_results"]
    assert execution["stdout"].strip() == "['髙橋工業', '①商店'] 5300"


def test_missing_data_file_exits_2_with_a_japanese_message(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    root = public_dir / "ws"
    for args in (
        ["analyze", "ない.csv", "売上を見せて"],
        ["analyze", str(sales_csv), "ない.csv"],  # not mistaken for the question
        ["analyze", str(sales_csv), "売上", "を見せて"],  # an unquoted question
    ):
        result = runner.invoke(app, [*args, "--workspace-root", str(root)])
        assert result.exit_code == 2, result.output
        assert "が見つかりません" in result.stderr
        assert "ヒント:" in result.stderr
        assert "Traceback" not in result.output
    result = runner.invoke(app, ["analyze", "売上を見せて"])
    assert result.exit_code == 2
    assert "データファイルが指定されていません" in result.stderr
    assert not root.exists()  # nothing was created for a request that could not start
    assert llm_server.chat_requests() == []


def test_unreadable_file_exits_2_and_leaves_no_workspace(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    broken = public_dir / "壊れた.xlsx"
    broken.write_bytes(b"this is not a workbook")
    root = public_dir / "ws"
    result = runner.invoke(
        app, ["analyze", str(sales_csv), str(broken), "比べて", "--workspace-root", str(root)]
    )
    assert result.exit_code == 2, result.output
    assert "壊れた.xlsx" in result.stderr
    assert list(root.iterdir()) == []
    assert llm_server.chat_requests() == []


def test_failed_llm_call_exits_1(
    llm_server: ScriptedLLMServer,
    sales_csv: Path,
    public_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    llm_server.add_error(500, "upstream exploded")
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "比べて", "--workspace-root", str(public_dir)]
    )
    assert result.exit_code == 1, result.output
    assert "エラー（AI サービスの失敗）: " in result.stderr
    assert "HTTP 500" in result.stderr
    assert len(llm_server.chat_requests()) == 1
    assert "ヒント:" in result.stderr
    assert "Traceback" not in result.output


def test_interactive_mode_answers_the_agents_question_in_the_same_session(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    llm_server.add_chat(json={"next_action": "ask", "question": QUESTION, "rationale": "曖昧"})
    llm_server.add_chat(json=_act("月別合計の前月比を計算する"))
    llm_server.add_chat(
        json=_codegen(
            "m = df.groupby('月')['金額'].sum()\nprint(m.pct_change().round(3).to_dict())"
        )
    )
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "title": "月別の伸び", "sections": []})
    result = runner.invoke(
        app,
        ["analyze", str(sales_csv), "--workspace-root", str(public_dir)],
        input="伸びを見せて\n前月比でお願いします\n\n",
    )
    assert result.exit_code == 0, result.output
    assert llm_server.pending() == 0
    assert f"エージェントからの質問: {QUESTION}" in result.stdout
    assert "# 月別の伸び" in result.stdout
    assert result.stdout.index(QUESTION) < result.stdout.index("# 月別の伸び")
    assert "回答:" in result.stderr  # the second prompt asks for the answer
    # One session: the second reason call saw the question and the answer.
    second_reason = json.dumps(llm_server.chat_requests()[1]["messages"], ensure_ascii=False)
    assert "前月比と前年同月比のどちらですか" in second_reason
    assert "前月比でお願いします" in second_reason
    (workspace,) = [p for p in public_dir.iterdir() if p.is_dir()]
    assert (workspace / "report.md").is_file()


def test_interactive_mode_quits_on_exit_word(sales_csv: Path, public_dir: Path) -> None:
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "--workspace-root", str(public_dir)], input="終了\n"
    )
    assert result.exit_code == 0, result.output
    assert "終了します" in result.stderr


def test_interactive_mode_ends_with_0_at_the_end_of_input(
    sales_csv: Path, public_dir: Path
) -> None:
    """Ctrl+D (no more input) is an ordinary end; Ctrl+C is not (tests/cli/test_analyze_ctrl_c)."""
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "--workspace-root", str(public_dir)], input=""
    )
    assert result.exit_code == 0, result.output
    assert "終了します" in result.stderr


def test_a_report_after_a_failed_run_is_printed_but_unverified_exit_1(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    llm_server.add_chat(json=_act("売上合計を出す"))
    llm_server.add_chat(json=_codegen("print(df['売上'].sum())"))  # no such column: KeyError
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(
        json={**REPORT, "conclusion": "売上合計は 999,999 円でした。", "sections": []}
    )
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "売上合計は？", "--workspace-root", str(public_dir)]
    )
    assert result.exit_code == 1, result.output
    assert "売上合計は 999,999 円でした。" in result.stdout  # the report is still there to read
    assert UNVERIFIED_MESSAGE in result.stderr
    assert "コード実行: 1 回（失敗 1 回、出力のない成功 0 回）" in result.stderr
    assert f"ヒント: {UNVERIFIED_HINT}" in result.stderr


def test_interactive_mode_warns_about_an_unverified_turn_and_goes_on(
    llm_server: ScriptedLLMServer, sales_csv: Path, public_dir: Path
) -> None:
    llm_server.add_chat(json=FINALIZE)  # a report without running any code
    llm_server.add_chat(json={**REPORT, "title": "推測の売上", "sections": []})
    _script_chart_run(llm_server)
    result = runner.invoke(
        app,
        ["analyze", str(sales_csv), "--workspace-root", str(public_dir), "--json"],
        input="売上は？\n取引先別に集計して\n\n",
    )
    assert result.exit_code == 0, result.output
    assert llm_server.pending() == 0
    # One JSON line per turn (the runner echoes the typed input into stdout too).
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    first, second = (json.loads(line) for line in lines)
    assert (first["status"], first["grounded"]) == ("unverified", False)
    assert (second["status"], second["grounded"]) == ("success", True)
    assert UNVERIFIED_MESSAGE in result.stderr
    assert "このターンではコードを 1 度も実行していません。" in result.stderr
    assert result.stderr.count(UNVERIFIED_MESSAGE) == 1  # only the unverified turn


def test_help_names_the_unverified_exit_code() -> None:
    result = runner.invoke(app, ["analyze", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "1 レポートが未検証か LLM の呼び出しに失敗" in result.stdout


KEPT_LEDGER = (
    "株式会社さくら商事\r\n部門別経費明細（単位：千円）\r\n期間：令和8年1月1日～令和8年3月31日\r\n\r\n"
    "日付,部門,金額\r\n"
    '令和8年1月5日,営業部,"1,200"\r\nR8.2.3,営業部,(200)\r\n営業部 小計,,"1,000"\r\n'
    "20260210,管理部,△50\r\n2026/3/1,管理部,\r\n管理部 小計,,△50\r\n"
    "合計,,950\r\n"
)


def test_a_kept_ledger_is_summed_in_yen_and_the_reading_is_told(
    llm_server: ScriptedLLMServer, public_dir: Path
) -> None:
    data_file = public_dir / "経費明細.csv"
    data_file.write_bytes(KEPT_LEDGER.encode("cp932"))
    code = "print(df['金額（円）'].sum(), df.groupby('部門')['金額（円）'].sum().to_dict(), df['日付'].dtype)"
    llm_server.add_chat(json=_act("部門別に合計する"))
    llm_server.add_chat(json=_codegen(code))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    result = runner.invoke(
        app,
        [
            "analyze",
            str(data_file),
            "部門別の合計は？",
            "--json",
            "--workspace-root",
            str(public_dir),
        ],
    )
    assert result.exit_code == 0, result.output
    (execution,) = json.loads(result.stdout)["execution_results"]
    assert (
        execution["stdout"].strip() == "950000 {'営業部': 1000000, '管理部': -50000} datetime64[ns]"
    )
    told = result.stderr.replace("\n", "")  # folded to the terminal's width
    assert "1,000 倍して円にしてあります" in told
    assert "合計・小計の行 3 行はデータから除いてあります" in told


def test_a_ledger_whose_total_is_not_its_rows_sum_exits_2_before_any_llm_call(
    llm_server: ScriptedLLMServer, public_dir: Path
) -> None:
    data_file = public_dir / "経費明細.csv"
    unlabelled = KEPT_LEDGER.replace("営業部 小計", "").replace("管理部 小計", "")
    data_file.write_bytes(unlabelled.encode("cp932"))
    root = public_dir / "ws"
    result = runner.invoke(
        app, ["analyze", str(data_file), "部門別の合計は？", "--workspace-root", str(root)]
    )
    assert result.exit_code == 2, result.output
    assert (
        "経費明細.csv の 12 行目の列「金額」の合計 950 が、明細の行の合計 1,900 と一致しません"
        in result.stderr
    )
    assert "ヒント:" in result.stderr
    assert llm_server.chat_requests() == []
    assert not root.exists() or list(root.iterdir()) == []
