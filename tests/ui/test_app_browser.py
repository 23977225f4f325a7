"""The app in real headless Chromium: ``streamlit run app.py`` at the repository root, as README
command 1 starts it, with no API key.

The 実行 page runs the bundled invoice_reconciliation example: the plan is chosen from the
list, the two files of its ``ui.interactive_input`` are uploaded through the browser's file
inputs, 実行 is pressed, and the reconciliation table appears with its rows.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from playwright.sync_api import Page, WebSocket, expect, sync_playwright
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.support.browser import chromium_args
from tests.support.processes import free_port, stop_process_group

# A loaded machine may take STARTUP_TIMEOUT_S to start the app, then minutes to drive it.
pytestmark = pytest.mark.timeout(600)
REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "examples" / "data" / "invoice_reconciliation"
STARTUP_TIMEOUT_S = 180  # streamlit imports slowly on a loaded machine
TIMEOUT_MS = 60_000  # generous: Streamlit reruns are slow on a loaded CI machine
SETTLE_TIMEOUT_MS = 240_000  # a page's first run imports the plan engine or the agents
POLL_MS = 100  # how often rerun() looks whether the app has said its run is over
PORT_TRIES = 3  # starts of the app, each on a port found free, before the test fails


def _healthy(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
    try:
        with opener.open(url + "/_stcore/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def settled(page: Page) -> None:
    """Wait until the app's script run is over (its elements are this run's, none stale).

    A rerun redraws the page: a dropdown opened while the app is still running closes under
    the click that meant to choose from it."""
    state = page.get_by_test_id("stApp")
    expect(state).to_have_attribute(
        "data-test-script-state", "notRunning", timeout=SETTLE_TIMEOUT_MS
    )


class _Runs:
    """The script runs a page's app has finished, as the app tells the page over its websocket
    (one ``ForwardMsg`` a frame; a run cut short for a newer one does not count)."""

    def __init__(self) -> None:
        self.finished = 0

    def socket(self, socket: WebSocket) -> None:
        socket.on("framereceived", self.frame)

    def frame(self, payload: str | bytes) -> None:
        if not isinstance(payload, bytes):
            return
        message = ForwardMsg.FromString(payload)
        if message.WhichOneof("type") == "script_finished":
            self.finished += message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN


_RUNS: weakref.WeakKeyDictionary[Page, _Runs] = weakref.WeakKeyDictionary()


def watched(page: Page) -> Page:
    """``page``, counting its app's finished runs for :func:`rerun` (call it before the page
    opens the app)."""
    runs = _RUNS[page] = _Runs()
    page.on("websocket", runs.socket)
    return page


def rerun(page: Page, action: Callable[[], object]) -> None:
    """Do ``action`` (a click, an Enter in a field, an upload: something the app reruns for) and
    wait until that rerun is over.

    :func:`settled` alone cannot tell: right after the action the page still says notRunning
    until the server's word that the rerun started comes back, and a click sent then lands on
    elements the rerun redraws. The app's own message that the run finished can."""
    settled(page)  # no earlier run is left to finish in place of this one
    runs = _RUNS[page]
    before = runs.finished
    action()
    deadline = time.monotonic() + SETTLE_TIMEOUT_MS / 1000
    while runs.finished == before:
        if time.monotonic() > deadline:
            pytest.fail(f"the app's rerun did not finish within {SETTLE_TIMEOUT_MS // 1000} s")
        page.wait_for_timeout(POLL_MS)  # lets Playwright deliver the page's websocket frames
    settled(page)


@contextlib.contextmanager
def running_app(tmp_path: Path, settings: Mapping[str, str] | None = None) -> Iterator[str]:
    """``streamlit run app.py`` in the repository root on a free port, with the environment
    as it is now (a test's scripted LLM server included) and ``settings`` over it, stopped
    afterwards."""
    with app_process(tmp_path, settings) as (url, _):
        yield url


