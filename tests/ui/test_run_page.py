"""The 実行 page driven with Streamlit's AppTest: the bundled examples run with their inputs, a
paused run is answered and continued, errors show the seed 002 §9.3 display and rerun from the
failed node, values survive reruns and page switches, and only リセット clears them.

The page is run on its own (``AppTest.from_function``), except for the page-switch test, which
runs the whole app and moves between its pages as the navigation does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.blocks.ui.answer_state import session_key
from keiri_agent.events.models import PlanStart
from keiri_agent.events.runlog import list_runs, read_events
from keiri_agent.examples import example_answers, examples_root
from keiri_agent.plan import PlanEnv
from keiri_agent.ui import APP_PATH
from keiri_agent.ui.fields import widget_key
from keiri_agent.ui.run.page import OUTCOMES_KEY
from keiri_agent.ui.run.plan_choice import PATH_CHOICE
from keiri_agent.ui.views import PAGES
from tests.support import ScriptedLLMServer
from tests.ui.conftest import open_page, run_page
from tests.ui.screen import error_details

PAGE_TIMEOUT_S = 120
DATA = examples_root() / "examples" / "data"
RECONCILIATION = "examples/invoice_reconciliation"
DUPLICATES = "examples/duplicate_invoice_check"
LLM_PLAN = "examples/invoice_reconciliation_llm"
INVOICES = [
    {"取引先": "青葉商事", "請求書番号": "INV-2025-0101", "請求日": "2025-01-10",
     "支払期限": "2025-01-31", "請求金額": 330000},
    {"取引先": "桜井製作所", "請求書番号": "INV-2025-0104", "請求日": "2025-01-15",
     "支払期限": "2025-01-31", "請求金額": 550000},
]  # fmt: skip
APPROVAL_PLAN = """\
apiVersion: v1
id: tests/approval
version: 1.0.0
vars: { month: 2025-01 }
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: mixed
      message: "${vars.month} の締め処理を承認してください"
      requirements:
        - { id: amount, type: number, label: 確認した金額, validation: { min: 0 } }
    out: { collected_data: collected }
  - id: note
    block: report.markdown
    in:
      title: 締め処理
      template: "{{ month }} の金額 {{ amount }} 円、承認 {{ approved }}"
      data: { month: "${vars.month}", amount: "${ask.collected.amount}", approved: "${ask.approved}" }
"""


@pytest.fixture
def page(env: Path) -> AppTest:
    return AppTest.from_function(run_page, default_timeout=PAGE_TIMEOUT_S)


def _key(plan_id: str, field: str, part: str = "path", node: str = "collect_inputs") -> str:
    version = default_registry().get("ui.interactive_input").version
    return widget_key(session_key(plan_id, node, version), field, part)


def _texts(elements: object) -> list[str]:
    return [str(element.value) for element in elements]  # type: ignore[attr-defined]


def _choose(page: AppTest, label: str) -> AppTest:
    page.run()
    return page.selectbox(key="run_plan").set_value(label).run()


def _table(page: AppTest, column: str, value: str) -> pd.DataFrame:
    """The shown table that has ``value`` in ``column``."""
    for frame in page.dataframe:
        data = frame.value
        if column in data.columns and value in set(data[column].astype(str)):
            return data
    raise AssertionError(f"no table shows {column}={value}")


def _shown(page: AppTest, column: str, value: str) -> dict[str, list[str]]:
    """What the person reads in the shown table that has ``value`` in ``column``: each
    column's cells as displayed (a styled table's display values)."""
    for frame in page.dataframe:
        data = frame.value
        if column in data.columns and value in set(data[column].astype(str)):
            return _display(frame, data)
    raise AssertionError(f"no table shows {column}={value}")


def _display(frame: Any, data: pd.DataFrame) -> dict[str, list[str]]:
    """A shown table's cells as displayed: a styled table sends its display values."""
    styler = frame.proto.arrow_data.styler
    if not styler.display_values:
        return {str(c): [str(v) for v in data[c]] for c in data.columns}
    shown = pa.ipc.open_stream(styler.display_values).read_all().to_pandas()
    return {str(c): [str(v) for v in shown[c]] for c in shown.columns}


def _runs(env: Path, plan_id: str) -> list[Path]:
    return list_runs(plan_id, runs_dir=env / "runs")


