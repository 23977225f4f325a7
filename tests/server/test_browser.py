"""The progress page in real headless Chromium (Debian's chromium driven by Playwright).

A conversion request goes through the page against the scripted LLM server: the 5-step
progress bar reaches its last step, the live log console is gone, and the final answer and
its download link appear; a failing request shows the red banner instead, an analysis whose
report no computed output backs the amber warning band; an analysis whose first code run fails
says why in Japanese in the log (Python's text folded behind 詳細) and goes on without the red
banner. A CSV uploaded from
the page is converted; a plan that pauses for input continues from the answers form; a path
outside the workspace is refused with the allowed folder named, without internal step names
or literal backticks. A page of another site cannot start tasks on a server without keys.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from playwright.sync_api import Browser, Page, expect

from keiri_agent.agents.analysis.honesty import UNVERIFIED_HINT, UNVERIFIED_MESSAGE
from keiri_agent.config import Settings
from keiri_agent.examples import example_answers, example_plan
from keiri_agent.file_access import ALLOWED_PLACES
from tests.server.conftest import LiveServer, make_settings, with_shared_data
from tests.support import ScriptedLLMServer

# Chromium and the server start slowly on a loaded machine; each test drives a whole task.
pytestmark = pytest.mark.timeout(600)
TIMEOUT_MS = 60_000
# Analysis code that fails with Python's KeyError (a column the data does not have).
FAILING_CODE = {"code": "print(df['存在しない列'].sum())\n", "expected_outputs": []}


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(locale="ja-JP")
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def live(
    serve: Callable[..., LiveServer], tmp_path: Path, llm_server: ScriptedLLMServer
) -> LiveServer:
    settings = with_shared_data(tmp_path, {})  # after llm_server: the settings point at it
    frame = pd.DataFrame({"月": ["2024-04", "2024-05"], "売上": [120000, 80000]})
    frame.to_csv(tmp_path / "shared" / "売上.csv", index=False, encoding="cp932")
    return serve(settings)


@pytest.fixture
def analysis_live(serve: Callable[..., LiveServer], analysis_settings: Settings) -> LiveServer:
    """A server whose analysis tasks run code in the sandbox on the shared ``sales.csv``."""
    return serve(analysis_settings)


def _tokyo(stamp: str) -> str:
    """A stored UTC time as the page should show it with the default KEIRI_TIMEZONE."""
    return (
        f"{datetime.fromisoformat(stamp).astimezone(ZoneInfo('Asia/Tokyo')):%Y-%m-%d %H:%M:%S} JST"
    )


def _submit(page: Page, live: LiveServer, request: str, source: str) -> None:
    page.goto(live.url + "/")
    page.locator("#kind").select_option("convert")
    page.locator("#request").fill(request)
    page.locator("#source").fill(source)
    page.locator("#submit").click()


def _ask_analysis(page: Page, live: LiveServer, data_file: str) -> None:
    page.goto(live.url + "/")
    page.locator("#kind").select_option("analysis")
    page.locator("#request").fill("売上の合計は？")
    page.locator("#files").fill(data_file)
    page.locator("#submit").click()


def test_the_progress_bar_reaches_the_last_step_and_the_answer_appears(
    page: Page, live: LiveServer, llm_server: ScriptedLLMServer
) -> None:
    job = {
        "action": "convert",
        "source": "売上.csv",
        "target_format": "json",
        "output_name": "売上",
        "summary_ja": "売上.csv を JSON に変換します。",
    }
    llm_server.add_chat(json=job, delay=0.5)  # the page sees the task running first
    _submit(page, live, "売上.csv を JSON に変換してください", "売上.csv")

    expect(page.locator("#log")).to_be_visible(timeout=TIMEOUT_MS)  # the console while waiting
    expect(page.locator("#steps li.active")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(page.locator("#progress")).to_have_js_property("value", 100, timeout=TIMEOUT_MS)
    expect(page.locator('#steps li[data-step="done"]')).to_have_class("done")
    expect(page.locator("#steps li.done")).to_have_count(5)
    expect(page.locator("#progress-label")).to_have_text("100%")
    answer = page.locator("#answer")
    expect(answer).to_be_visible(timeout=TIMEOUT_MS)
    expect(answer).not_to_be_empty()
    expect(page.locator("#log")).to_be_hidden()  # the final answer comes without the logs
    expect(page.locator("#error-banner")).to_be_hidden()
    link = page.locator("#files-list a")
    expect(link).to_have_count(1, timeout=TIMEOUT_MS)
    expect(link).to_contain_text("売上.json")

    (task,) = live.registry.list()
    assert task.status == "success"
    assert answer.inner_text().strip() == task.answer.strip()
    # The task's times as people read them: Tokyo time (the default zone), labelled.
    assert task.finished_at is not None
    received, ended = (_tokyo(stamp) for stamp in (task.created_at, task.finished_at))
    expect(page.locator("#task-times")).to_have_text(f"受付 {received}・終了 {ended}")
    log_text = page.locator("#log").text_content() or ""
    assert "解釈" in log_text  # the console did show the run's log lines
    assert log_text.strip() not in answer.inner_text()
    download = page.request.get(live.url + (link.get_attribute("href") or ""))
    assert download.ok
    assert "2024-04" in download.text()


def test_an_error_shows_the_red_banner(
    page: Page, live: LiveServer, llm_server: ScriptedLLMServer
) -> None:
    # The source is named in the request only: the pipeline finds it missing (a named source
    # that is nowhere the task may read is refused before a task starts).
    job = {"action": "convert", "source": "無い.csv", "target_format": "json"}
    llm_server.add_chat(json=job)
    _submit(page, live, "無い.csv を JSON に変換して", "")

    banner = page.locator("#error-banner")
    expect(banner).to_be_visible(timeout=TIMEOUT_MS)
    expect(banner).to_contain_text("エラー")
    color = banner.evaluate("el => getComputedStyle(el).backgroundColor")
    assert color == "rgb(198, 40, 40)"  # red
    expect(page.locator("#steps li.failed")).to_have_count(1)
    expect(page.locator("#answer-section")).to_be_hidden()
    expect(page.locator("#submit")).to_be_enabled(timeout=TIMEOUT_MS)
    (task,) = live.registry.list()
    assert task.status == "failed"


def test_an_unverified_analysis_shows_the_warning_band_not_success(
    page: Page, live: LiveServer, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "集計済み"})  # no code run
    report = {
        "title": "売上",
        "conclusion": "売上の合計は 999,999 円でした。",
        "evidence": ["推測"],
    }
    llm_server.add_chat(json={**report, "sections": [], "suggestions": []})
    _ask_analysis(page, live, "売上.csv")

    band = page.locator("#warning-banner")
    expect(band).to_be_visible(timeout=TIMEOUT_MS)
    expect(band).to_contain_text(UNVERIFIED_MESSAGE)
    expect(band).to_contain_text(f"ヒント: {UNVERIFIED_HINT}")
    color = band.evaluate("el => getComputedStyle(el).backgroundColor")
    assert color == "rgb(255, 248, 225)"  # amber, not the red error banner
    expect(page.locator("#error-banner")).to_be_hidden()
    last = page.locator('#steps li[data-step="done"]')
    expect(last).to_have_class("unverified")  # not the success look
    expect(last).to_have_text("未検証")
    expect(page.locator("#steps li.done")).to_have_count(4)
    expect(page.locator("#answer")).to_contain_text("売上の合計は 999,999 円でした。")
    (task,) = live.registry.list()
    assert task.status == "unverified"


def test_a_failed_code_run_is_said_in_japanese_with_pythons_text_folded(
    page: Page, analysis_live: LiveServer, llm_server: ScriptedLLMServer
) -> None:
    act = {"next_action": "act", "instruction": "売上を合計する", "rationale": "集計が必要"}
    llm_server.add_chat(json=act)
    llm_server.add_chat(json=FAILING_CODE)
    llm_server.add_chat(json=act)
    llm_server.add_chat(json={"code": "print(df['売上'].sum())\n", "expected_outputs": []})
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "要求を満たした"})
    report = {"title": "売上の合計", "conclusion": "売上の合計は 300 円でした。"}
    llm_server.add_chat(
        json={**report, "evidence": ["合計 300"], "sections": [], "suggestions": []}
    )
    live = analysis_live
    _ask_analysis(page, live, "sales.csv")

    expect(page.locator("#answer")).to_contain_text(
        "売上の合計は 300 円でした。", timeout=TIMEOUT_MS
    )
    # The run went on after the failed step: no red banner, the success look.
    expect(page.locator("#error-banner")).to_be_hidden()
    expect(page.locator("#steps li.done")).to_have_count(5)
    log = page.locator("#log")
    fold = log.locator("details")
    expect(fold).to_have_count(1)  # only the failed run has Python's text to fold
    expect(fold.locator("summary")).to_have_text("詳細（プログラムの出力）")
    folded = fold.text_content() or ""
    assert "KeyError" in folded  # Python's own words are kept for whoever opens them
    shown = log.evaluate(
        "el => [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE)"
        ".map((n) => n.textContent).join('')"
    )
    (failed,) = [line for line in shown.splitlines() if line.startswith("コード実行: 失敗")]
    # The kind in Japanese and the column the code looked for (sandbox.failure_words; the
    # class name only in brackets at the end), never Python's English or its traceback.
    assert failed.startswith("コード実行: 失敗（表や辞書にない列名・キーを使っています"), failed
    assert "「存在しない列」" in failed
    assert "Traceback" not in shown
    assert not [line for line in shown.splitlines() if line.startswith(("KeyError", "エラー"))]
    assert "コード実行: 成功" in shown
    (task,) = live.registry.list()
    assert task.status == "success"


def test_a_task_failing_after_a_failed_code_run_shows_its_own_error(
    page: Page, analysis_live: LiveServer, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"next_action": "act", "instruction": "合計", "rationale": "集計"})
    llm_server.add_chat(json=FAILING_CODE)
    llm_server.add_error(400, "scripted refusal")  # then the model's service refuses
    live = analysis_live
    _ask_analysis(page, live, "sales.csv")

    expect(page.locator("#submit")).to_be_enabled(timeout=TIMEOUT_MS)  # the done event came
    (task,) = live.registry.list()
    assert live.wait_finished(task.id) == "failed"
    assert task.error is not None
    banner = page.locator("#error-banner")
    # The task's own Japanese error, not the code step's KeyError the agent would have retried.
    expect(banner).to_contain_text(task.error["message"], timeout=TIMEOUT_MS)
    assert "KeyError" not in (banner.text_content() or "")


def test_an_uploaded_csv_is_converted(
    page: Page, live: LiveServer, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    upload = tmp_path / "手元の売上.csv"
    upload.write_text("月,売上\n2024-06,150000\n", encoding="utf-8")
    job = {"action": "convert", "source": "手元の売上.csv", "target_format": "json"}
    llm_server.add_chat(json=job)
    page.goto(live.url + "/")
    page.locator("#kind").select_option("convert")
    page.locator("#request").fill("このファイルを JSON に変換してください")
    page.locator("#upload").set_input_files(str(upload))
    page.locator("#submit").click()

    link = page.locator("#files-list a")
    expect(link).to_have_count(1, timeout=TIMEOUT_MS)
    expect(link).to_contain_text(".json")
    expect(page.locator("#error-banner")).to_be_hidden(timeout=TIMEOUT_MS)
    (task,) = live.registry.list()
    assert task.status == "success"
    assert task.request["uploads"] == ["手元の売上.csv"]
    # not kept once the task has ended: removed as the task leaves, just after the page got
    # its end (the status is saved, then the uploads go)
    uploads, gone_by = task.directory / "uploads", time.monotonic() + TIMEOUT_MS / 1000
    while uploads.exists():
        assert time.monotonic() < gone_by, "the uploads were kept after the task ended"
        time.sleep(0.05)
    download = page.request.get(live.url + (link.get_attribute("href") or ""))
    assert "2024-06" in download.text()


def test_a_paused_plan_continues_from_the_answers_form(
    page: Page, serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    # A plan of the user's own whose input node asks what the run computes pauses there
    # (inputs known before the run are a form on the page at once).
    designs = tmp_path / "designs"
    designs.mkdir()
    text = example_plan("duplicate_invoice_check").read_text(encoding="utf-8")
    asked = "類似度 ${vars.similarity_threshold} 以上で重複をチェックする請求書一覧"
    text = text.replace("重複をチェックする請求書一覧", asked, 1)
    (designs / "dup_check.yaml").write_text(text, encoding="utf-8")
    live = serve(make_settings(tmp_path, keiri_designs_dir=designs))
    invoices = Path(example_answers("duplicate_invoice_check")["collect_inputs"]["invoice_list"])
    page.goto(live.url + "/")
    page.locator("#kind").select_option("plan")
    expect(page.locator('#steps li[data-step="interpret"]')).to_have_text("検証")
    expect(page.locator("#plan option")).not_to_have_count(0)
    page.locator("#plan").select_option("dup_check")
    expect(page.locator("#plan-inputs")).to_be_hidden()  # nothing to ask before the run
    page.locator("#submit").click()

    form = page.locator("#answers-section")
    expect(form).to_be_visible(timeout=TIMEOUT_MS)
    expect(form).to_contain_text("請求書一覧（Excel）（必須）")
    file_field = page.locator('#answers-fields input[data-field="invoice_list"]')
    expect(file_field).to_have_attribute("type", "file")
    expect(page.locator('#answers-fields input[data-field="sheet"]')).to_have_value("請求書一覧")
    file_field.set_input_files(str(invoices))
    page.locator("#answers-submit").click()

    report = page.frame_locator("iframe.report")
    expect(report.get_by_text("重複の疑いがある請求書は 4 件")).to_be_visible(timeout=TIMEOUT_MS)
    expect(form).to_be_hidden(timeout=TIMEOUT_MS)
    expect(page.locator("#steps li.done")).to_have_count(5, timeout=TIMEOUT_MS)
    statuses = [str(task.status) for task in live.registry.list()]
    assert statuses == ["success"]  # the paused task itself went on


def test_an_outside_path_names_the_allowed_folders_not_the_servers(
    page: Page, live: LiveServer, llm_server: ScriptedLLMServer
) -> None:
    _submit(page, live, "変換して", "/etc/hostname")
    banner = page.locator("#error-banner")
    expect(banner).to_be_visible(timeout=TIMEOUT_MS)
    expect(banner).to_contain_text(f"{ALLOWED_PLACES}の外", timeout=TIMEOUT_MS)
    expect(banner).to_contain_text("アップロード")
    text = banner.text_content() or ""
    assert "`" not in text
    assert str(live.settings.keiri_workspace_root.absolute()) not in text


def test_errors_show_japanese_stage_names_and_code_spans(
    page: Page, serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    # Nothing listens on port 9: the interpretation fails with a hint naming a command.
    settings = with_shared_data(
        tmp_path,
        {"売上.csv": "月,売上\n2024-04,120000\n"},
        openai_base_url="http://127.0.0.1:9/v1",
        keiri_llm_max_retries=0,
    )
    live = serve(settings)
    _submit(page, live, "売上.csv を JSON に変換して", "売上.csv")
    banner = page.locator("#error-banner")
    expect(banner).to_be_visible(timeout=TIMEOUT_MS)
    expect(banner).to_contain_text("エラー（解釈）", timeout=TIMEOUT_MS)
    expect(banner.locator("code")).to_have_text(["keiri-agent doctor"], timeout=TIMEOUT_MS)
    text = banner.text_content() or ""
    assert "（interpret）" not in text
    assert "`" not in text


def test_a_page_of_another_site_cannot_start_tasks(page: Page, live: LiveServer) -> None:
    # Without keys, a page the user opens elsewhere sends "simple" POSTs (no CORS preflight):
    # text/plain, multipart and urlencoded. The server must refuse them all.
    body = json.dumps({"kind": "plan", "plan": "duplicate_invoice_check"})
    attack = f"""<!doctype html><title>ready</title><script>
      const target = {json.dumps(live.url + "/agent/run")}, body = {json.dumps(body)};
      const form = new FormData();
      form.append("request", body);
      form.append("files", new Blob(["a\\n1\\n"]), "a.csv");
      const sends = [
        {{headers: {{"Content-Type": "text/plain"}}, body}},
        {{body: form}},
        {{body: new URLSearchParams({{request: body}})}},
      ].map((init) => fetch(target, {{method: "POST", mode: "no-cors", ...init}}));
      Promise.allSettled(sends).then(() => {{ document.title = "sent"; }});
    </script>"""
    with _page_server(attack) as other_site:  # http://localhost:<port>: another origin
        page.goto(other_site)
        expect(page).to_have_title("sent", timeout=TIMEOUT_MS)
    metrics = page.request.get(live.url + "/metrics").text()
    assert 'keiri_http_requests_total{method="POST",status="403"} 3.0' in metrics
    assert live.registry.list() == []


@contextlib.contextmanager
def _page_server(html: str) -> Iterator[str]:
    """Serve ``html`` at http://localhost:<port>/ until the block ends."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            content = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