@contextlib.contextmanager
def app_process(
    tmp_path: Path, settings: Mapping[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """:func:`running_app`, with the server's process (a test may stop it first).

    The port was free when chosen; another process may take it before streamlit binds it
    (streamlit then says "Port … is not available" and exits): the app starts again on another."""
    env = {
        **os.environ,  # the root conftest removed every KEIRI_/provider variable: no API key
        "KEIRI_RUNS_DIR": str(tmp_path / "runs"),
        "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace"),
        "KEIRI_DESIGNS_DIR": str(tmp_path / "designs"),
        **(settings or {}),
    }
    log = (tmp_path / "streamlit.log").open("w+b")
    try:
        for attempt in range(1, PORT_TRIES + 1):
            port = free_port()
            command = [sys.executable, "-m", "streamlit", "run", "app.py"]
            command += ["--server.headless", "true", "--server.port", str(port)]
            command += ["--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
            log.seek(0)
            log.truncate()
            proc = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: the server and its children stop together
            )
            url = f"http://127.0.0.1:{port}"
            if _started(proc, url):
                break
            stop_process_group(proc)
            log.seek(0)
            said = log.read().decode("utf-8", "replace")
            if "is not available" not in said or attempt == PORT_TRIES:
                pytest.fail("streamlit did not start:\n" + said)
        try:
            yield url, proc
        finally:
            stop_process_group(proc)
    finally:
        log.close()


def _started(proc: subprocess.Popen[bytes], url: str) -> bool:
    """Whether the app answers at ``url`` before its process ends (STARTUP_TIMEOUT_S at most)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.2)  # polling the health check: a condition, not a fixed wait
    return True


@pytest.fixture
def app_url(tmp_path: Path) -> Iterator[str]:
    """The app with no API key (see :func:`running_app`)."""
    with running_app(tmp_path) as url:
        yield url


@pytest.fixture
def page(chromium: Path) -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=chromium_args()
        )
        context = browser.new_context(locale="ja-JP", viewport={"width": 1400, "height": 1600})
        context.set_default_timeout(TIMEOUT_MS)
        yield watched(context.new_page())
        browser.close()


def _upload(page: Page, label: str, file: Path) -> None:
    """Upload ``file`` and wait until the server saved it: the field names the file it uses
    (アップロードしたファイル: 請求書.zip). Waiting only for the name in the browser let the next
    upload land during the rerun that saves this one, and Streamlit then dropped it; the next
    upload or click now waits for that rerun to end."""
    uploader = page.get_by_test_id("stFileUploader").filter(has_text=label)
    rerun(page, lambda: uploader.locator("input[type=file]").set_input_files(file))
    expect(uploader.get_by_text(file.name)).to_be_visible(timeout=TIMEOUT_MS)
    used = page.get_by_text(f"アップロードしたファイル: {file.name}", exact=True)
    expect(used).to_be_visible(timeout=TIMEOUT_MS)


def test_the_run_page_reconciles_the_example_invoices(app_url: str, page: Page) -> None:
    page.goto(app_url + "/")
    page.get_by_test_id("stSidebarNav").get_by_text("実行", exact=True).click()
    expect(page.get_by_role("heading", name="実行", exact=True)).to_be_visible(timeout=TIMEOUT_MS)

    settled(page)  # the page's first run would close the dropdown under the click
    page.get_by_test_id("stSelectbox").filter(has_text="Plan").click()
    option = page.get_by_role("option", name="サンプル: 請求書と入金明細の照合", exact=True)
    rerun(page, option.click)
    message = page.get_by_text("照合する請求書と入金明細を指定してください")
    expect(message).to_be_visible(timeout=TIMEOUT_MS)
    _upload(page, "請求書 ZIP", DATA / "請求書.zip")
    _upload(page, "入金明細（Excel）", DATA / "入金明細.xlsx")
    # The uploads were saved on the server; the path boxes stay for typing a path instead.
    paths = page.get_by_test_id("stTextInput").filter(has_text="またはサーバー上のパス")
    expect(paths.nth(0).locator("input")).to_have_value("")

    rerun(page, page.get_by_role("button", name="実行", exact=True).click)

    expect(page.get_by_text("成功しました")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_role("tab", selected=True)).to_have_text("照合結果（3 行）")
    table = page.get_by_role("tabpanel").get_by_test_id("stDataFrame")
    expect(table).to_be_visible()
    # Chromium draws the grid on a canvas; its accessible cells carry the same rows.
    cells = table.get_by_role("gridcell", include_hidden=True)
    expect(cells.filter(has_text="北斗運輸").first).to_be_attached()
    expect(cells.filter(has_text="許容範囲内").first).to_be_attached()
    page.get_by_role("tab", name="差異（2 行）").click()
    differences = (
        page.get_by_role("tabpanel")
        .get_by_test_id("stDataFrame")
        .get_by_role("gridcell", include_hidden=True)
    )
    expect(differences.filter(has_text="東西システム").first).to_be_attached()
    expect(page.get_by_role("button", name="照合結果.xlsx をダウンロード")).to_be_visible()


def test_a_file_var_of_the_run_page_takes_an_upload_until_reset(
    app_url: str, page: Page, tmp_path: Path
) -> None:
    from tests.ui.test_run_page_vars import PLAN, UPLOADED

    (tmp_path / "designs").mkdir()
    (tmp_path / "designs" / "ledger.yaml").write_text(PLAN, encoding="utf-8")
    ledger = tmp_path / "元帳.csv"
    ledger.write_bytes(UPLOADED)
    page.goto(app_url + "/run")
    expect(page.get_by_role("heading", name="実行", exact=True)).to_be_visible(timeout=TIMEOUT_MS)
    settled(page)
    page.get_by_test_id("stSelectbox").filter(has_text="Plan").click()
    rerun(page, page.get_by_role("option", name="ledger.yaml", exact=True).click)
    expect(page.get_by_text("サンプルデータ: 請求一覧.csv", exact=True)).to_be_visible()

    _upload(page, "元帳の読み込み", ledger)
    rerun(page, page.get_by_role("button", name="実行", exact=True).click)

    expect(page.get_by_text("成功しました")).to_be_visible(timeout=TIMEOUT_MS)
    cells = page.get_by_test_id("stDataFrame").get_by_role("gridcell", include_hidden=True)
    expect(cells.filter(has_text="売掛金").first).to_be_attached()

    rerun(page, page.get_by_role("button", name="リセット", exact=True).click)
    expect(page.get_by_text("サンプルデータ: 請求一覧.csv", exact=True)).to_be_visible()
    expect(page.get_by_text("アップロードしたファイル: 元帳.csv", exact=True)).to_have_count(0)
    # the next run reads the sample again: the browser no longer holds (and resends) the upload
    rerun(page, page.get_by_role("button", name="実行", exact=True).click)
    expect(page.get_by_text("成功しました")).to_be_visible(timeout=TIMEOUT_MS)
    cells = page.get_by_test_id("stDataFrame").get_by_role("gridcell", include_hidden=True)
    expect(cells.filter(has_text="売掛金")).to_have_count(0)
    expect(cells.filter(has_text="INV-2025-0101").first).to_be_attached()
