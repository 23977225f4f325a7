"""The progress page's plan mode in real headless Chromium, as an accountant uses it.

The page lists the plans by their Japanese names; the chosen plan's inputs are a form at once,
its file uploaded with the request; the finished run shows its tables summarised and its report
with the chart inside (the HTML page the server made), files with their sizes in KB, and no
node ids in the progress lines. A bundled example runs on its sample data only when the person
asks for it. Plan generation is a kind of its own, and the page has its icon.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from keiri_agent.examples import example_data_dir
from tests.server.conftest import LiveServer, make_settings

pytestmark = pytest.mark.timeout(600)
TIMEOUT_MS = 120_000
SALES = example_data_dir() / "monthly_sales_report" / "売上明細.csv"


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(locale="ja-JP", viewport={"width": 1000, "height": 1600})
    context.set_default_timeout(TIMEOUT_MS)
    yield context.new_page()
    context.close()


@pytest.fixture
def live(serve: Callable[..., LiveServer], tmp_path: Path) -> LiveServer:
    return serve(make_settings(tmp_path, keiri_designs_dir=tmp_path / "designs"))


def _choose_plan(page: Page, live: LiveServer, plan: str) -> None:
    page.goto(live.url + "/")
    page.locator("#kind").select_option("plan")
    expect(page.locator("#plan option")).not_to_have_count(0)
    page.locator("#plan").select_option(plan)


def test_a_plan_runs_with_an_uploaded_file_and_shows_its_report_with_the_chart(
    page: Page, live: LiveServer, tmp_path: Path
) -> None:
    _choose_plan(page, live, "monthly_sales_report")
    expect(page.locator("#plan option:checked")).to_have_text("サンプル: 月次売上レポート")
    expect(page.locator("#request")).to_be_hidden()  # a plan needs no conversion request
    inputs = page.locator("#plan-inputs")
    expect(inputs).to_contain_text("集計する売上明細（CSV または Excel）を指定してください")
    upload = tmp_path / "2025年上期の売上.csv"
    upload.write_bytes(SALES.read_bytes())
    inputs.locator("input[type=file]").set_input_files(upload)
    page.locator("#submit").click()

    expect(page.locator("#answer-section")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("#error-banner")).to_be_hidden()
    tables = page.locator("#tables-list li")
    expect(tables.first).to_have_text("月別: 6 行 × 3 列（月、売上金額、件数）")
    expect(tables.nth(1)).to_contain_text("合計: 売上金額 27,850,400")
    frame = page.frame_locator("iframe.report")
    expect(frame.get_by_role("heading", name="月次売上レポート")).to_be_visible()
    chart = frame.locator("img").first
    expect(chart).to_be_visible()
    assert chart.evaluate("img => img.complete && img.naturalWidth > 0")
    assert (chart.get_attribute("src") or "").startswith("data:image/png;base64,")
    expect(frame.locator("strong", has_text="27,850,400").first).to_be_visible()  # the total
    expect(page.locator("#answer")).to_be_hidden()  # no Markdown source with file paths
    files = page.locator("#files-list")
    expect(files).to_contain_text("月次売上.xlsx（")
    assert re.search(r"月次売上\.xlsx（[\d.]+ KB）", files.inner_text())
    assert "バイト）" not in files.inner_text().split("月次売上.xlsx")[1].split("\n")[0]
    log = page.locator("#log").text_content() or ""
    assert "▶ 売上明細の読み込み 開始" in log
    assert "read_sales" not in log
    assert "file.read_table" not in log
    assert "Plan 終了（成功）" in log


def test_a_bundled_plan_runs_on_its_sample_data_only_when_asked(
    page: Page, live: LiveServer
) -> None:
    _choose_plan(page, live, "duplicate_invoice_check")
    page.locator("#submit").click()  # no file given, sample data not asked for
    banner = page.locator("#error-banner")
    expect(banner).to_be_visible(timeout=TIMEOUT_MS)
    expect(banner).to_contain_text("請求書一覧")
    (task,) = live.registry.list()
    # the banner comes with the task's error event, before its status is saved as failed
    assert live.wait_finished(task.id) == "failed"

    page.locator("#use-sample").check()
    expect(page.locator("#plan-inputs")).to_be_hidden()
    page.locator("#submit").click()
    frame = page.frame_locator("iframe.report")
    expect(frame.get_by_role("heading", name="請求書の二重計上チェック")).to_be_visible(
        timeout=TIMEOUT_MS
    )
    expect(frame.get_by_text("165,000").first).to_be_visible()  # amounts with separators


def test_each_kind_asks_for_its_own_request_and_the_page_has_its_icon(
    page: Page, live: LiveServer
) -> None:
    page.goto(live.url + "/")
    kinds = page.locator("#kind option")
    expect(kinds).to_have_text(["変換・可視化", "Plan の実行", "データ分析", "Plan の自動生成"])
    page.locator("#kind").select_option("design")
    expect(page.locator("#request-label")).to_have_text("指示")
    expect(page.locator("#request")).to_have_attribute("placeholder", re.compile("照合"))
    expect(page.locator("#apply-mode")).to_be_visible()
    page.locator("#kind").select_option("analysis")
    expect(page.locator("#request-label")).to_have_text("質問")
    icon = page.request.get(live.url + "/favicon.ico")
    assert icon.ok
    assert icon.headers["content-type"] == "image/png"
    assert page.locator("link[rel=icon]").get_attribute("href") == "/static/icon.png"
