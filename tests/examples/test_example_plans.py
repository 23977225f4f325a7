"""The example business plans (designs/examples/) on the bundled sample data (examples/data/).

Each plan validates without warnings and dry-runs; the plans without an LLM run end to end and
their workbooks are read back cell by cell; the LLM plans run against the scripted LLM server.
Expected values come from the story in examples/README.md, not from the blocks' own output.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.table_value import Table
from keiri_agent.examples import (
    example_answers,
    example_names,
    example_path,
    example_plan,
    examples_root,
)
from keiri_agent.plan import (
    PlanRunner,
    RunResult,
    dry_run_source,
    load_source,
    load_yaml,
    validate_source,
)
from tests.support import ScriptedLLMServer

REGISTRY = BlockRegistry()
D = dt.datetime
PLANS = {
    "invoice_reconciliation",
    "invoice_reconciliation_llm",
    "duplicate_invoice_check",
    "expense_policy_check",
    "monthly_sales_report",
    "payment_matching",  # issue 35: run with vars (tests/examples/test_payment_matching_plan.py)
}


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[PlanRunner]:
    with PlanRunner(REGISTRY, runs_dir=tmp_path / "runs", designs_dir=tmp_path) as plan_runner:
        yield plan_runner


def run_example(runner: PlanRunner, name: str) -> RunResult:
    """An example run as shipped: its answers, and its vars' sample files found wherever the
    test runs (a plan default ``examples/...`` is relative to the repository)."""
    plan = example_plan(name)
    defaults = load_yaml(plan.read_text(encoding="utf-8")).get("vars") or {}
    sample_vars = {key: example_path(value) for key, value in defaults.items()}
    result = runner.run(plan, vars=sample_vars, answers=example_answers(name))
    assert result.status == "success", result.error and result.error.to_dict()
    return result


def sheet_rows(path: str | Path, sheet: str) -> list[tuple[Any, ...]]:
    book = load_workbook(path)
    try:
        return [tuple(row) for row in book[sheet].iter_rows(values_only=True)]
    finally:
        book.close()


def test_every_issue_7_example_ships_with_answers() -> None:
    assert set(example_names()) == PLANS
    for name in PLANS:
        answers = example_answers(name)
        assert answers, name
        for value in answers.get("collect_inputs", {}).values():
            assert Path(value).is_file(), f"{name}: {value}"


@pytest.mark.parametrize("name", sorted(PLANS))
def test_example_validates_without_warnings_and_dry_runs(name: str, tmp_path: Path) -> None:
    source = load_source(example_plan(name))
    options: dict[str, Any] = {"designs_dir": tmp_path, "config": {}, "env": {}}
    report = validate_source(source, REGISTRY, **options)
    assert report.valid, [issue.message for issue in report.errors]
    assert report.warnings == [], [issue.message for issue in report.warnings]
    dry = dry_run_source(source, REGISTRY, **options)
    assert dry.ok, [finding.message for finding in dry.findings]


# --- invoice_reconciliation -------------------------------------------------------------------

RECONCILE_HEADER = (
    "取引先", "区分", "請求金額", "入金金額", "差額", "請求日付", "入金日付", "日数差",
    "請求行番号", "入金行番号", "請求_ファイル", "請求_請求書番号", "請求_請求日",
    "入金_振込依頼人", "入金_摘要",
)  # fmt: skip


def test_invoice_reconciliation_writes_matches_differences_and_leftovers(
    runner: PlanRunner,
) -> None:
    result = run_example(runner, "invoice_reconciliation")
    summary = result.outputs["reconcile"]["summary"]
    assert {k: summary[k] for k in ("matched", "differences")} == {"matched": 3, "differences": 2}
    assert (summary["unmatched_left"], summary["unmatched_right"]) == (1, 1)
    workbook = Path(result.outputs["write_result"]["report"]["output_path"])
    assert workbook.name == "照合結果.xlsx"
    assert workbook.is_relative_to(runner.runs_dir)

    assert sheet_rows(workbook, "照合結果") == [
        ("請求と入金が一致したもの", *[None] * 14),
        RECONCILE_HEADER,
        ("北斗運輸", "許容範囲内", 220000, 219340, -660, D(2025, 1, 31), D(2025, 1, 31), 0,
         2, 3, "北斗運輸/請求書_INV-2025-0103.pdf", "INV-2025-0103", D(2025, 1, 10),
         "ﾎｸﾄｳﾝﾕ(ｶ", "振込（手数料差引）"),
        ("青葉商事", "一致", 330000, 330000, 0, D(2025, 1, 31), D(2025, 1, 31), 0,
         5, 2, "青葉商事/請求書_INV-2025-0101.pdf", "INV-2025-0101", D(2025, 1, 10),
         "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "振込 INV-2025-0101"),
        ("青葉商事", "許容範囲内", 110000, 110000, 0, D(2025, 2, 28), D(2025, 2, 27), -1,
         6, 6, "青葉商事/請求書_INV-2025-0102.xlsx", "INV-2025-0102", D(2025, 1, 20),
         "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "振込 INV-2025-0102"),
    ]  # fmt: skip
    assert sheet_rows(workbook, "差異") == [
        ("金額または日付が合わないもの", *[None] * 14),
        RECONCILE_HEADER,
        ("東西システム", "日付差異", 165000, 165000, 0, D(2025, 1, 31), D(2025, 2, 20), 20,
         3, 5, "東西システム/請求書_INV-2025-0105.xlsx", "INV-2025-0105", D(2025, 1, 10),
         "ﾄｳｻﾞｲｼｽﾃﾑ(ﾄﾞ", "振込"),
        ("桜井製作所", "金額差異", 550000, 500000, -50000, D(2025, 1, 31), D(2025, 1, 31), 0,
         4, 4, "桜井製作所/請求書_INV-2025-0104.pdf", "INV-2025-0104", D(2025, 1, 15),
         "ﾕ)ｻｸﾗｲｾｲｻｸｼﾖ", "振込"),
    ]  # fmt: skip
    assert sheet_rows(workbook, "未入金") == [
        ("入金が見つからない請求", *[None] * 5),
        ("取引先", "ファイル", "請求書番号", "請求日", "支払期限", "請求金額"),
        ("みなと食品", "みなと食品/請求書_INV-2025-0106.pdf", "INV-2025-0106",
         D(2025, 1, 12), D(2025, 1, 31), 88000),
    ]  # fmt: skip
    assert sheet_rows(workbook, "不明入金") == [
        ("請求書が見つからない入金", None, None, None),
        ("入金日", "振込依頼人", "入金額", "摘要"),
        (D(2025, 1, 27), "ｵｵｿﾞﾗﾌﾞﾂｻﾝ(ｶ", 77000, "振込"),
    ]


# --- duplicate_invoice_check ------------------------------------------------------------------


def test_duplicate_invoice_check_lists_exact_and_spelling_variant_duplicates(
    runner: PlanRunner,
) -> None:
    result = run_example(runner, "duplicate_invoice_check")
    workbook = result.outputs["write_result"]["report"]["output_path"]
    header = ("請求書番号", "取引先", "請求日", "金額", "担当")
    extra = ("行番号", "重複グループ", "重複元行", "類似度")
    assert sheet_rows(workbook, "重複候補") == [
        ("二重計上の疑いがある請求書（先に登録された行を残す）", *[None] * 8),
        (*header, *extra),
        # 行番号 / 重複元行 are the sheet rows of 請求書一覧.xlsx (its header is row 1).
        ("R-1003", "(株)山田商事", D(2025, 1, 10), 165000, "田中", 4, 1, 2, 100),
        ("R-1006", "株式会社みなと食品", D(2025, 1, 12), 88000, "鈴木", 7, 3, 6, 100),
        ("R-1002", "北斗運輸株式会社", D(2025, 1, 10), 220000, "鈴木", 10, 2, 3, 100),
        ("R-1010", "株式会社 山田商事", D(2025, 1, 10), 165000, "鈴木", 12, 1, 2, 100),
    ]
    kept = [row[0] for row in sheet_rows(workbook, "重複除外後")[1:]]
    # 山田工業 has the same date and amount as 山田商事 but is another company: it stays.
    assert kept == ["R-1001", "R-1002", "R-1004", "R-1005", "R-1007", "R-1008", "R-1009", "R-1011"]
    markdown = result.outputs["write_summary"]["markdown"]
    assert "対象 12 件のうち、重複の疑いがある請求書は 4 件" in markdown
    assert "| R-1010 | 株式会社 山田商事 |" in markdown


# --- monthly_sales_report ---------------------------------------------------------------------


def sales_by_month() -> dict[str, tuple[int, int]]:
    """Month → (total, lines), computed straight from the CSV, independently of the blocks."""
    path = examples_root() / "examples/data/monthly_sales_report/売上明細.csv"
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in csv.DictReader(io.StringIO(path.read_bytes().decode("cp932"))):
        month = row["売上日"][:7].replace("/", "-")
        totals[month][0] += int(row["金額"].replace(",", ""))
        totals[month][1] += 1
    return {month: (total, lines) for month, (total, lines) in sorted(totals.items())}


def test_monthly_sales_report_aggregates_charts_and_reports(runner: PlanRunner) -> None:
    result = run_example(runner, "monthly_sales_report")
    expected = sales_by_month()
    assert list(expected) == [f"2025-0{m}" for m in range(1, 7)]
    workbook = result.outputs["write_workbook"]["report"]["output_path"]
    assert sheet_rows(workbook, "月別") == [
        ("月", "売上金額", "件数"),
        *[(month, total, lines) for month, (total, lines) in expected.items()],
    ]
    grand_total = sum(total for total, _ in expected.values())
    for sheet in ("商品区分別", "得意先別"):
        rows = sheet_rows(workbook, sheet)
        assert rows[-1][:2] == ("合計", grand_total)
        amounts = [row[1] for row in rows[1:-1]]
        assert amounts == sorted(amounts, reverse=True)
        assert sum(amounts) == grand_total
    book = load_workbook(workbook)
    assert len(book["月別"]._images) == 1  # the chart is embedded next to the table
    chart = Path(result.outputs["chart"]["chart"]["path"])
    assert chart.read_bytes().startswith(b"\x89PNG")
    markdown = result.outputs["write_report"]["markdown"]
    assert "期間: 2025-01 〜 2025-06（6 か月）" in markdown
    january, _ = expected["2025-01"]
    assert f"| 2025-01 | ¥{january:,} |" in markdown
    # The chart sits beside the report, linked by its name: the report opens anywhere.
    assert "![月別売上](月別売上.png)" in markdown
    report_dir = chart.parents[1] / "write_report"
    assert (report_dir / "月別売上.png").read_bytes() == chart.read_bytes()
    assert "| **合計** | **¥27,850,400** |\n" in markdown  # totals stand out


# --- LLM plans ----------------------------------------------------------------------------------

JUDGEMENTS = [
    {"No": 1, "氏名": "佐藤 花子", "費目": "交通費", "金額": 1280, "判定": "適合", "該当条項": "", "理由": ""},
    {"No": 2, "氏名": "鈴木 一郎", "費目": "宿泊費", "金額": 15400, "判定": "違反", "該当条項": "第4条", "理由": "上限 12,000円 を超過"},
    {"No": 4, "氏名": "高橋 健", "費目": "接待交際費", "金額": 48000, "判定": "違反", "該当条項": "第6条", "理由": "事前申請がない"},
    {"No": 6, "氏名": "田中 美咲", "費目": "消耗品費", "金額": 35200, "判定": "要確認", "該当条項": "第2条", "理由": "領収書がない"},
]  # fmt: skip


def test_expense_policy_check_sends_rules_and_lines_and_reports_the_violations(
    llm_server: ScriptedLLMServer, runner: PlanRunner
) -> None:
    findings = {"違反": 2, "要確認": 1, "所見": "宿泊費と接待交際費に規程違反があります。"}
    llm_server.add_chat(json={"results": {"items": JUDGEMENTS}, "summary": findings})
    result = run_example(runner, "expense_policy_check")
    (request,) = llm_server.chat_requests()
    prompt = "\n".join(str(m["content"]) for m in request["messages"])
    assert "宿泊費の上限は 1泊 12,000円" in prompt  # the rules PDF
    assert "大阪出張 1泊" in prompt  # a line of the expense sheet
    assert "第6条" in prompt
    workbook = result.outputs["write_workbook"]["report"]["output_path"]
    assert sheet_rows(workbook, "要対応") == [
        ("違反・要確認の明細", *[None] * 6),
        ("No", "氏名", "費目", "金額", "判定", "該当条項", "理由"),
        (2, "鈴木 一郎", "宿泊費", 15400, "違反", "第4条", "上限 12,000円 を超過"),
        (4, "高橋 健", "接待交際費", 48000, "違反", "第6条", "事前申請がない"),
        (6, "田中 美咲", "消耗品費", 35200, "要確認", "第2条", "領収書がない"),
    ]
    assert len(sheet_rows(workbook, "判定結果")) == 1 + len(JUDGEMENTS)
    markdown = result.outputs["write_report"]["markdown"]
    assert "宿泊費と接待交際費に規程違反があります。" in markdown
    assert "違反 2 件、要確認 1 件（全 4 件）" in markdown
    assert "| 4 | 高橋 健 | 接待交際費 |" in markdown


def test_invoice_reconciliation_llm_appends_differences_to_a_copy_of_the_template(
    llm_server: ScriptedLLMServer, runner: PlanRunner
) -> None:
    invoices = [
        {"取引先": "青葉商事", "請求書番号": "INV-2025-0101", "請求日": "2025-01-10",
         "支払期限": "2025-01-31", "請求金額": 330000},
        {"取引先": "北斗運輸", "請求書番号": "INV-2025-0103", "請求日": "2025-01-10",
         "支払期限": "2025-01-31", "請求金額": 220000},
        {"取引先": "桜井製作所", "請求書番号": "INV-2025-0104", "請求日": "2025-01-15",
         "支払期限": "2025-01-31", "請求金額": 550000},
    ]  # fmt: skip
    llm_server.add_chat(json={"results": {"items": invoices}})
    template = Path(example_answers("invoice_reconciliation_llm")["collect_inputs"]["workbook"])
    before = template.read_bytes()
    result = run_example(runner, "invoice_reconciliation_llm")
    (request,) = llm_server.chat_requests()
    prompt = "\n".join(str(m["content"]) for m in request["messages"])
    assert "合計 金220,000円也" in prompt  # the free-form invoice text reached the model
    summary = result.outputs["write_excel"]["write_summary"]
    assert template.read_bytes() == before
    assert sheet_rows(summary["output_path"], "差異一覧") == [
        ("取引先", "区分", "請求金額", "入金額", "差額", "支払期日", "入金日", "日数差"),
        ("桜井製作所", "金額差異", 550000, 500000, -50000, "2025-01-31", "2025-01-31", 0),
    ]
    assert result.outputs["reconcile"]["summary"]["unmatched_right"] == 3


# What pandas or Python print for a missing value; never a value in a user's data here.
MISSING_TEXT = re.compile(r"(?<![A-Za-z])(?:<NA>|nan|NaN|NaT|None)(?![A-Za-z])")


def _texts(value: Any) -> Iterator[str]:
    """Every string inside a node output (tables as their records)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list | tuple | Table):
        for item in value:
            yield from _texts(item)


