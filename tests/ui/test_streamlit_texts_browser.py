"""What a file field renders in a browser when it refuses a file: Japanese, not Streamlit's English.

Streamlit writes some texts itself, in English, and lets no app set them (streamlit 1.67): the
file field says "Drag and drop a file here" while a file is dragged over it and, on a file it
refused, a tooltip "File must be 1.0MB or smaller.". AppTest sees none of these (they are the
browser's), so the app runs in headless Chromium with a small upload limit and the field is read
as a person sees it (:mod:`tests.support.rendered`: visible text, a style sheet's text, tooltips).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.rendered import rendered_texts
from tests.ui.test_app_browser import TIMEOUT_MS, running_app, settled
from tests.ui.test_app_browser import page as page  # a fixture, used by name

pytestmark = pytest.mark.timeout(900)
LIMIT_MB = 1  # Streamlit's upload limit for this app: a file over it is quick to make
RUN_TIMEOUT_MS = 240_000  # a page's first run imports the plan engine or the agents

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


def _refused_tooltip(page: Page, field: Locator) -> None:
    """Point at the field's refused file, so that its tooltip shows."""
    field.get_by_test_id("stFileChip").first.hover()
    tooltip = page.get_by_test_id("stTooltipErrorContent")
    expect(tooltip).to_be_visible(timeout=TIMEOUT_MS)
    tooltip.evaluate(FADED_IN, timeout=TIMEOUT_MS)


def test_a_refused_file_says_the_limit_in_japanese(small_limit_url: str, page: Page) -> None:
    page.goto(f"{small_limit_url}/analysis")
    field = page.get_by_test_id("stFileUploader").first
    expect(field).to_be_visible(timeout=RUN_TIMEOUT_MS)
    settled(page)
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
