"""The ヘルプデスク page driven with Streamlit's AppTest against the scripted LLM server and
the sample knowledge base (ingested once for this module).

The page is run on its own (``AppTest.from_function``): app pages are functions registered with
``st.navigation``, which AppTest cannot switch to; ``PAGES`` is checked separately.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.agents.helpdesk.models import citation
from keiri_agent.ui.views import PAGES
from keiri_agent.ui.views.helpdesk import INDEX_KEY, OUTCOME_KEY, QUESTION_KEY, AskedQuestion
from tests.support import ScriptedLLMServer
from tests.support.helpdesk import HelpDeskScript, build_example_index, sample_embedding_cache
from tests.ui.conftest import open_page
from tests.ui.screen import error_details

TASK = "パスワード再設定の手順を調べる"
QUERY = "パスワード 再設定"
QUESTION = "パスワードの再設定方法は？"
MANUAL = "XYZシステム_ユーザーマニュアル.pdf"
PAGE_TIMEOUT_S = 120


def helpdesk_page() -> None:
    from keiri_agent.ui.views.helpdesk import render

    render()


@pytest.fixture(scope="module")
def helpdesk_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example_index(
        tmp_path_factory.mktemp("helpdesk") / "index", sample_embedding_cache(tmp_path_factory)
    )


@pytest.fixture
def page(helpdesk_index_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AppTest:
    monkeypatch.setenv("KEIRI_HELPDESK_INDEX", str(helpdesk_index_dir))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    return AppTest.from_function(helpdesk_page, default_timeout=PAGE_TIMEOUT_S)


@pytest.fixture
def app(app: AppTest, helpdesk_index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The whole app (see ``tests/ui/conftest.py``) with the sample knowledge base."""
    monkeypatch.setenv("KEIRI_HELPDESK_INDEX", str(helpdesk_index_dir))
    return app


@pytest.fixture
def script(llm_server: ScriptedLLMServer) -> HelpDeskScript:
    return HelpDeskScript(llm_server)


def _texts(elements: object) -> list[str]:
    return [str(element.value) for element in elements]  # type: ignore[attr-defined]


def _ask(page: AppTest, question: str = QUESTION) -> AppTest:
    page.run()
    page.text_area(key="helpdesk_question").set_value(question)
    return page.button(key="helpdesk_ask").click().run()


def test_the_page_is_in_the_navigation() -> None:
    assert "ヘルプデスク" in [spec.title for spec in PAGES]


def test_question_shows_plan_progress_answer_sources_and_tool_results(
    page: AppTest, script: HelpDeskScript, helpdesk_index_dir: Path
) -> None:
    with KnowledgeBase.open(helpdesk_index_dir) as kb:
        cite = citation(kb.search_manual(QUERY, 3)[0])
    script.plan(TASK)
    script.subtask(TASK, QUERY, f"ログイン画面から再設定します{cite}")
    script.final(f"ログイン画面の「パスワードをお忘れの方」から再設定できます{cite}。")

    _ask(page)

    assert not page.exception, page.exception
    assert script.server.pending() == 0
    assert page.text_input(key="helpdesk_index_dir").value == str(helpdesk_index_dir)
    assert {"計画", "回答", "出典", "ツールの実行結果"} <= set(_texts(page.subheader))
    markdown = _texts(page.markdown)
    assert f"1. {TASK} — ✅ 解決" in markdown
    assert f"ログイン画面の「パスワードをお忘れの方」から再設定できます{cite}。" in markdown
    assert f"- {cite}" in markdown
    assert "- サブタスク 1: ✅ 完了" in markdown  # the live progress board, final state
    assert "[サブタスク 1: ツール選択] 開始" in _texts(page.text)
    (expander,) = [e for e in page.expander if e.label.startswith("サブタスク 1")]
    assert expander.label == f"サブタスク 1: {TASK}（✅ 解決、試行 1 回）"
    tool_output = "\n".join(_texts(expander.code))
    assert "search_manual" in tool_output
    assert "XYZシステム_ユーザーマニュアル.pdf" in tool_output
    outcome = page.session_state[OUTCOME_KEY]
    assert isinstance(outcome, AskedQuestion)
    assert outcome.result is not None
    assert outcome.result.usage.calls == 5

    # A rerun keeps the result on the page and calls no model.
    requests = len(script.server.chat_requests())
    page.run()
    assert not page.exception
    assert f"- {cite}" in _texts(page.markdown)
    assert len(script.server.chat_requests()) == requests


def test_without_an_llm_the_page_explains_how_to_configure_one(page: AppTest) -> None:
    page.run()
    assert not page.exception
    (warning,) = page.warning
    assert "OPENAI_API_KEY" in warning.value
    assert "KEIRI_LLM_MODEL_HELPDESK" in warning.value
    assert page.button(key="helpdesk_ask").disabled


