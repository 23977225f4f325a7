"""Property: whatever file a person gives the app, what the page says is Japanese.

Every file field of the app (データ分析, 設計's documents, 変換, and the 実行 page's field of
the monthly sales sample, which is then run) gets the files an accounting team really has at
hand: a program (a wrong format), a PDF or a CSV under another format's name, empty files, a
CP932 export with a title row above the header, a header alone, binary junk, a file of several
MB. Streamlit refuses a format it was not told in English ("Invalid file extension", shown in
place of the page; in the browser "… files are not allowed."): what a page shows (errors,
warnings, notes, captions, text; never an exception) must hold no English of a library.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import openpyxl
import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.ui import APP_PATH
from tests.support.english import cli_words, english_of
from tests.ui.conftest import open_page, run_page

PAGE_TIMEOUT_S = 120
BIG_BYTES = 3 * 1024 * 1024  # a ledger of some MB (a browser sends no more than the limit)
SALES_SAMPLE = "サンプル: 月次売上レポート"
HEADER = "売上日,伝票番号,得意先,商品区分,商品名,数量,単価,金額\n"  # the sample's columns
ROW = '2024/04/01,S5001,あおば商事,サービス,保守サポート,3,150000,"450,000"\n'
TITLED = "売上明細表（2024年4月分）\n出力日: 2024/05/01\n\n" + HEADER + ROW


def _xlsx() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["月次売上明細"])  # a title row above the header, as exported
    sheet.append(HEADER.strip().split(","))
    sheet.append(["2024/04/01", "S5001", "あおば商事", "サービス", "保守", 3, 150000, 450000])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


FILES: dict[str, tuple[str, bytes, str]] = {
    "a program": ("集計ツール.exe", b"MZ\x90\x00\x03\x00\x00\x00", "application/octet-stream"),
    "a PDF named .csv": ("売上.csv", b"%PDF-1.4\n1 0 obj<<>>endobj\n", "text/csv"),
    "an empty CSV": ("空.csv", b"", "text/csv"),
    "an empty workbook file": ("空.xlsx", b"", "application/octet-stream"),
    "a CSV named .xlsx": ("売上.xlsx", (HEADER + ROW).encode("cp932"), "text/csv"),
    "CP932 with a title row": ("売上明細.csv", TITLED.encode("cp932"), "text/csv"),
    "a header alone": ("見出しだけ.csv", HEADER.encode("cp932"), "text/csv"),
    "binary junk": ("壊れた.csv", bytes(range(256)) * 16, "text/csv"),
    "several MB": (
        "大きい.csv",
        HEADER.encode("cp932") + ROW.encode("cp932") * (BIG_BYTES // len(ROW.encode("cp932"))),
        "text/csv",
    ),
    "a workbook": ("売上.xlsx", _xlsx(), "application/octet-stream"),
}


def _shown(app: AppTest) -> Iterator[str]:
    """What the page shows a person (the エラー詳細 JSON is for support, not read here)."""
    for kind in ("error", "warning", "info", "success", "caption", "markdown", "toast"):
        for element in getattr(app, kind):
            yield str(element.value)


def _leaks(app: AppTest) -> list[str]:
    if app.exception:
        return [f"exception: {e.message}" for e in app.exception]
    return [found for text in _shown(app) for found in english_of(text, allowed=cli_words())]


@pytest.mark.parametrize("page", ["analysis", "design", "convert"])
def test_a_file_given_to_a_page_is_answered_in_japanese(
    page: str, env: Path, public_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))
    leaks = {}
    for name, upload in FILES.items():
        app = AppTest.from_file(str(APP_PATH), default_timeout=PAGE_TIMEOUT_S)
        open_page(app, page).run()
        app.file_uploader[0].set_value(upload).run()
        if found := _leaks(app):
            leaks[name] = found
    assert leaks == {}, f"{len(leaks)} of {len(FILES)} files"


def test_a_file_given_to_a_plan_field_and_run_is_answered_in_japanese(env: Path) -> None:
    leaks = {}
    for name, upload in FILES.items():
        app = AppTest.from_function(run_page, default_timeout=PAGE_TIMEOUT_S)
        app.run()
        app.selectbox(key="run_plan").set_value(SALES_SAMPLE).run()
        app.file_uploader[0].set_value(upload).run()
        if not app.exception:  # an exception shown in place of the page: no button to press
            app.button(key="run_start").click().run()
        if found := _leaks(app):
            leaks[name] = found
    assert leaks == {}, f"{len(leaks)} of {len(FILES)} files"


def test_a_file_of_another_format_is_named_and_left_out(env: Path) -> None:
    app = AppTest.from_file(str(APP_PATH), default_timeout=PAGE_TIMEOUT_S)
    open_page(app, "analysis").run()
    app.file_uploader[0].set_value(FILES["a program"]).run()
    assert not app.exception
    errors = [str(e.value) for e in app.error]
    assert any("「集計ツール.exe」はこの欄で使えない形式です" in e for e in errors), errors
    assert any("CSV・TSV・TXT・XLSX・XLSM・XLS ファイルを選んでください" in e for e in errors)
    assert not any(e.label.startswith("df") for e in app.expander)  # no table was made of it