def test_the_page_follows_design_in_the_navigation() -> None:
    titles = [spec.title for spec in PAGES]
    assert titles == ["ホーム", "設計", "実行", "予定", "データ分析", "ヘルプデスク", "変換"]
    assert PAGES[2].url_path == "run"


def test_an_uploaded_file_runs_the_duplicate_check_and_shows_tables_and_downloads(
    page: AppTest, env: Path
) -> None:
    page.run()
    assert page.selectbox(key="run_plan").value == "サンプル: 請求書の二重計上チェック"
    workbook = DATA / "duplicate_invoice_check" / "請求書一覧.xlsx"
    page.file_uploader[0].set_value((workbook.name, workbook.read_bytes(), "application/zip"))
    page.run()
    stored = page.session_state[session_key(DUPLICATES, "collect_inputs", "0.1.0")]
    saved = Path(stored["invoice_list"])
    assert saved.name == workbook.name
    # The field names the uploaded file; the folder the app keeps it in is not shown.
    assert page.text_input(key=_key(DUPLICATES, "invoice_list")).value == ""
    assert "アップロードしたファイル: 請求書一覧.xlsx" in _texts(page.caption)
    assert saved.is_relative_to(env / "workspace")
    assert saved.read_bytes() == workbook.read_bytes()

    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert any("成功しました" in s for s in _texts(page.success))
    assert not page.error
    duplicates = _table(page, "請求書番号", "R-1003")
    assert len(duplicates) == 4
    # Amounts are shown with thousands separators (the rule of every output), row numbers not.
    shown = _shown(page, "請求書番号", "R-1003")
    assert "165,000" in shown["金額"]
    assert "行番号" in duplicates.columns
    assert all("," not in str(v) for v in shown["行番号"])
    # Tabs carry the workbook's sheet names in the workbook's order (the plan's
    # excel.write_report sheets: what the check found first), then the table read.
    assert [tab.label for tab in page.tabs] == [
        "重複候補（4 行）",
        "重複グループ（3 行）",
        "重複除外後（8 行）",
        "読み込んだ表（12 行）",  # not written out: the port's label
    ]
    assert any("重複の疑いがある請求書は 4 件" in m for m in _texts(page.markdown))
    downloads = [b.proto.label for b in page.get("download_button")]
    assert downloads[:3] == [
        "Markdown（.md）",
        "HTML（グラフ入り、1 ファイル）",
        "ZIP（.md とグラフ）",
    ]
    # the written files in the order they were written (the two writers run side by side)
    assert sorted(downloads[3:]) == [
        "重複チェック.md をダウンロード",
        "重複チェック結果.xlsx をダウンロード",
    ]
    (log,) = _runs(env, DUPLICATES)
    assert [e.event for e in read_events(log)][-1] == "plan_complete"

    page.run()  # a rerun shows the same result and runs nothing
    assert len(_table(page, "請求書番号", "R-1003")) == 4
    assert len(_runs(env, DUPLICATES)) == 1
    assert "アップロードしたファイル: 請求書一覧.xlsx" in _texts(page.caption)


def test_values_survive_reruns_and_page_switches_until_reset(env: Path) -> None:
    app = open_page(AppTest.from_file(str(APP_PATH), default_timeout=PAGE_TIMEOUT_S), "run")
    app.run()
    app.selectbox(key="run_plan").set_value("サンプル: 請求書と入金明細の照合").run()
    evidence = str(DATA / "invoice_reconciliation" / "請求書.zip")
    app.text_input(key=_key(RECONCILIATION, "evidence_zip")).set_value(evidence)
    app.text_input(key=_key(RECONCILIATION, "bank_sheet", "value")).set_value("2025年1月")
    app.run()
    app.run()
    assert app.text_input(key=_key(RECONCILIATION, "evidence_zip")).value == evidence

    open_page(app, "analysis").run()
    assert not app.exception, app.exception
    assert "データ分析" in _texts(app.title)
    # Streamlit dropped the widgets of the page that is not shown; the stored values remain.
    assert _key(RECONCILIATION, "evidence_zip") not in app.session_state
    open_page(app, "run").run()

    assert not app.exception, app.exception
    assert app.selectbox(key="run_plan").value == "サンプル: 請求書と入金明細の照合"
    # Kept; shown by its name as the sample data it is (the path box is for typing).
    assert "サンプルデータ: 請求書.zip" in _texts(app.caption)
    assert app.text_input(key=_key(RECONCILIATION, "bank_sheet", "value")).value == "2025年1月"
    stored = app.session_state[session_key(RECONCILIATION, "collect_inputs", "0.1.0")]
    assert stored == {"evidence_zip": evidence, "bank_statement": None, "bank_sheet": "2025年1月"}

    app.button(key="run_reset").click().run()
    assert app.text_input(key=_key(RECONCILIATION, "evidence_zip")).value == ""
    assert app.text_input(key=_key(RECONCILIATION, "bank_sheet", "value")).value == "入金明細"


