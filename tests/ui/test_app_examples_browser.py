"""The app as an accountant first meets it, in real headless Chromium (``streamlit run app.py``
at the repository root), with every request to outside this machine blocked.

On the 実行 page every bundled example runs with サンプルデータを使う (the two that use an LLM
against the scripted OpenAI-compatible server): its result tables come in the plan's order
under Japanese names, the monthly report is drawn with its chart, and no block or node id shows
outside the details sections. Streamlit's own chrome reads in Japanese (the uploader, no Deploy
button), the pages open by their URLs, and nothing is fetched from the internet (the page icon
is the package's own file).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, Route, expect, sync_playwright

from keiri_agent.blocks.registry import default_registry
from keiri_agent.examples import example_names, example_plan, example_title
from keiri_agent.plan import Plan, load_source
from tests.support import ScriptedLLMServer
from tests.support.browser import chromium_args
from tests.ui.test_app_browser import TIMEOUT_MS, rerun, running_app, settled, watched
from tests.ui.test_app_browser import app_url as app_url  # a fixture, used by name

pytestmark = pytest.mark.timeout(1500)  # six plans run one after another on a loaded machine
RUN_TIMEOUT_MS = 180_000
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
TABS = {
    "duplicate_invoice_check": ["重複候補", "重複グループ", "重複除外後", "読み込んだ表"],
    "expense_policy_check": ["要対応", "判定結果", "読み取ったファイル"],
    "invoice_reconciliation": [
        "照合結果",
        "差異",
        "未入金",
        "不明入金",
        "読み取った表",
        "読み込んだ表",
    ],
    "invoice_reconciliation_llm": [
        "差異一覧",
        "読み取り結果",
        "読み込んだ表",
        "一致",
        "右の表だけの行",
    ],
    "monthly_sales_report": ["月別", "商品区分別", "得意先別", "読み込んだ表"],
    # the workbook's four sheets first; the first matching pass's tables only in 途中の表, the
    # questions for the person (a contract between blocks: result: false) in the details
    "payment_matching": [
        "消込済",
        "要確認",
        "未入金",
        "不明入金",
        "読み込んだ表",
        "入金",
    ],
}
# Examples whose sample files are the defaults of their vars (the 設定値 fields): nothing to fill.
VARS_CARRY_SAMPLES = {"payment_matching"}
# What the scripted model answers for the examples that call one (as tests/examples script it).
LLM_REPLIES = {
    "expense_policy_check": {
        "results": {
            "items": [
                {"No": 1, "氏名": "佐藤 花子", "費目": "交通費", "金額": 1280, "判定": "適合", "該当条項": "", "理由": ""},
                {"No": 2, "氏名": "鈴木 一郎", "費目": "宿泊費", "金額": 15400, "判定": "違反", "該当条項": "第4条", "理由": "上限超過"},
            ]
        },
        "summary": {"違反": 1, "要確認": 0, "所見": "宿泊費に規程違反があります。"},
    },
    "invoice_reconciliation_llm": {
        "results": {
            "items": [
                {"取引先": "青葉商事", "請求書番号": "INV-2025-0101", "請求日": "2025-01-10", "支払期限": "2025-01-31", "請求金額": 330000},
                {"取引先": "桜井製作所", "請求書番号": "INV-2025-0104", "請求日": "2025-01-15", "支払期限": "2025-01-31", "請求金額": 550000},
            ]
        }
    },
}  # fmt: skip


class Outside:
    """Routes every request to a host other than this machine to an abort, and notes it."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def route(self, route: Route) -> None:
        host = re.match(r"^[a-z]+://([^/:]+|\[[^\]]+\])", route.request.url)
        if host is not None and host.group(1) not in LOOPBACK:
            self.blocked.append(route.request.url)
            route.abort()
        else:
            route.continue_()


@pytest.fixture
def offline(chromium: Path) -> Iterator[tuple[BrowserContext, Outside]]:
    """A browser whose every request outside this machine fails."""
    outside = Outside()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=chromium_args()
        )
        context = browser.new_context(locale="ja-JP", viewport={"width": 1400, "height": 1800})
        context.set_default_timeout(TIMEOUT_MS)
        context.route("**/*", outside.route)
        yield context, outside
        browser.close()


@pytest.fixture
def llm_app_url(llm_server: ScriptedLLMServer, tmp_path: Path) -> Iterator[str]:
    """The app configured to use the scripted LLM server (as a user points it at Ollama)."""
    with running_app(tmp_path) as url:
        yield url


