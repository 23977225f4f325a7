"""The 実行 page as an accountant uses it (AppTest): サンプルデータを使う fills a bundled example's
inputs, its results come in the plan's order with Japanese names, the report is drawn with its
chart, amounts and totals are shown as everywhere else, and the history opens on the run shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.examples import example_names, example_title
from tests.ui.test_run_page import PAGE_TIMEOUT_S, _texts, run_page

# The examples whose plans call no LLM: they run on their sample data as they are.
NO_LLM = ["duplicate_invoice_check", "invoice_reconciliation", "monthly_sales_report"]
TABS = {
    "duplicate_invoice_check": ["重複候補", "重複グループ", "重複除外後", "読み込んだ表"],
    "invoice_reconciliation": [
        "照合結果",
        "差異",
        "未入金",
        "不明入金",
        "読み取った表",
        "読み込んだ表",
    ],
    "monthly_sales_report": ["月別", "商品区分別", "得意先別", "読み込んだ表"],
}


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    return AppTest.from_function(run_page, default_timeout=PAGE_TIMEOUT_S)


def _run_sample(page: AppTest, name: str) -> AppTest:
    page.run()
    page.selectbox(key="run_plan").set_value(f"サンプル: {example_title(name)}").run()
    page.button(key="run_use_sample").click().run()
    assert not page.exception, page.exception
    assert any("サンプルデータが入っています" in c for c in _texts(page.caption))
    page.button(key="run_start").click().run()
    assert not page.exception, page.exception
    return page


def _tab_names(page: AppTest) -> list[str]:
    return [tab.label.rsplit("（", 1)[0] for tab in page.tabs]


def test_every_example_without_an_llm_offers_its_sample_data() -> None:
    assert set(NO_LLM) <= set(example_names())


@pytest.mark.parametrize("name", NO_LLM)
def test_the_sample_data_runs_the_example_with_results_in_plan_order(
    page: AppTest, name: str
) -> None:
    _run_sample(page, name)
    assert any("成功しました" in s for s in _texts(page.success)), _texts(page.error)
    assert _tab_names(page) == TABS[name]


def _styled(frame: Any) -> tuple[dict[str, list[str]], str]:
    styler = frame.proto.arrow_data.styler
    shown = pa.ipc.open_stream(styler.display_values).read_all().to_pandas()
    return {str(c): [str(v) for v in shown[c]] for c in shown.columns}, styler.styles


def test_the_report_is_drawn_with_its_chart_and_totals_stand_out(page: AppTest) -> None:
    _run_sample(page, "monthly_sales_report")
    assert "報告書: 月次売上レポート" in _texts(page.subheader)
    images = page.get("image")
    assert images, "the chart is drawn with the report"
    assert any("![" not in m and "## 月別売上" in m for m in _texts(page.markdown))
    assert not any("/tmp" in m or "runs/" in m for m in _texts(page.markdown))
    for frame in page.dataframe:
        if "商品区分" in frame.value.columns:
            cells, styles = _styled(frame)
            assert cells["売上金額"][-1] == "27,850,400"
            assert cells["商品区分"][-1] == "合計"
            assert "#T_" in styles
            assert "row3_col0" in styles.split("font-weight: bold")[0]  # the 合計 row in bold
            break
    else:
        raise AssertionError("no 商品区分 table")
    downloads = [b.proto.label for b in page.get("download_button")]
    assert "HTML（グラフ入り、1 ファイル）" in downloads
    assert "ZIP（.md とグラフ）" in downloads


def test_negatives_are_shown_as_the_setting_says(
    page: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_NEGATIVE_AMOUNTS", "parens")
    _run_sample(page, "invoice_reconciliation")
    for frame in page.dataframe:
        if "差額" in frame.value.columns:
            cells, _ = _styled(frame)
            negatives = [c for c in cells["差額"] if c.startswith("(")]
            assert negatives, cells["差額"]
            assert all(not c.startswith("-") for c in cells["差額"])
            return
    raise AssertionError("no table with 差額")


def test_the_history_opens_on_the_run_on_screen(page: AppTest) -> None:
    _run_sample(page, "duplicate_invoice_check")
    first = page.selectbox(key="run_history_pick").value
    page.button(key="run_start").click().run()
    second = page.selectbox(key="run_history_pick").value
    assert second != first  # the new run, not the one before it
    assert page.session_state["run_outcomes"]["examples/duplicate_invoice_check"].log_path == Path(
        second
    )