def test_a_missing_file_shows_the_error_and_reruns_from_the_failed_node(
    page: AppTest, env: Path
) -> None:
    _choose(page, "サンプル: 請求書と入金明細の照合")
    bank = str(DATA / "invoice_reconciliation" / "入金明細.xlsx")
    missing = str(env / "workspace" / "ない.zip")
    page.text_input(key=_key(RECONCILIATION, "evidence_zip")).set_value(missing)
    page.text_input(key=_key(RECONCILIATION, "bank_statement")).set_value(bank)
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    (error,) = page.error
    assert "ない.zip が見つかりません" in error.value
    shown = error_details(page)  # in words: no ids, no English names, no true/false
    assert shown["エラーの種類"] == "入力の誤り（INPUT_VALIDATION_FAILED）"
    assert shown["もう一度実行すると"].startswith("成功することがあります")
    assert any(c == "止まったところ: 請求書と入金明細の指定" for c in _texts(page.caption))
    assert any("存在するファイルを指定" in i for i in _texts(page.info))  # the hint
    assert not page.tabs  # nothing downstream ran

    # The person fixes the field (its value was kept) and reruns from the failed node.
    evidence = str(DATA / "invoice_reconciliation" / "請求書.zip")
    page.text_input(key=_key(RECONCILIATION, "evidence_zip")).set_value(evidence)
    page.button(key="run_retry").click().run()

    assert not page.exception, page.exception
    assert not page.error
    assert any("成功しました" in s for s in _texts(page.success))
    assert any("再実行（請求書と入金明細の指定 から）" in c for c in _texts(page.caption))
    matched = _table(page, "区分", "許容範囲内")
    assert "北斗運輸" in set(matched["取引先"])
    second, first = _runs(env, RECONCILIATION)  # newest first
    start = read_events(second)[0]
    assert isinstance(start, PlanStart)
    assert start.rerun_from == "collect_inputs"

    # The failed run can be opened again from the history.
    page.selectbox(key="run_history_pick").set_value(str(first))
    page.button(key="run_history_open").click().run()
    assert not page.exception, page.exception
    assert "ない.zip が見つかりません" in page.error[0].value


def test_a_paused_run_asks_for_its_input_and_continues(page: AppTest, env: Path) -> None:
    designs = env / "designs"
    designs.mkdir()
    (designs / "approval.yaml").write_text(APPROVAL_PLAN, encoding="utf-8")
    _choose(page, "approval.yaml")
    # The message is computed from vars, so the node is asked for when the run reaches it.
    assert any("実行前に入力する項目はありません" in c for c in _texts(page.caption))
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert any("入力待ちです" in i for i in _texts(page.info))
    assert "**2025-01 の締め処理を承認してください**" in _texts(page.markdown)
    page.number_input(key=_key("tests/approval", "amount", "value", node="ask")).set_value(1200)
    reply = widget_key("reply:" + session_key("tests/approval", "ask", "0.1.0"), "approval")
    page.selectbox(key=reply).set_value(True)
    page.button(key="run_continue").click().run()

    assert not page.exception, page.exception
    assert any("成功しました" in s for s in _texts(page.success))
    assert any("再開（元: run_" in c for c in _texts(page.caption))
    outcome = page.session_state[OUTCOMES_KEY]["tests/approval"]
    assert "2025-01 の金額 1200 円、承認 True" in outcome.outputs["note"]["markdown"]
    assert any("2025-01 の金額 1200 円" in m for m in _texts(page.markdown))  # the report file


