"""入金消込 on the 実行 page (issue 35), driven with Streamlit's AppTest.

The example plan takes its files as vars: the page shows them as 設定値 file fields seeded with
the bundled sample, a person ticks ``confirm``, runs, sees the 要確認 lines asked for with their
candidates, picks the customer of the parent company's transfer and asks to remember the name;
the result shows the four sheets, and the learned-names store holds the name for the next run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.blocks.ui.answer_state import session_key
from keiri_agent.examples import example_data_dir
from keiri_agent.ui.fields import widget_key
from keiri_agent.ui.run.page import OUTCOMES_KEY
from keiri_agent.ui.run.plan_vars import FILE_FIELD_ID, var_key
from tests.ui.conftest import run_page

PAGE_TIMEOUT_S = 180
PLAN_ID = "examples/payment_matching"
PARENT_ID = "確認_7_20250214_275000"
HOMOPHONE_ID = "確認_9_20250220_198000"
SHEETS = ("消込済", "要確認", "未入金", "不明入金")


@pytest.fixture
def page(env: Path) -> AppTest:
    app = AppTest.from_function(run_page, default_timeout=PAGE_TIMEOUT_S)
    app.run()
    return app.selectbox(key="run_plan").set_value("サンプル: 入金消込").run()


def _answer_key(field: str) -> str:
    version = default_registry().get("ui.interactive_input").version
    return widget_key(session_key(PLAN_ID, "confirm_review", version), field, "value")


def _bank_path() -> str:
    return widget_key(var_key("run", PLAN_ID, "bank"), FILE_FIELD_ID, "path")


def _tab_labels(page: AppTest) -> list[str]:
    return [str(tab.label) for tab in page.tabs]


def test_the_vars_are_fields_seeded_with_the_sample_and_the_run_shows_four_sheets(
    page: AppTest,
) -> None:
    bank = page.session_state[var_key("run", PLAN_ID, "bank")][FILE_FIELD_ID]
    assert Path(bank) == example_data_dir() / "payment_matching" / "振込入金通知.txt"
    captions = [str(c.value) for c in page.caption]
    assert "サンプルデータ: 振込入金通知.txt" in captions
    # each file var named as the plan labels it (ui.vars)
    assert [str(u.label) for u in page.file_uploader] == [
        "請求一覧（請求番号・取引先・請求金額・支払期日）",
        "銀行の入金ファイル（振込入金通知・入出金明細）",
        "取引先マスタ（任意）",
        "学習済みの名義（任意）",
    ]
    fee = page.number_input(key=var_key("run", PLAN_ID, "fee_tolerance"))
    assert fee.label == "差し引かれてもよい振込手数料の上限（円）"
    assert page.checkbox(key=var_key("run", PLAN_ID, "confirm")).value is False

    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert any("成功しました" in str(s.value) for s in page.success)
    for sheet in SHEETS:
        assert any(label.startswith(sheet) for label in _tab_labels(page)), (sheet, page.tabs)
    # the first pass (before a person's answers) is not shown as a result: only in 途中の表
    assert not any("1 回目" in label for label in _tab_labels(page)), page.tabs
    assert not any(label.startswith("要確認の質問") for label in _tab_labels(page)), page.tabs
    assert any(str(e.label).startswith("途中の表（4 件") for e in page.expander)
    outputs = page.session_state[OUTCOMES_KEY][PLAN_ID].outputs
    assert len(outputs["apply_answers"]["review"]) == 2


def test_a_person_confirms_the_review_lines_and_the_name_is_remembered(
    page: AppTest, env: Path
) -> None:
    page.checkbox(key=var_key("run", PLAN_ID, "confirm")).check()
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    assert any("入力待ちです" in str(i.value) for i in page.info)
    question = page.selectbox(key=_answer_key(PARENT_ID))
    assert "請求:INV-2025-0108" in question.options or any(
        "INV-2025-0108" in str(option) for option in question.options
    )
    question.set_value("請求:INV-2025-0108")
    page.radio(key=_answer_key("覚える_" + PARENT_ID.removeprefix("確認_"))).set_value(True)
    page.selectbox(key=_answer_key(HOMOPHONE_ID)).set_value("取引先:1009")
    page.button(key="run_continue").click().run()

    assert not page.exception, page.exception
    assert any("成功しました" in str(s.value) for s in page.success)
    outputs = page.session_state[OUTCOMES_KEY][PLAN_ID].outputs
    result = outputs["apply_answers"]
    reasons = {(r["振込依頼人名"], r["請求番号"]): r["理由"] for r in result["matched"]}
    assert reasons[("ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "INV-2025-0108")] == "名義: 確認済み／金額: 一致"
    assert result["review"] == []
    assert any(label.startswith("消込済") for label in _tab_labels(page))
    store = (env / "workspace" / "learned_payer_names.csv").read_text(encoding="utf-8")
    assert "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ,1007" in store

    # The next run asks nobody about the parent company: its name was learned.
    page.checkbox(key=var_key("run", PLAN_ID, "confirm")).uncheck()
    page.button(key="run_start").click().run()
    assert not page.exception, page.exception
    again = page.session_state[OUTCOMES_KEY][PLAN_ID].outputs["apply_answers"]
    reasons = {(r["振込依頼人名"], r["請求番号"]): r["理由"] for r in again["matched"]}
    assert reasons[("ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "INV-2025-0108")] == "名義: 学習済み／金額: 一致"


def test_a_var_file_outside_the_workspace_is_refused_and_nothing_runs(
    page: AppTest, env: Path
) -> None:
    outside = env / "elsewhere" / "振込入金通知.txt"
    outside.parent.mkdir()
    outside.write_bytes((example_data_dir() / "payment_matching" / "振込入金通知.txt").read_bytes())
    page.text_input(key=_bank_path()).set_value(str(outside)).run()

    assert not page.exception, page.exception
    assert any("作業ディレクトリ" in str(e.value) for e in page.error)
    page.button(key="run_start").click().run()
    assert PLAN_ID not in page.session_state[OUTCOMES_KEY]
    assert not (env / "runs" / "examples" / "payment_matching").exists()
