"""Property: what the app's pages render in a browser is Japanese, in every state of a file field.

Streamlit writes some texts itself, in English, and lets no app set them (streamlit 1.67): the
file field says "Drag and drop a file here" while a file is dragged over it and, on a file it
refused, a tooltip "File must be 1.0MB or smaller." or "Only one file is allowed.". AppTest sees
none of these (they are the browser's), so the app runs in headless Chromium with a small upload
limit, and every page of the navigation is read as a person sees it (:mod:`tests.support.rendered`:
visible text, a style sheet's text, tooltips) at rest and, for each file field it shows, while a
file is dragged over it, with a file over the limit (the chip's tooltip shown), and with two files
dropped on a field that takes one. No text may hold a library's English.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from keiri_agent.ui.unknown_address import NOT_FOUND_TITLE
from keiri_agent.ui.views import PAGES
from tests.support.english import cli_words, english_of
from tests.support.rendered import rendered_texts
from tests.ui.test_app_browser import TIMEOUT_MS, running_app
from tests.ui.test_app_browser import page as page  # a fixture, used by name

pytestmark = pytest.mark.timeout(900)
LIMIT_MB = 1  # Streamlit's upload limit for this app: a file over it is quick to make
RUN_TIMEOUT_MS = 240_000  # a page's first run imports the plan engine or the agents
# Addresses no page has: the first page by its name, a typo, a Japanese word, a file's name.
UNKNOWN_ADDRESSES = ("home", "desing", "実行", "売上.csv")

# Wait until a tooltip has faded in (it is drawn at opacity 0 first, and read then it says nothing).
FADED_IN = """(tip) => new Promise((done) => {
  const check = () => (getComputedStyle(tip).opacity === "1" ? done() : requestAnimationFrame(check));
  check();
})"""
_FILES = """(names) => {
  const files = new DataTransfer();
  for (const name of names) files.items.add(new File(["売上日,金額\\n"], name, {type: "text/csv"}));
  return files;
}"""


@pytest.fixture
def small_limit_url(tmp_path: Path) -> Iterator[str]:
    with running_app(tmp_path, {"STREAMLIT_SERVER_MAX_UPLOAD_SIZE": str(LIMIT_MB)}) as url:
        yield url


def _settled(page: Page) -> None:
    state = page.get_by_test_id("stApp")
    expect(state).to_have_attribute("data-test-script-state", "notRunning", timeout=RUN_TIMEOUT_MS)


def _english(page: Page) -> list[str]:
    return [
        found for text in rendered_texts(page) for found in english_of(text, allowed=cli_words())
    ]


def _refused_tooltip(page: Page, field: Locator) -> None:
    """Point at the field's refused file, so that its tooltip shows."""
    field.get_by_test_id("stFileChip").first.hover()
    tooltip = page.get_by_test_id("stTooltipErrorContent")
    expect(tooltip).to_be_visible(timeout=TIMEOUT_MS)
    tooltip.evaluate(FADED_IN, timeout=TIMEOUT_MS)


def _clear(page: Page, field: Locator) -> None:
    chips = field.get_by_test_id("stFileChipDeleteBtn")
    while chips.count():
        chips.first.locator("button").click()
        _settled(page)
    page.mouse.move(0, 0)


def _field_states(page: Page, field: Locator, big: Path) -> Iterator[str]:
    """Put ``field`` in each of its states, one at a time; yields the state's name."""
    dropzone = field.get_by_test_id("stFileUploaderDropzone")
    dropzone.dispatch_event("dragenter", {"dataTransfer": page.evaluate_handle(_FILES, ["a.csv"])})
    yield "a file dragged over it"
    dropzone.dispatch_event("dragleave")
    field.locator("input[type=file]").set_input_files(big)
    _refused_tooltip(page, field)
    yield "a file over the limit"
    _clear(page, field)
    if field.locator("input[type=file]").get_attribute("multiple") is None:
        two = page.evaluate_handle(_FILES, ["1月.csv", "2月.csv"])
        dropzone.dispatch_event("drop", {"dataTransfer": two})
        _refused_tooltip(page, field)
        yield "two files on a field for one"
        _clear(page, field)


def test_every_page_and_file_field_renders_no_english(
    small_limit_url: str, page: Page, tmp_path: Path
) -> None:
    big = tmp_path / "大きい売上.csv"
    big.write_bytes(b"x" * (LIMIT_MB * 1024 * 1024 + 1))
    leaks: dict[str, list[str]] = {}
    states = 0
    context = page.context
    shown = [("" if index == 0 else spec.url_path, spec.title) for index, spec in enumerate(PAGES)]
    for path, title in [*shown, *((path, NOT_FOUND_TITLE) for path in UNKNOWN_ADDRESSES)]:
        page.close()  # each address in a tab of its own, as a person opens a bookmark
        page = context.new_page()
        page.goto(f"{small_limit_url}/{path}")
        heading = page.get_by_test_id("stMain").get_by_role("heading")
        if title == NOT_FOUND_TITLE:
            heading = heading.filter(has_text=NOT_FOUND_TITLE)
        expect(heading.first).to_be_visible(timeout=RUN_TIMEOUT_MS)
        _settled(page)
        found = {f"{title} /{path}: at rest": _english(page)}
        fields = page.get_by_test_id("stFileUploader")
        for number in range(fields.count()):
            for state in _field_states(page, fields.nth(number), big):
                found[f"{title}: field {number + 1}, {state}"] = _english(page)
        states += len(found)
        leaks |= {where: words for where, words in found.items() if words}
    assert leaks == {}, f"{len(leaks)} of {states} page states"
    # 設計, データ分析 and 変換 show a file field at rest
    assert states >= len(PAGES) + len(UNKNOWN_ADDRESSES) + 3 * 3


def test_a_refused_file_says_the_limit_in_japanese(small_limit_url: str, page: Page) -> None:
    page.goto(f"{small_limit_url}/analysis")
    field = page.get_by_test_id("stFileUploader").first
    expect(field).to_be_visible(timeout=RUN_TIMEOUT_MS)
    _settled(page)
    field.locator("input[type=file]").set_input_files(
        files=[{"name": "大きい.csv", "mimeType": "text/csv", "buffer": b"x" * (2 * 1024 * 1024)}]
    )
    _refused_tooltip(page, field)
    said = " ".join(rendered_texts(page))
    assert f"このファイルは受け取れませんでした（1 ファイル {LIMIT_MB} MB まで" in said
    dropzone = field.get_by_test_id("stFileUploaderDropzone")
    dropzone.dispatch_event("dragenter", {"dataTransfer": page.evaluate_handle(_FILES, ["a.csv"])})
    expect(dropzone).to_contain_text("Drag and drop")  # the English is there, drawn over
    assert "ここにファイルを放してください" in rendered_texts(page)
