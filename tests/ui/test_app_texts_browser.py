"""What the app's texts render to in real headless Chromium (``streamlit run app.py`` with no
API key, the fixtures of ``test_app_browser``): a link in a Markdown notice ends where its URL
ends. AppTest only sees the Markdown source; Streamlit's renderer (GFM autolinks) decides where
a bare URL stops, and it does not stop at Japanese punctuation."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.ui.test_app_browser import TIMEOUT_MS
from tests.ui.test_app_browser import app_url as app_url  # fixtures, used by name
from tests.ui.test_app_browser import page as page

# Startup alone may take STARTUP_TIMEOUT_S on a loaded machine, then the page's first run.
pytestmark = pytest.mark.timeout(600)
# A page's first run imports the plan engine or the agents: minutes on a loaded machine.
FIRST_RUN_TIMEOUT_MS = 240_000


def _open(page: Page, app_url: str, title: str) -> None:
    page.goto(app_url + "/")
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    heading = page.get_by_role("heading", name=title, exact=True)
    expect(heading).to_be_visible(timeout=FIRST_RUN_TIMEOUT_MS)


def test_the_link_in_the_llm_notice_is_exactly_the_url(app_url: str, page: Page) -> None:
    _open(page, app_url, "ヘルプデスク")
    notice = (
        page.get_by_test_id("stMain").get_by_test_id("stAlert").filter(has_text="OPENAI_BASE_URL")
    )
    expect(notice).to_be_visible(timeout=TIMEOUT_MS)

    link = notice.get_by_role("link", name="http://localhost:11434/v1")
    expect(link).to_have_attribute("href", "http://localhost:11434/v1", timeout=TIMEOUT_MS)
    expect(link).to_have_text("http://localhost:11434/v1", timeout=TIMEOUT_MS)
    expect(notice).to_contain_text("v1）と KEIRI_LLM_MODEL", timeout=TIMEOUT_MS)
