"""The データ分析 page driven with Streamlit's AppTest against the scripted LLM server.

The main flow goes through the real file uploader (AppTest can upload files) and the
process-wide sandbox executor, exactly as a user's browser session would. The error test puts
an ``AnalysisSession`` with a frame already added into Session State before the first run
instead: it never reaches the sandbox, and seeding is how a page picks up a session it did
not create (the page only creates one when ``analysis_session`` is absent).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.agents.analysis import AnalysisSession
from keiri_agent.agents.analysis.honesty import (
    UNVERIFIED_HINT,
    UNVERIFIED_LABEL,
    UNVERIFIED_MESSAGE,
)
from keiri_agent.ui.views.analysis import HISTORY_KEY, SESSION_KEY
from tests.support import ScriptedLLMServer
from tests.ui.conftest import open_page
from tests.ui.screen import error_details

SALES_CSV = (
    "取引先,金額,月\nあおば商事,120000,2024-04\n髙橋工業,80000,2024-04\nあおば商事,50000,2024-05\n"
)
CHART_CODE = """import matplotlib.pyplot as plt
totals = df.groupby("取引先")["金額"].sum().sort_values(ascending=False)
fig, ax = plt.subplots()
ax.bar(totals.index, totals.values)
ax.set_title("取引先別の売上合計")
fig.savefig("sales_by_vendor.png", dpi=60)
plt.close(fig)
print(totals.to_dict())
"""
REPORT = {
    "title": "取引先別の売上",
    "conclusion": "あおば商事の売上が最も大きく、170,000円でした。",
    "evidence": ["あおば商事 170,000円、髙橋工業 80,000円"],
    "sections": [
        {"section_type": "text", "content": "上位 2 社で売上のすべてを占めます。"},
        {"section_type": "image", "content": "sales_by_vendor.png", "description": "取引先別売上"},
        {
            "section_type": "table",
            "content": json.dumps([{"取引先": "あおば商事", "金額": 170000}], ensure_ascii=False),
            "description": "上位の取引先",
        },
    ],
    "suggestions": ["月別の推移も確認する"],
}
ACT = {
    "next_action": "act",
    "instruction": "取引先別の売上合計を棒グラフにする",
    "rationale": "集計",
}
CODEGEN = {
    "code": CHART_CODE,
    "expected_outputs": [
        {"file_name": "sales_by_vendor.png", "description": "棒グラフ", "output_type": "figure"}
    ],
}
FINALIZE = {"next_action": "finalize", "rationale": "要求を満たした"}
QUESTION = "「売上」は税込と税抜のどちらで集計しますか？"


def _texts(elements: object) -> list[str]:
    return [str(element.value) for element in elements]  # type: ignore[attr-defined]


def _upload(app: AppTest) -> AppTest:
    app.run()
    csv = SALES_CSV.encode("cp932")  # a Japanese Windows export
    return app.file_uploader[0].set_value(("売上.csv", csv, "text/csv")).run()


def test_upload_question_report_and_rerun(
    app: AppTest, llm_server: ScriptedLLMServer, workspace_root: Path
) -> None:
    _upload(app)
    assert not app.exception
    assert 'df（= dfs["売上"]）: 3 行 × 3 列' in [e.label for e in app.expander]
    for reply in (ACT, CODEGEN, FINALIZE, REPORT):
        llm_server.add_chat(json=reply)

    app.chat_input[0].set_value("取引先別の売上を比べて").run()
    assert not app.exception, app.exception
    assert llm_server.pending() == 0
    assert "取引先別の売上" in _texts(app.header)
    markdown = _texts(app.markdown)
    assert "取引先別の売上を比べて" in markdown  # the user's message in the chat history
    assert "あおば商事の売上が最も大きく、170,000円でした。" in markdown
    assert "- あおば商事 170,000円、髙橋工業 80,000円" in markdown
    assert "上位 2 社で売上のすべてを占めます。" in markdown
    assert "- 月別の推移も確認する" in markdown
    assert {"結論", "根拠", "追加の分析案"} <= set(_texts(app.subheader))
    assert len(app.image) == 1
    assert len(app.dataframe) >= 2  # the upload preview and the report's table
    labels = [e.label for e in app.expander]
    assert "✅ 実行 1: 取引先別の売上合計を棒グラフにする" in labels
    assert CHART_CODE.strip() in _texts(app.code)
    assert any("170000" in text for text in _texts(app.code))  # stdout
    downloads = [b.label for b in app.download_button]
    assert downloads == ["report.md をダウンロード", "sales_by_vendor.png をダウンロード"]

    session = app.session_state[SESSION_KEY]
    assert isinstance(session, AnalysisSession)
    assert session.workspace is not None
    assert session.workspace.parent == workspace_root
    assert (session.workspace / "sales_by_vendor.png").is_file()
    assert (session.workspace / "report.md").is_file()
    assert list(session.frames) == ["売上"]
    assert session.frames["売上"]["取引先"].tolist()[1] == "髙橋工業"

    # A rerun (any widget interaction) keeps everything and calls no model.
    requests = len(llm_server.chat_requests())
    app.run()
    assert not app.exception
    assert app.session_state[SESSION_KEY] is session
    assert len(app.session_state[HISTORY_KEY]) == 1
    assert "取引先別の売上" in _texts(app.header)
    assert len(app.image) == 1
    assert len(llm_server.chat_requests()) == requests


def test_agent_question_then_answer_continues_the_session(
    app: AppTest, llm_server: ScriptedLLMServer, workspace_root: Path
) -> None:
    _upload(app)
    llm_server.add_chat(json={"next_action": "ask", "question": QUESTION, "rationale": "曖昧"})
    app.chat_input[0].set_value("売上を集計して").run()
    assert not app.exception
    assert QUESTION in _texts(app.markdown)
    assert [m.name for m in app.chat_message] == ["user", "assistant"]

    llm_server.add_chat(json={"next_action": "act", "instruction": "税抜で合計", "rationale": "-"})
    llm_server.add_chat(json={"code": "print(df['金額'].sum())", "expected_outputs": []})
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "title": "売上合計（税抜）", "sections": []})
    app.chat_input[0].set_value("税抜です").run()
    assert not app.exception
    assert "売上合計（税抜）" in _texts(app.header)
    assert [m.name for m in app.chat_message] == ["user", "assistant"] * 2
    second_reason = json.dumps(llm_server.chat_requests()[1]["messages"], ensure_ascii=False)
    assert "税込と税抜のどちらで集計しますか" in second_reason
    assert "税抜です" in second_reason


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("total = df['金額'].sum()\n", id="a-run-without-output"),
        pytest.param("print(df['売上'].sum())\n", id="a-failed-run"),
    ],
)
def test_a_report_without_a_run_that_showed_anything_is_unverified_on_the_page(
    app: AppTest, llm_server: ScriptedLLMServer, workspace_root: Path, code: str
) -> None:
    _upload(app)
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json={"code": code, "expected_outputs": []})
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "conclusion": "売上合計は 999,999 円でした。"})
    app.chat_input[0].set_value("売上合計は？").run()
    assert not app.exception, app.exception
    (status,) = app.status
    assert status.label == UNVERIFIED_LABEL  # not 完了しました
    assert status.state == "error"  # not the success check mark
    band = f"**{UNVERIFIED_MESSAGE}**\n\n{UNVERIFIED_HINT}"
    assert band in _texts(app.warning)
    assert "売上合計は 999,999 円でした。" in _texts(app.markdown)  # shown, but flagged
    # The band stays with the turn when the page is drawn again.
    app.run()
    assert band in _texts(app.warning)


def test_a_grounded_report_is_labelled_done_without_the_band(
    app: AppTest, llm_server: ScriptedLLMServer, workspace_root: Path
) -> None:
    _upload(app)
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json={"code": "print(df['金額'].sum())\n", "expected_outputs": []})
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "sections": []})
    app.chat_input[0].set_value("売上合計は？").run()
    assert not app.exception, app.exception
    (status,) = app.status
    assert (status.label, status.state) == ("完了しました", "complete")
    assert not any(UNVERIFIED_MESSAGE in text for text in _texts(app.warning))


def test_reset_clears_the_session_explicitly(
    app: AppTest, llm_server: ScriptedLLMServer, workspace_root: Path
) -> None:
    _upload(app)
    llm_server.add_chat(json={"next_action": "ask", "question": QUESTION, "rationale": "曖昧"})
    app.chat_input[0].set_value("売上を集計して").run()
    old = app.session_state[SESSION_KEY]
    app.button(key="analysis_reset").click().run()
    assert not app.exception
    assert app.session_state[SESSION_KEY] is not old
    assert app.session_state[SESSION_KEY].frames == {}
    assert app.session_state[HISTORY_KEY] == []
    assert not app.chat_message
    assert app.file_uploader[0].key == "analysis_uploader_1"  # a fresh, empty uploader


def test_llm_failure_is_shown_with_message_details_and_hint(
    app: AppTest,
    llm_server: ScriptedLLMServer,
    workspace_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    session = AnalysisSession()
    session.add_frame("sales", pd.DataFrame({"金額": [1, 2, 3]}))
    app.session_state[SESSION_KEY] = session
    llm_server.add_error(500, "upstream exploded")
    app.run()
    app.chat_input[0].set_value("合計は？").run()
    assert not app.exception, app.exception
    (turn,) = app.session_state[HISTORY_KEY]
    assert turn.error is not None
    (error,) = app.error
    assert error.value == turn.error.message
    assert "HTTP 500" in error.value
    assert turn.error.hint
    assert turn.error.hint in [info.value for info in app.info]
    assert len(llm_server.chat_requests()) == 1
    assert "エラー詳細" in [e.label for e in app.expander]
    assert "API_ERROR" in error_details(app)["エラーの種類"]
    assert len(session.messages) == 0  # the failed question is not kept twice

    # The error is recoverable: 再実行 sends the same question again.
    for reply in (
        {"next_action": "act", "instruction": "合計", "rationale": "-"},
        {"code": "print(df['金額'].sum())", "expected_outputs": []},
        FINALIZE,
        {**REPORT, "title": "金額の合計", "sections": []},
    ):
        llm_server.add_chat(json=reply)
    app.button(key="analysis_retry_0").click().run()
    assert not app.exception, app.exception
    assert "金額の合計" in _texts(app.header)
    assert session.messages[0].content == "合計は？"
    assert sum(1 for m in session.messages if m.content == "合計は？") == 1


def test_loaded_files_stay_listed_after_a_page_switch_and_load_once(
    app: AppTest, workspace_root: Path
) -> None:
    _upload(app)
    open_page(app, "helpdesk").run()
    open_page(app, "analysis").run()

    assert not app.exception, app.exception
    assert app.file_uploader[0].value == []  # Streamlit empties an uploader it did not draw
    assert "読み込み済みのファイル: 売上.csv" in _texts(app.caption)
    assert 'df（= dfs["売上"]）: 3 行 × 3 列' in [e.label for e in app.expander]
    # The same file uploaded again is not a second table.
    app.file_uploader[0].set_value(("売上.csv", SALES_CSV.encode("cp932"), "text/csv")).run()
    assert list(app.session_state[SESSION_KEY].frames) == ["売上"]


def test_the_workspace_is_shown_with_its_start_where_the_person_lives(
    app: AppTest, workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder is named by the session's start in UTC; the page says that start in
    KEIRI_TIMEZONE, labelled, next to the name."""
    monkeypatch.setenv("KEIRI_TIMEZONE", "America/New_York")
    _upload(app).run()

    assert not app.exception, app.exception
    workspace = app.session_state[SESSION_KEY].workspace
    utc = datetime.strptime(workspace.name[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    local = utc.astimezone(ZoneInfo("America/New_York"))
    label = local.tzname()
    assert label in ("EST", "EDT")
    expected = f"作業ディレクトリ: `{workspace}`（開始 {local:%Y-%m-%d %H:%M:%S} {label}）"
    assert expected in _texts(app.caption)


def test_without_an_llm_the_page_says_how_to_configure_one_before_a_question(
    app: AppTest,
) -> None:
    app.run()

    assert not app.exception, app.exception
    (warning,) = app.main.warning
    assert "データ分析: 判断・データ分析: コード生成・データ分析: レポート" in warning.value
    assert "OPENAI_API_KEY" in warning.value
    assert "KEIRI_LLM_MODEL_REASON、KEIRI_LLM_MODEL_CODEGEN、KEIRI_LLM_MODEL_REPORT" in (
        warning.value
    )
    assert app.chat_input  # the page still takes files and questions


def test_a_ledger_in_thousands_is_shown_in_yen_with_what_the_reading_did(app: AppTest) -> None:
    ledger = (
        '部門別経費（単位：千円）\r\n部門,金額\r\n営業部,"1,200"\r\n管理部,(300)\r\n合計,900\r\n'
    )
    app.run()
    app.file_uploader[0].set_value(("経費.csv", ledger.encode("cp932"), "text/csv")).run()

    assert not app.exception, app.exception
    assert list(app.session_state[SESSION_KEY].frames["経費"]["金額（円）"]) == [
        1_200_000,
        -300_000,
    ]
    captions = " ".join(_texts(app.caption))
    assert "1,000 倍して円にしてあります" in captions
    assert "合計・小計の行 1 行はデータから除いてあります" in captions
