"""The 変換 page driven with Streamlit's AppTest against the scripted LLM server, real files and
the sandbox (the page is run on its own; ``PAGES`` is checked separately)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.ui.views import PAGES
from keiri_agent.ui.views.convert import ANSWER_KEY, MODE_PATH, MODE_UPLOAD, OUTCOME_KEY, Conversion
from tests.support import ScriptedLLMServer, prompt_contains
from tests.ui.conftest import open_page
from tests.ui.screen import error_details

PAGE_TIMEOUT_S = 120
SALES_CSV = "月,売上\n2024-04,120000\n2024-05,80000\n"


def convert_page() -> None:
    from keiri_agent.ui.views.convert import render

    render()


@pytest.fixture
def page(convert_env: Path) -> AppTest:
    return AppTest.from_function(convert_page, default_timeout=PAGE_TIMEOUT_S)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "売上.csv"
    path.write_text(SALES_CSV, encoding="utf-8")
    return path


def _texts(elements: object) -> list[str]:
    return [str(element.value) for element in elements]  # type: ignore[attr-defined]


def _convert(page: AppTest, request: str, source: Path) -> AppTest:
    page.run()
    page.text_area(key="convert_request").set_value(request)
    page.radio(key="convert_source_mode").set_value(MODE_PATH).run()
    page.text_input(key="convert_source").set_value(str(source))
    return page.button(key="convert_run").click().run()


def test_the_page_is_in_the_navigation_after_the_others() -> None:
    titles = [spec.title for spec in PAGES]
    assert titles[-1] == "変換"
    assert {"データ分析", "ヘルプデスク"} <= set(titles)


def test_a_conversion_shows_the_full_bar_the_answer_and_a_download(
    page: AppTest, llm_server: ScriptedLLMServer, source: Path, tmp_path: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "xlsx"})

    _convert(page, "Excel に変換して", source)

    assert not page.exception, page.exception
    (bar,) = page.get("progress")
    assert bar.proto.value == 100
    assert "仕上げ" in bar.proto.text
    assert "1 件のファイルを XLSX に変換しました。" in "\n".join(_texts(page.markdown))
    (download,) = page.get("download_button")
    assert download.proto.label == "売上.xlsx をダウンロード"
    outcome = page.session_state[OUTCOME_KEY]
    assert isinstance(outcome, Conversion)
    assert outcome.result is not None
    (written,) = outcome.result.files
    assert written.is_file()
    assert written.is_relative_to(tmp_path / "workspace")
    assert not page.error
    assert not page.get("status")  # the live log lines are gone once the run ends

    requests = len(llm_server.chat_requests())
    page.run()  # a rerun keeps the result and calls no model
    assert "1 件のファイルを XLSX に変換しました。" in "\n".join(_texts(page.markdown))
    assert len(llm_server.chat_requests()) == requests


def test_a_codeact_result_says_why_and_shows_the_code(
    page: AppTest, llm_server: ScriptedLLMServer, source: Path
) -> None:
    llm_server.add_chat(json={"action": "viz", "chart": {"kind": "pie", "x": "月", "y": ["売上"]}})
    code = (
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\n"
        'ax.pie(df["売上"], labels=df["月"])\n'
        'fig.savefig("chart.png", dpi=40)\n'
    )
    llm_server.add_chat(f"```python\n{code}```", when=prompt_contains("You are CodeAct"))

    _convert(page, "円グラフにして", source)

    assert not page.exception, page.exception
    (note,) = page.info
    assert "CodeAct" in note.value
    assert "UnsupportedVizParamError" in note.value
    (expander,) = page.expander
    assert expander.label == "CodeAct が生成したコード 1"
    assert _texts(expander.code) == [code.strip()]
    assert len(page.get("image")) == 1
    (download,) = page.get("download_button")
    assert download.proto.label == "chart.png をダウンロード"


def test_a_failure_is_the_red_error_display(
    page: AppTest, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "csv"})

    _convert(page, "CSV に", tmp_path / "ない.csv")

    assert not page.exception, page.exception
    (error,) = page.error
    assert "見つかりません" in error.value
    assert "FILE_UNREADABLE" in error_details(page)["エラーの種類"]
    assert page.info  # the hint


def test_an_llm_failure_is_shown_and_can_be_retried(
    page: AppTest, llm_server: ScriptedLLMServer, source: Path
) -> None:
    llm_server.add_error(500, "upstream exploded")

    _convert(page, "Parquet に", source)

    assert not page.exception, page.exception
    (error,) = page.error
    assert "HTTP 500" in error.value
    assert "API_ERROR" in error_details(page)["エラーの種類"]

    llm_server.add_chat(json={"action": "convert", "target_format": "parquet"})
    page.button(key="convert_retry").click().run()
    assert not page.exception, page.exception
    assert not page.error
    assert "PARQUET に変換しました" in "\n".join(_texts(page.markdown))


def test_without_an_llm_the_page_explains_how_to_configure_one(page: AppTest) -> None:
    page.run()

    assert not page.exception
    (warning,) = _texts(page.warning)  # one notice for the interpret and the CodeAct role
    assert "変換: 要求の解釈・変換: CodeActのモデル openai:gpt-4.1-mini" in warning
    assert "OPENAI_API_KEY" in warning
    assert "KEIRI_LLM_MODEL_INTERPRET、KEIRI_LLM_MODEL_CODEACT" in warning
    assert warning.count("プロバイダーごとの設定") == 1
    assert "ANTHROPIC_API_KEY" in warning
    assert page.button(key="convert_run").disabled


def test_an_empty_request_asks_for_one(page: AppTest, llm_server: ScriptedLLMServer) -> None:
    page.run()
    page.button(key="convert_run").click().run()

    assert "依頼を入力してください。" in _texts(page.warning)
    assert llm_server.chat_requests() == []


def test_the_request_the_source_and_the_uploads_come_back_after_a_page_switch(
    app: AppTest, convert_env: Path, llm_server: ScriptedLLMServer, source: Path
) -> None:
    open_page(app, "convert").run()
    app.text_area(key="convert_request").set_value("Excel に変換して")
    app.radio(key="convert_source_mode").set_value(MODE_PATH).run()
    app.text_input(key="convert_source").set_value(str(source)).run()

    open_page(app, "helpdesk").run()
    assert "convert_request" not in app.session_state  # Streamlit dropped the widgets' state
    open_page(app, "convert").run()

    assert not app.exception, app.exception
    assert app.text_area(key="convert_request").value == "Excel に変換して"
    assert app.radio(key="convert_source_mode").value == MODE_PATH
    assert app.text_input(key="convert_source").value == str(source)

    # An upload survives both a switch of the input mode and a page switch...
    app.radio(key="convert_source_mode").set_value(MODE_UPLOAD).run()
    app.file_uploader[0].set_value(("売上.csv", SALES_CSV.encode(), "text/csv")).run()
    app.radio(key="convert_source_mode").set_value(MODE_PATH).run()
    open_page(app, "helpdesk").run()
    open_page(app, "convert").run()
    app.radio(key="convert_source_mode").set_value(MODE_UPLOAD).run()
    assert "アップロード済みのファイル: 売上.csv" in _texts(app.caption)

    # ...and is what the conversion reads.
    llm_server.add_chat(json={"action": "convert", "target_format": "xlsx"})
    app.button(key="convert_run").click().run()
    assert not app.exception, app.exception
    outcome = app.session_state[OUTCOME_KEY]
    assert outcome.result is not None
    assert outcome.result.status == "success"
    (written,) = outcome.result.files
    assert written.name == "売上.xlsx"
    assert written.is_relative_to(convert_env / "workspace")


def test_a_codeact_question_has_an_answer_field_that_continues_the_task(
    page: AppTest, llm_server: ScriptedLLMServer, source: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "xml", "output_name": "sales"})
    llm_server.add_chat("ルート要素名は何にしますか？", when=prompt_contains("You are CodeAct"))

    _convert(page, "XML に変換して", source)

    assert not page.exception, page.exception
    assert not page.error  # a question is not a failure
    (question,) = page.info
    assert "CodeAct からの質問: ルート要素名は何にしますか？" in question.value
    assert not page.get("download_button")
    code = 'df.to_xml("sales.xml", parser="etree", root_name="売上一覧", index=False)\n'
    llm_server.add_chat(f"```python\n{code}```", when=prompt_contains("回答: 売上一覧"))
    page.text_input(key=ANSWER_KEY).set_value("売上一覧")
    page.button(key="convert_answer_run").click().run()

    assert not page.exception, page.exception
    outcome = page.session_state[OUTCOME_KEY]
    assert outcome.result is not None
    assert outcome.result.status == "success", outcome.result.error
    (written,) = outcome.result.files
    assert "<売上一覧>" in written.read_text(encoding="utf-8")
    (download,) = page.get("download_button")
    assert download.proto.label == "sales.xml をダウンロード"