def _file_texts(path: Path) -> Iterator[str]:
    if path.suffix in (".xlsx", ".xlsm"):
        book = load_workbook(path)
        try:
            for sheet in book.worksheets:
                for row in sheet.iter_rows(values_only=True):
                    yield from (c for c in row if isinstance(c, str))
        finally:
            book.close()
    elif path.suffix in (".md", ".csv", ".txt", ".json"):
        yield path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(PLANS))
def test_no_example_output_holds_missing_value_text(
    name: str, llm_server: ScriptedLLMServer, runner: PlanRunner
) -> None:
    if name == "expense_policy_check":
        findings = {"違反": 2, "要確認": 1, "所見": "宿泊費と接待交際費に規程違反があります。"}
        llm_server.add_chat(json={"results": {"items": JUDGEMENTS}, "summary": findings})
    if name == "invoice_reconciliation_llm":
        invoice = {"取引先": "桜井製作所", "請求書番号": "INV-2025-0104", "請求日": "2025-01-15",
                   "支払期限": "2025-01-31", "請求金額": 550000}  # fmt: skip
        llm_server.add_chat(json={"results": {"items": [invoice]}})
    result = run_example(runner, name)
    found = [text for text in _texts(result.outputs) if MISSING_TEXT.search(text)]
    assert result.log_path is not None
    work = result.log_path.parent / f"{result.log_path.stem}.files" / "work"
    files = sorted(p for p in work.rglob("*") if p.is_file())
    assert files, "the example wrote no file"
    for path in files:
        found += [f"{path.name}: {t}" for t in _file_texts(path) if MISSING_TEXT.search(t)]
    assert found == []
