"""The analysis agent end to end against the scripted LLM server and the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from keiri_agent.agents.analysis import (
    MAX_LOOPS,
    NO_DATA_QUESTION,
    AnalysisContext,
    AnalysisSession,
)
from keiri_agent.errors import LLMError
from keiri_agent.events import read_events
from keiri_agent.sandbox import SandboxExecutor
from tests.support import ScriptedLLMServer

SALES = pd.DataFrame(
    {
        "取引先": ["あおば商事", "ミドリ物産", "あおば商事", "さくら電機"],
        "金額": [120000, 80000, 50000, 30000],
        "月": ["2024-04", "2024-04", "2024-05", "2024-05"],
    }
)

CHART_CODE = """import matplotlib.pyplot as plt
totals = df.groupby("取引先")["金額"].sum().sort_values(ascending=False)
fig, ax = plt.subplots()
ax.bar(totals.index, totals.values)
ax.set_title("取引先別の売上合計")
ax.set_xlabel("取引先")
ax.set_ylabel("金額（円）")
fig.savefig("sales_by_vendor.png", dpi=80, bbox_inches="tight")
plt.close(fig)
totals.to_csv("sales_by_vendor.csv")
print(totals.to_dict())
"""


def _act(instruction: str) -> dict[str, object]:
    return {"next_action": "act", "instruction": instruction, "rationale": "集計が必要"}


def _codegen(code: str, *files: tuple[str, str]) -> dict[str, object]:
    return {
        "code": code,
        "expected_outputs": [
            {"file_name": name, "description": "出力", "output_type": kind} for name, kind in files
        ],
    }


FINALIZE = {"next_action": "finalize", "rationale": "要求を満たした"}
REPORT = {
    "title": "取引先別の売上",
    "conclusion": "あおば商事の売上が最も大きく、170,000円でした。",
    "evidence": ["あおば商事 170,000円、ミドリ物産 80,000円、さくら電機 30,000円"],
    "sections": [
        {"section_type": "image", "content": "sales_by_vendor.png", "description": "取引先別売上"},
        {
            "section_type": "table",
            "content": json.dumps([{"取引先": "あおば商事", "金額": 170000}], ensure_ascii=False),
            "description": "上位の取引先",
        },
    ],
    "suggestions": ["月別の推移も確認する"],
}


@pytest.fixture
def session(
    public_dir: Path, sandbox_executor: SandboxExecutor, llm_server: ScriptedLLMServer
) -> AnalysisSession:
    return AnalysisSession(
        workspace_root=public_dir / "workspace",
        runs_dir=public_dir / "runs",
        context=AnalysisContext(executor=sandbox_executor),
    )


def test_act_then_finalize_writes_a_chart_and_report(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    session.add_frame("sales", SALES)
    llm_server.add_chat(json=_act("取引先別の売上合計を棒グラフにする"))
    llm_server.add_chat(
        json=_codegen(
            CHART_CODE, ("sales_by_vendor.png", "figure"), ("sales_by_vendor.csv", "table")
        )
    )
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json=REPORT)
    turn = session.ask("取引先別の売上を比べて")
    assert llm_server.pending() == 0
    assert turn.next_action == "finalize"
    assert turn.report_path == turn.workspace / "report.md"
    chart = turn.workspace / "sales_by_vendor.png"
    assert chart.stat().st_size > 1000
    (result,) = turn.execution_results
    assert result.success, result.error
    assert "170000" in (result.stdout or "")
    assert set(result.files_created) >= {"sales_by_vendor.png", "sales_by_vendor.csv"}
    markdown = turn.report_path.read_text(encoding="utf-8")
    assert "## 結論" in markdown
    assert "あおば商事の売上が最も大きく" in markdown
    assert "## 根拠" in markdown
    assert "![取引先別売上](sales_by_vendor.png)" in markdown
    assert "| 取引先 | 金額 |" in markdown
    assert "## 追加の分析案" in markdown
    assert turn.run_log is not None
    kinds = [event.event for event in read_events(turn.run_log)]
    for kind in ("stage", "code_gen", "code_exec", "log", "llm_call"):
        assert kind in kinds


def test_no_data_asks_for_an_upload_without_calling_the_llm(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    turn = session.ask("売上を分析して")
    assert turn.next_action == "ask"
    assert turn.question == NO_DATA_QUESTION
    assert llm_server.chat_requests() == []
    assert session.messages[-1].content == NO_DATA_QUESTION


def test_ambiguous_request_asks_then_the_answer_continues_the_session(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    session.add_frame("sales", SALES)
    llm_server.add_chat(
        json={
            "next_action": "ask",
            "question": "「伸び」は前月比と前年同月比のどちらですか？",
            "rationale": "指標が曖昧",
        }
    )
    first = session.ask("伸びを見せて")
    assert first.next_action == "ask"
    assert "前月比" in (first.question or "")
    assert first.report_path is None

    llm_server.add_chat(json=_act("月別合計の前月比を計算する"))
    llm_server.add_chat(
        json=_codegen(
            "m = df.groupby('月')['金額'].sum()\nprint(m.pct_change().round(3).to_dict())"
        )
    )
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    second = session.ask("前月比でお願いします")
    assert second.next_action == "finalize"
    # The second reason call saw the whole conversation, the question included.
    reason_call = llm_server.chat_requests()[1]
    texts = json.dumps(reason_call["messages"], ensure_ascii=False)
    assert "前月比と前年同月比のどちらですか" in texts
    assert "前月比でお願いします" in texts


def test_code_error_goes_back_to_reason_and_is_fixed(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    session.add_frame("sales", SALES)
    llm_server.add_chat(json=_act("金額の合計を出す"))
    llm_server.add_chat(json=_codegen("print(df['売上'].sum())"))  # wrong column
    llm_server.add_chat(json=_act("列名は『金額』なので金額の合計を出す"))
    llm_server.add_chat(json=_codegen("print(df['金額'].sum())"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    turn = session.ask("売上合計は？")
    first, second = turn.execution_results
    assert not first.success
    assert "KeyError" in (first.error or "")
    assert second.success
    assert "280000" in (second.stdout or "")
    # reason saw the traceback of the failed attempt before deciding again
    second_reason = json.dumps(llm_server.chat_requests()[2]["messages"], ensure_ascii=False)
    assert "KeyError" in second_reason
    # and the code generator was shown its previous error
    assert "売上" in json.dumps(llm_server.chat_requests()[3]["messages"], ensure_ascii=False)


def test_five_loops_end_in_an_intermediate_report(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    session.add_frame("sales", SALES)
    for n in range(MAX_LOOPS):
        llm_server.add_chat(json=_act(f"集計 {n}"))
        llm_server.add_chat(json=_codegen(f"print({n})"))
    llm_server.add_chat(json={**REPORT, "sections": []})
    turn = session.ask("思いつく限り分析して")
    assert llm_server.pending() == 0
    assert len(turn.execution_results) == MAX_LOOPS
    assert turn.forced_report is True
    assert turn.report_path is not None
    assert turn.report_path.exists()
    report_prompt = json.dumps(llm_server.chat_requests()[-1]["messages"], ensure_ascii=False)
    assert "ループの上限" in report_prompt


def test_claimed_but_missing_output_is_an_error_for_reason(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    session.add_frame("sales", SALES)
    llm_server.add_chat(json=_act("グラフを作る"))
    llm_server.add_chat(json=_codegen("print('描画を忘れた')", ("chart.png", "figure")))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    turn = session.ask("グラフにして")
    (result,) = turn.execution_results
    assert result.success is False
    assert "chart.png" in (result.error or "")
    assert result.outputs == []
    second_reason = json.dumps(llm_server.chat_requests()[2]["messages"], ensure_ascii=False)
    assert "chart.png" in second_reason


def test_cp932_csv_and_two_files_in_one_session(
    session: AnalysisSession, llm_server: ScriptedLLMServer, public_dir: Path
) -> None:
    first = public_dir / "売上.csv"
    first.write_bytes("取引先,金額\nあおば商事,120000\n髙橋工業,5000\n".encode("cp932"))
    second = public_dir / "経費.csv"
    second.write_text("科目,金額\n交通費,3000\n", encoding="utf-8-sig")
    info = session.add_file(first)
    session.add_file(second)
    assert info.shape == (2, 2)
    assert (session.workspace / "売上.csv").exists()
    llm_server.add_chat(json=_act("売上と経費の合計を比べる"))
    llm_server.add_chat(
        json=_codegen(
            "print(df['取引先'].tolist())\n"
            "print(dfs['売上']['金額'].sum(), dfs['経費']['金額'].sum())"
        )
    )
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    turn = session.ask("売上と経費を比べて")
    (result,) = turn.execution_results
    assert result.success, result.error
    assert "髙橋工業" in (result.stdout or "")
    assert "125000 3000" in (result.stdout or "")
    reason_prompt = json.dumps(llm_server.chat_requests()[0]["messages"], ensure_ascii=False)
    assert 'dfs[\\"経費\\"]' in reason_prompt or "経費" in reason_prompt


def test_japanese_glyphs_are_really_rendered(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    session.add_frame("sales", SALES)
    code = (
        "import warnings\n"
        "import matplotlib.pyplot as plt\n"
        "from matplotlib import font_manager\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    fig, ax = plt.subplots()\n"
        "    ax.set_title('売上推移（月次）')\n"
        "    ax.plot([1, 2], [3, 4], label='売上')\n"
        "    ax.legend()\n"
        "    fig.savefig('glyphs.png')\n"
        "print('FONT', font_manager.findfont(font_manager.FontProperties(family=plt.rcParams['font.family'])))\n"
        "print('MISSING', [str(w.message) for w in caught if 'missing' in str(w.message).lower()])\n"
    )
    llm_server.add_chat(json=_act("日本語のグラフ"))
    llm_server.add_chat(json=_codegen(code, ("glyphs.png", "figure")))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    turn = session.ask("日本語のグラフを作って")
    (result,) = turn.execution_results
    assert result.success, result.error
    assert "ipaex" in (result.stdout or "").lower()
    assert "MISSING []" in (result.stdout or "")
    assert (turn.workspace / "glyphs.png").stat().st_size > 1000


def test_a_million_row_table_is_analysed(
    session: AnalysisSession, llm_server: ScriptedLLMServer
) -> None:
    rows = 1_000_000
    big = pd.DataFrame(
        {
            "日付": pd.date_range("2024-01-01", periods=rows, freq="min"),
            "取引先": pd.Categorical(["あおば商事", "ミドリ物産"] * (rows // 2)),
            "金額": range(rows),
        }
    )
    info = session.add_frame("journal", big)
    assert len(info.to_prompt()) <= info.budget
    llm_server.add_chat(json=_act("件数と金額の合計を出す"))
    llm_server.add_chat(json=_codegen("print(len(df), int(df['金額'].sum()))"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    turn = session.ask("件数と合計は？")
    (result,) = turn.execution_results
    assert result.success, result.error
    assert (result.stdout or "").strip() == f"{rows} {rows * (rows - 1) // 2}"


def test_a_failed_turn_leaves_the_conversation_unchanged(
    session: AnalysisSession, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    session.add_frame("sales", SALES)
    llm_server.add_error(500)
    with pytest.raises(LLMError) as info:
        session.ask("売上合計は？")
    assert info.value.code == "API_ERROR"
    assert session.messages == []  # asking again does not duplicate the question
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    events: list[str] = []
    turn = session.ask("売上合計は？", on_event=lambda event: events.append(event.event))
    assert turn.next_action == "finalize"
    assert [m.content for m in session.messages][:1] == ["売上合計は？"]
    assert "stage" in events
    assert "llm_call" in events
    assert turn.run_log is not None