def test_a_run_runs_with_the_plan_env_the_page_checked_it_with(
    page: AppTest, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    designs = env / "designs"
    designs.mkdir()
    (designs / "approval.yaml").write_text(APPROVAL_PLAN, encoding="utf-8")
    _choose(page, "approval.yaml")
    built: list[PlanEnv] = []
    original = PlanEnv.of.__func__  # type: ignore[attr-defined]

    def counted(cls: type[PlanEnv], *args: Any, **kwargs: Any) -> PlanEnv:
        made: PlanEnv = original(cls, *args, **kwargs)
        built.append(made)
        return made

    monkeypatch.setattr(PlanEnv, "of", classmethod(counted))
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert any("入力待ちです" in i for i in _texts(page.info))
    assert len(built) == 1  # the page's: it validated, named and ran the plan with it


def _start_at(log: Path, stamp: str) -> None:
    """Let the run in ``log`` have started at ``stamp`` (UTC, as logs store it)."""
    first, *rest = log.read_text(encoding="utf-8").splitlines()
    event = json.loads(first)
    event["timestamp"] = stamp
    log.write_text("\n".join([json.dumps(event, ensure_ascii=False), *rest]) + "\n", "utf-8")


def test_times_are_shown_where_the_person_lives_with_the_zone_named(
    page: AppTest, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Logs and names keep UTC; the page shows KEIRI_TIMEZONE's time (default Asia/Tokyo),
    labelled: the run's start, the history, and when a plan of the 設計 page was saved."""
    designs = env / "designs"
    designs.mkdir()
    saved = designs / "approval_202612060315.yaml"  # saved at 03:15 UTC
    saved.write_text(APPROVAL_PLAN, encoding="utf-8")
    _choose(page, saved.name)
    assert f"{saved.name}（2026-12-06 12:15 JST 保存）" in page.selectbox(key="run_plan").options
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    (log,) = _runs(env, "tests/approval")
    start = read_events(log)[0].timestamp.astimezone(ZoneInfo("Asia/Tokyo"))
    assert any(f"・開始 {start:%Y-%m-%d %H:%M:%S} JST・" in c for c in _texts(page.caption))

    _start_at(log, "2026-12-06T15:30:00Z")  # already the next day in Tokyo
    page.run()
    (history,) = [f.value for f in page.dataframe if "開始" in f.value.columns]
    assert list(history["開始"]) == ["2026-12-07 00:30:00 JST"]

    monkeypatch.setenv("KEIRI_TIMEZONE", "America/New_York")
    page.run()
    (history,) = [f.value for f in page.dataframe if "開始" in f.value.columns]
    assert list(history["開始"]) == ["2026-12-06 10:30:00 EST"]
    assert f"{saved.name}（2026-12-05 22:15 EST 保存）" in page.selectbox(key="run_plan").options


def test_a_plan_path_that_is_missing_or_invalid_is_explained(page: AppTest, env: Path) -> None:
    _choose(page, PATH_CHOICE)
    assert any("パスを入力してください" in i for i in _texts(page.info))
    page.text_input(key="run_plan_path").set_value(str(env / "designs" / "ない.yaml")).run()
    assert not page.exception, page.exception
    assert "見つかりません" in page.error[0].value

    (env / "designs").mkdir()
    broken = env / "designs" / "broken.yaml"
    broken.write_text("id: broken\ngraph:\n  - id: a\n    block: no.such_block\n", "utf-8")
    page.text_input(key="run_plan_path").set_value(str(broken)).run()
    assert not page.exception, page.exception
    assert page.error
    assert "PLAN_INVALID" in error_details(page)["エラーの種類"]
    assert not page.button  # nothing to run


def test_a_plan_file_outside_the_designs_folder_and_the_workspace_is_refused(
    page: AppTest, env: Path
) -> None:
    outside = env / "elsewhere"
    outside.mkdir()
    (outside / "approval.yaml").write_text(APPROVAL_PLAN, encoding="utf-8")
    (env / "designs").mkdir()
    (env / "designs" / "approval.yaml").symlink_to(outside / "approval.yaml")
    _choose(page, PATH_CHOICE)

    for typed in (outside / "approval.yaml", env / "designs" / "approval.yaml", "~/a.yaml"):
        page.text_input(key="run_plan_path").set_value(str(typed)).run()
        assert not page.exception, page.exception
        (error,) = page.error
        assert error.value.startswith(f"「Plan ファイルのパス」のパス「{typed}」は使えません。")
        assert "Plan の保存先（KEIRI_DESIGNS_DIR）" in error.value
        assert "PERMISSION_DENIED" in error_details(page)["エラーの種類"]
        assert not page.button  # the plan was not read: nothing to run

    (env / "designs" / "approval.yaml").unlink()
    (env / "designs" / "approval.yaml").write_text(APPROVAL_PLAN, encoding="utf-8")
    page.text_input(key="run_plan_path").set_value(str(env / "designs" / "approval.yaml")).run()
    assert not page.error
    assert "Plan ID: tests/approval（版 1.0.0）" in _texts(page.caption)


def test_a_data_path_outside_the_workspace_is_refused_and_never_read(
    page: AppTest, env: Path
) -> None:
    """A copy of the sample evidence outside the workspace would make the run succeed."""
    outside = env / "elsewhere"
    outside.mkdir()
    secret = outside / "請求書.zip"
    secret.write_bytes((DATA / "invoice_reconciliation" / "請求書.zip").read_bytes())
    _choose(page, "サンプル: 請求書と入金明細の照合")
    bank = str(DATA / "invoice_reconciliation" / "入金明細.xlsx")
    page.text_input(key=_key(RECONCILIATION, "evidence_zip")).set_value(str(secret))
    page.text_input(key=_key(RECONCILIATION, "bank_statement")).set_value(bank)
    page.run()

    assert not page.exception, page.exception
    (refusal,) = page.error
    assert refusal.value.startswith("「請求書 ZIP（取引先ごとのフォルダ）」のパス「")
    assert (
        "作業ディレクトリ（KEIRI_WORKSPACE_ROOT）・サンプルデータの中のファイルだけ"
        in refusal.value
    )

    page.button(key="run_start").click().run()
    assert not page.exception, page.exception
    assert not any("成功しました" in s for s in _texts(page.success))
    (log,) = _runs(env, RECONCILIATION)
    assert str(secret) not in log.read_text(encoding="utf-8")
    assert not page.tabs  # no result was computed from it


def test_an_llm_plan_without_a_provider_explains_how_to_configure_one(page: AppTest) -> None:
    _choose(page, "サンプル: AI による請求書と入金明細の照合")

    assert not page.exception, page.exception
    (warning,) = page.warning
    assert "AI による読み取り・照合" in warning.value
    assert "ai.process_llm" not in warning.value
    assert "OPENAI_API_KEY" in warning.value
    for provider in ("Azure OpenAI", "Anthropic", "Ollama"):
        assert provider in warning.value


def _states(page: AppTest) -> dict[str, str]:
    """Node → state in the node table of the shown outcome."""
    (table,) = [
        f.value
        for f in page.dataframe
        if "ノード ID" in f.value.columns and "状態" in f.value.columns
    ]
    return dict(zip(table["ノード ID"], table["状態"], strict=True))


def _rerun_from(env: Path) -> str | None:
    start = read_events(_runs(env, LLM_PLAN)[0])[0]
    assert isinstance(start, PlanStart)
    return start.rerun_from


def test_an_llm_failure_reruns_from_its_node_or_from_an_edited_input(
    page: AppTest, env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    llm_server.add_error(500, "upstream exploded", times=2)
    _choose(page, "サンプル: AI による請求書と入金明細の照合")
    assert not page.warning  # the scripted server is a configured provider
    for field, value in example_answers("invoice_reconciliation_llm")["collect_inputs"].items():
        page.text_input(key=_key(LLM_PLAN, field)).set_value(value)
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert "HTTP 500" in page.error[0].value
    assert "API_ERROR" in error_details(page)["エラーの種類"]
    assert _states(page)["extract_invoices"] == "エラー"

    # Nothing was edited: the rerun starts at the failed node and reuses what ran before it.
    page.button(key="run_retry").click().run()
    assert not page.exception, page.exception
    assert _rerun_from(env) == "extract_invoices"
    states = _states(page)
    assert (states["collect_inputs"], states["parse_evidence"]) == ("再利用", "再利用")
    assert states["extract_invoices"] == "エラー"

    # An edited input runs again from that input, so the edit is used.
    template = Path(example_answers("invoice_reconciliation_llm")["collect_inputs"]["workbook"])
    copy = env / "workspace" / "ひな形のコピー.xlsx"  # typed paths are taken in the workspace
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(template.read_bytes())
    page.text_input(key=_key(LLM_PLAN, "workbook")).set_value(str(copy))
    llm_server.add_chat(json={"results": {"items": INVOICES}})
    page.button(key="run_retry").click().run()

    assert not page.exception, page.exception
    assert not page.error
    assert any("成功しました" in s for s in _texts(page.success))
    assert _rerun_from(env) == "collect_inputs"
    assert _states(page)["extract_invoices"] == "完了"
    assert len(llm_server.chat_requests()) == 3
    assert _table(page, "区分", "金額差異")["取引先"].tolist() == ["桜井製作所"]