def _ids(name: str) -> set[str]:
    """The node ids of an example plan and every block id: words a person should not read."""
    plan = Plan.model_validate(load_source(example_plan(name)).raw)
    nodes = {node.id for node in plan.graph}
    return nodes | {spec.id for spec in default_registry().list()} | {plan.id}


def _shown_outside_details(page: Page) -> str:
    """The main area's text without its details sections (expanders)."""
    return str(
        page.get_by_test_id("stMain").evaluate(
            """main => {
                const copy = main.cloneNode(true);
                copy.querySelectorAll('[data-testid="stExpander"]').forEach((e) => e.remove());
                return copy.innerText;
            }"""
        )
    )


def _choose(page: Page, name: str) -> None:
    title = example_title(name)
    settled(page)  # a run drawing the page would close the dropdown under the click
    page.get_by_test_id("stSelectbox").filter(has_text="Plan").click()
    # not rerun(): the first example is the one chosen already, and choosing it reruns nothing
    page.get_by_role("option", name=f"サンプル: {title}", exact=True).click()
    description = Plan.model_validate(load_source(example_plan(name)).raw).description or ""
    expect(page.get_by_text(description, exact=True)).to_be_visible(timeout=TIMEOUT_MS)
    settled(page)  # the description is the new choice's: its run has started


def test_every_example_runs_on_its_sample_data_with_results_in_plan_order(
    llm_app_url: str, offline: tuple[BrowserContext, Outside], llm_server: ScriptedLLMServer
) -> None:
    context, outside = offline
    page = watched(context.new_page())
    page.goto(llm_app_url + "/run")
    expect(page.get_by_role("heading", name="実行", exact=True)).to_be_visible(timeout=TIMEOUT_MS)
    assert sorted(TABS) == example_names()
    for name in example_names():
        _choose(page, name)
        expect(page.get_by_role("tab")).to_have_count(0)  # nothing run yet for this plan
        if name not in VARS_CARRY_SAMPLES:
            rerun(page, page.get_by_role("button", name="サンプルデータを使う").click)
            expect(
                page.get_by_text("入力欄にサンプルデータが入っています", exact=False)
            ).to_be_visible()
        if name in LLM_REPLIES:
            llm_server.add_chat(json=LLM_REPLIES[name])
        rerun(page, page.get_by_role("button", name="実行", exact=True).click)
        expect(page.get_by_text("成功しました")).to_be_visible(timeout=RUN_TIMEOUT_MS)

        tabs = page.get_by_role("tab")
        expect(tabs.first).to_be_visible(timeout=TIMEOUT_MS)
        shown = [re.sub(r"（[\d,]+ 行）$", "", text) for text in tabs.all_inner_texts()]
        assert shown == TABS[name], name
        text = _shown_outside_details(page)
        leaked = sorted(word for word in _ids(name) if word in text)
        assert leaked == [], f"{name}: ids outside the details: {leaked}"
        if name == "monthly_sales_report":
            chart = page.get_by_test_id("stImage").locator("img").first
            expect(chart).to_be_visible()
            assert chart.evaluate("img => img.complete && img.naturalWidth > 0")
            expect(page.get_by_text("報告書: 月次売上レポート")).to_be_visible()
    assert outside.blocked == []


def test_the_app_works_offline_in_japanese_chrome(
    app_url: str, offline: tuple[BrowserContext, Outside]
) -> None:
    context, outside = offline
    page = context.new_page()
    for path, title in (("/design", "設計"), ("/run", "実行"), ("/analysis", "データ分析")):
        page.goto(app_url + path)
        expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible(
            timeout=TIMEOUT_MS
        )
        expect(page.get_by_text("Page not found")).to_have_count(0)
    icon = page.locator("link[rel~='icon']").first
    assert (icon.get_attribute("href") or "").startswith(("/", "./", app_url, "data:"))
    page.goto(app_url + "/run")
    uploader = page.get_by_test_id("stFileUploader").first
    expect(uploader).to_be_visible(timeout=TIMEOUT_MS)
    label = uploader.get_by_role("button").locator("p").first
    shown = label.evaluate("p => getComputedStyle(p, '::after').content")
    assert shown == '"ファイルを選ぶ"'  # the button reads in Japanese (a style sheet's text)
    expect(uploader.get_by_text("Upload", exact=True)).to_be_hidden()
    expect(page.get_by_text(re.compile(r"MB per file"))).to_be_hidden()
    expect(
        page.get_by_text(re.compile(r"XLSX ファイル、1 ファイル [\d,]+ MB まで"))
    ).to_be_visible()
    expect(page.get_by_text("Deploy", exact=True)).to_have_count(0)
    assert outside.blocked == []
