"""What the app says in a browser where Streamlit writes English itself: Japanese, read as a person
and a screen reader get it (real headless Chromium, ``streamlit run app.py``).

- An address no page has (``/home``, a typo, ``/実行``, a file's name) opens the app's Japanese
  page, not Streamlit's "Page not found" dialog (:mod:`keiri_agent.ui.unknown_address`).
- A table's toolbar says its buttons in Japanese when pointed at (the tooltips "Download as CSV",
  "Search", "Fullscreen" before) and to a screen reader (``aria-label``), and its list of
  columns too ("Select all" before).
- Every text a screen reader reads (``aria-label``, ``title``, ``placeholder`` and text clipped
  to a 1-pixel box such as "Skip to main content") is Japanese on each of those pages.
- When the app's server stops, the dialog the page shows says so in Japanese ("Connection
  error" before) and says how to start it again.

Each state is waited for by the exact element it needs (the heading, the tooltip faded in, the
dialog, the rewritten attribute) with generous timeouts: a page's first run imports the plan
engine on a loaded 2-core machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from keiri_agent.ui.chrome_words import RESTART, SAID
from keiri_agent.ui.unknown_address import NOT_FOUND_TITLE
from tests.support.english import cli_words, english_of
from tests.support.processes import stop_process_group
from tests.support.rendered import rendered_texts
from tests.ui.test_app_browser import TIMEOUT_MS, app_process, rerun, running_app, settled
from tests.ui.test_app_browser import page as page  # a fixture, used by name

pytestmark = pytest.mark.timeout(900)
RUN_TIMEOUT_MS = 240_000  # a page's first run imports the plan engine or the agents
DIALOG_TIMEOUT_MS = 180_000  # Streamlit pings a lost server a few times before it says so
# Addresses no page has: the first page by its name, a typo, a Japanese word, a file's name.
UNKNOWN_ADDRESSES = ("home", "desing", "実行", "売上.csv")
# English words that are the app's own names for things, not a library's.
OWN_WORDS = frozenset({"Plan", "Excel", "keiri"})

# What a screen reader reads besides the visible text: names and hints in attributes, and text
# kept on the page for it alone (clipped to a 1-pixel box, so rendered_texts leaves it out).
_SCREEN_READER = """() => {
  const said = [];
  for (const el of document.body.querySelectorAll("*")) {
    if (!el.checkVisibility({checkVisibilityCSS: true})) continue;
    if (el.closest('[aria-hidden="true"]')) continue;
    for (const name of ["aria-label", "title", "placeholder"]) {
      const value = el.getAttribute(name);
      if (value) said.push(value);
    }
    const box = el.getBoundingClientRect();
    if (box.width <= 1 && box.height <= 1 && !el.closest("script, style")) {
      for (const node of el.childNodes) {
        if (node.nodeType === Node.TEXT_NODE && node.textContent.trim()) {
          said.push(node.textContent.trim());
        }
      }
    }
  }
  return said;
}"""
_NAMES = re.compile(r"\S*[-_./=<>|@\\$\d\[\]{}:]\S*")  # paths, ids, settings: names, not English
# A label as Streamlit writes one ("Sidebar", "Open", "Search"); two words or more are English
# to english_of already, one lower-case word is a name (openai, doctor)
_WORD = re.compile(r"\b[A-Z][a-z]{2,}\b")
# Wait until a tooltip has faded in (it is drawn at opacity 0 first).
FADED_IN = """(tip) => new Promise((done) => {
  const check = () => (getComputedStyle(tip).opacity === "1" ? done() : requestAnimationFrame(check));
  check();
})"""


def _english(page: Page) -> list[str]:
    """Library English a person or a screen reader gets from ``page`` now."""
    found = []
    for text in [*rendered_texts(page), *page.evaluate(_SCREEN_READER)]:
        found += english_of(text, allowed=cli_words())
        found += [w for w in _WORD.findall(_NAMES.sub(" ", text)) if w not in OWN_WORDS]
    return found


def _said(page: Page) -> None:
    """Wait until the page's words script has run (it renames the sidebar for a screen reader)."""
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar).to_have_attribute("aria-label", SAID["Sidebar"], timeout=RUN_TIMEOUT_MS)