def test_an_llm_failure_is_shown_with_its_hint_and_can_be_retried(
    page: AppTest, script: HelpDeskScript, helpdesk_index_dir: Path
) -> None:
    script.server.add_error(500, "upstream exploded")
    _ask(page)
    assert not page.exception, page.exception
    (error,) = page.error
    assert "HTTP 500" in error.value
    assert "API_ERROR" in error_details(page)["エラーの種類"]
    assert page.info  # the hint

    with KnowledgeBase.open(helpdesk_index_dir) as kb:
        cite = citation(kb.search_manual(QUERY, 3)[0])
    script.plan(TASK)
    script.subtask(TASK, QUERY, f"ログイン画面から再設定します{cite}")
    script.final(f"ログイン画面から再設定できます{cite}。")
    page.button(key="helpdesk_retry").click().run()
    assert not page.exception, page.exception
    assert not page.error
    assert f"ログイン画面から再設定できます{cite}。" in "\n".join(_texts(page.markdown))


def test_a_missing_knowledge_base_says_how_to_build_it(
    page: AppTest, script: HelpDeskScript, tmp_path: Path
) -> None:
    page.run()
    page.text_input(key="helpdesk_index_dir").set_value(str(tmp_path / "none")).run()
    assert any("helpdesk ingest" in info.value for info in page.info)
    _ask(page)
    assert not page.exception
    (error,) = page.error
    assert "ナレッジベース" in error.value
    assert script.server.chat_requests() == []


def test_the_folder_and_the_question_come_back_after_a_page_switch(
    app: AppTest, helpdesk_index_dir: Path, tmp_path: Path
) -> None:
    open_page(app, "helpdesk").run()
    assert app.text_input(key=INDEX_KEY).value == str(helpdesk_index_dir)  # the default folder
    app.text_input(key=INDEX_KEY).set_value(str(tmp_path / "別の索引"))
    app.text_area(key=QUESTION_KEY).set_value(QUESTION).run()

    open_page(app, "analysis").run()
    assert QUESTION_KEY not in app.session_state  # Streamlit dropped the widgets' state
    open_page(app, "helpdesk").run()

    assert not app.exception, app.exception
    assert app.text_input(key=INDEX_KEY).value == str(tmp_path / "別の索引")
    assert app.text_area(key=QUESTION_KEY).value == QUESTION
    assert any(str(tmp_path / "別の索引") in info for info in _texts(app.info))


def test_an_off_topic_question_shows_that_the_materials_do_not_cover_it(
    page: AppTest, script: HelpDeskScript
) -> None:
    task = "社員食堂のメニューを調べる"
    script.plan(task)
    # Manual pages that only share the word メニュー (under the relevance floor); the model
    # answers anyway and calls it done, every attempt.
    script.subtask(task, "社員食堂 メニュー", "カレーライスです。", repeat=True)

    _ask(page, "社員食堂のメニューは？")

    assert not page.exception, page.exception
    assert any("回答できませんでした" in warning.value for warning in page.warning)
    (answer,) = [m for m in _texts(page.markdown) if "見つかりませんでした" in m]
    assert "ヘルプデスク担当者" in answer
    assert "カレー" not in answer
    assert "資料から該当する記述は見つかりませんでした。" in _texts(page.caption)
    (expander,) = [e for e in page.expander if e.label.startswith("サブタスク 1")]
    assert "⚠️ 未解決" in expander.label
    assert any("回答には使っていません" in text for text in _texts(expander.markdown))


def test_the_eval_panel_reports_recall_mrr_and_misses(page: AppTest, tmp_path: Path) -> None:
    from keiri_agent.ui.views.helpdesk_eval import EVAL_FILE_KEY, EVAL_REPORT_KEY

    questions = tmp_path / "questions.jsonl"
    lines = [
        {"question": "E-1004 って出てログインできません", "file": MANUAL, "page": [3, 12]},
        {"question": "週末に釣りへ行く", "file": "qa.csv", "row": 1},
    ]
    questions.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines))
    page.run()
    page.text_input(key=EVAL_FILE_KEY).input(str(questions))
    page.button(key="helpdesk_eval_run").click().run()
    assert not page.exception
    report = page.session_state[EVAL_REPORT_KEY]
    assert (report.questions, report.answered, report.no_match) == (2, 1, 1)
    metrics = {m.label: m.value for m in page.metric}
    assert metrics == {"recall@3": "0.500", "MRR": "0.500", "該当なし": "1 件"}
    assert "週末に釣りへ行く" in page.dataframe[0].value.to_string()


def test_the_eval_panel_explains_a_bad_question_file(page: AppTest, tmp_path: Path) -> None:
    from keiri_agent.ui.views.helpdesk_eval import EVAL_FILE_KEY, EVAL_REPORT_KEY

    bad = tmp_path / "questions.csv"
    bad.write_text("file,page\nx.pdf,1\n", encoding="utf-8")
    page.run()
    page.text_input(key=EVAL_FILE_KEY).input(str(bad))
    page.button(key="helpdesk_eval_run").click().run()
    assert EVAL_REPORT_KEY not in page.session_state
    assert any("question" in e.value for e in page.error)