@pytest.fixture(scope="module")
def shared_app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One app for the tests that only read it (started once: minutes on a loaded machine)."""
    with running_app(tmp_path_factory.mktemp("app")) as url:
        yield url


def test_an_unknown_address_gets_a_japanese_page(shared_app_url: str, page: Page) -> None:
    context = page.context
    leaks = {}
    for path in UNKNOWN_ADDRESSES:
        page.close()  # each address in a tab of its own, as a person opens a bookmark
        page = context.new_page()
        page.goto(f"{shared_app_url}/{path}")
        main = page.get_by_test_id("stMain")
        heading = main.get_by_role("heading").filter(has_text=NOT_FOUND_TITLE)
        expect(heading).to_be_visible(timeout=RUN_TIMEOUT_MS)
        expect(main.get_by_text(f"「/{path}」というページはありません。")).to_be_visible()
        settled(page)
        _said(page)
        expect(page.get_by_text("Page not found")).to_have_count(0)
        expect(page.get_by_role("dialog")).to_have_count(0)
        if found := _english(page):
            leaks[path] = found
    assert leaks == {}


def test_a_table_toolbar_is_said_in_japanese(shared_app_url: str, page: Page) -> None:
    page.goto(shared_app_url + "/run")
    expect(page.get_by_role("heading", name="実行", exact=True)).to_be_visible(
        timeout=RUN_TIMEOUT_MS
    )
    plan_choice = page.get_by_test_id("stSelectbox").filter(has_text="Plan")
    expect(plan_choice).to_be_visible(timeout=RUN_TIMEOUT_MS)
    settled(page)
    plan_choice.click()
    rerun(
        page, page.get_by_role("option", name="サンプル: 請求書と入金明細の照合", exact=True).click
    )
    expect(page.get_by_role("button", name="サンプルデータを使う")).to_be_visible()
    rerun(page, page.get_by_role("button", name="サンプルデータを使う").click)
    expect(page.get_by_text("入力欄にサンプルデータが入っています", exact=False)).to_be_visible()
    rerun(page, page.get_by_role("button", name="実行", exact=True).click)
    expect(page.get_by_text("成功しました")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    _said(page)

    panel = page.get_by_role("tabpanel")
    table = panel.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible()
    table.hover()
    buttons = panel.get_by_test_id("stElementToolbarButton")
    expect(buttons.first).to_be_visible()
    tips = []
    for number in range(buttons.count()):
        table.hover()  # the toolbar shows while the pointer is on the table
        buttons.nth(number).hover()
        tip = page.get_by_test_id("stTooltipContent")
        expect(tip).to_be_visible(timeout=TIMEOUT_MS)
        tip.evaluate(FADED_IN, timeout=TIMEOUT_MS)
        tips.append(tip.inner_text().strip())
        table.hover()  # off the button: its tooltip goes
        expect(tip).to_have_count(0)
    assert {"CSV でダウンロード", "表の中を検索", "全画面で表示"} <= set(tips), tips
    names = [buttons.nth(n).locator("button").get_attribute("aria-label") for n in range(len(tips))]
    assert all(name and not _WORD.search(name) for name in names), names
    assert _english(page) == []

    table.hover()
    buttons.filter(has=page.get_by_role("button", name="列の表示・非表示")).click()
    expect(page.get_by_text(SAID["Select all"], exact=True)).to_be_visible()
    assert _english(page) == []


# Streamlit words its dialog by the address's host: "Is Streamlit still running? ... streamlit run
# yourscript.py" for localhost, "Streamlit server is not responding..." otherwise.
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_stopped_server_is_said_in_japanese(host: str, tmp_path: Path, page: Page) -> None:
    with app_process(tmp_path) as (url, process):
        page.goto(url.replace("127.0.0.1", host) + "/")
        expect(page.get_by_test_id("stMain").get_by_role("heading").first).to_be_visible(
            timeout=RUN_TIMEOUT_MS
        )
        settled(page)
        _said(page)
        stop_process_group(process)
        dialog = page.get_by_role("dialog")
        expect(dialog).to_be_visible(timeout=DIALOG_TIMEOUT_MS)
        expect(dialog.get_by_role("heading")).to_have_text(SAID["Connection error"])
        expect(dialog).to_contain_text(RESTART)
        expect(dialog.get_by_text("streamlit run", exact=False)).to_have_count(0)
        expect(dialog.get_by_role("button")).to_have_attribute("aria-label", SAID["Close"])
        assert _english(page) == []
