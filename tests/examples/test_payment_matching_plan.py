"""designs/examples/payment_matching.yaml on its sample data (examples/data/payment_matching/).

Expected rows come from the story of the sample (examples/README.md, the comments beside the
deposits in examples/make_data.py), not from the block's output: which invoices each transfer
pays, which lines nobody can decide, who is unknown. The plan is run from the CLI as a user runs
it, with vars only (it must not wait), and with ``confirm=true`` answered by ``plan resume
--answers`` (the parent company is then remembered and matched by its learned name next time).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner, Result

from keiri_agent.cli import app
from keiri_agent.examples import example_answers, example_data_dir, example_plan

DATA = example_data_dir() / "payment_matching"
PLAN = example_plan("payment_matching")
ANSWERS = PLAN.parent / "answers" / "payment_matching.yaml"
SHEETS = ["消込済", "要確認", "未入金", "不明入金"]
BANK_FILES = ("振込入金通知.txt", "入出金取引明細.txt", "入出金明細.csv")
PARENT = "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ"

# (振込依頼人名, 請求番号, 消込額, 差額, 理由) of the story, in the order of the deposits.
MATCHED = [
    ("ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "INV-2025-0101", 330000, 0, "名義: マスタのカナ／金額: 2 件まとめ"),
    ("ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "INV-2025-0102", 110000, 0, "名義: マスタのカナ／金額: 2 件まとめ"),
    ("ﾎｸﾄｳﾝﾕ(ｶ", "INV-2025-0103", 219340, -660, "名義: マスタのカナ／金額: 手数料差引 (660 円)"),
    (
        "ﾕ)ｻｸﾗｲｾｲｻｸｼﾖ",
        "INV-2025-0104",
        300000,
        -250000,
        "名義: マスタのカナ／金額: 一部入金 (残 250,000 円)",
    ),
    ("1004ﾄﾞ)ﾄｳｻﾞｲｼｽﾃﾑ", "INV-2025-0105", 165000, 0, "名義: コード（振込依頼人名）／金額: 一致"),
    (
        "ｲ)ｻｸﾗｼｶ",
        "INV-2025-0107",
        43560,
        -440,
        "名義: 請求番号（EDI情報）／金額: 手数料差引 (440 円)",
    ),
    (
        "ｶ)ﾆﾂﾎﾟﾝｺｸｻｲﾛｼﾞｽﾃｲｸｽｱﾝﾄﾞｻﾌﾟﾗｲﾁｴｰﾝﾏﾈｼﾞﾒﾝﾄｿﾘﾕｰｼﾖﾝｽﾞ",
        "INV-2025-0109",
        1319120,
        -880,
        "名義: マスタのカナ（前方一致: 銀行で 48 文字に切れた名前）／金額: 手数料差引 (880 円)",
    ),
    ("ﾕ)ｻｸﾗｲｾｲｻｸｼﾖ", "INV-2025-0104", 250000, 0, "名義: マスタのカナ／金額: 一致"),
]
REVIEW = [(PARENT, 1), ("ｶ)ﾔﾏﾀﾞｺｳｷﾞﾖｳ", 2)]  # (振込依頼人名, 候補数)
UNPAID = ["INV-2025-0106", "INV-2025-0108", "INV-2025-0110", "INV-2025-0111"]
UNKNOWN = ["ﾀﾅｶ ﾀﾛｳ", "ｵｵｿﾞﾗﾌﾞﾂｻﾝ(ｶ"]

runner = CliRunner()


@pytest.fixture(autouse=True)
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs and the learned-names store of this test only."""
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path / "workspace"


def plan_run(*extra: str, bank: str = "振込入金通知.txt", out: str = "消込結果.xlsx") -> Result:
    args = [
        "plan",
        "run",
        str(PLAN),
        "--var",
        f"invoices={DATA / '請求一覧.csv'}",
        "--var",
        f"bank={DATA / bank}",
        "--var",
        f"customers={DATA / '取引先マスタ.csv'}",
        "--var",
        f"out={out}",
        "--json",
        *extra,
    ]
    return runner.invoke(app, args, env={"COLUMNS": "200"})


def finished(result: Result, status: str = "success") -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert data["status"] == status, data.get("error")
    return data


def workbook(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each sheet of the written workbook as rows under its header (row 2; row 1 is a title)."""
    path = Path(data["outputs"]["write_result"]["report"]["output_path"])
    book = load_workbook(path)
    try:
        sheets = {}
        for sheet in book.worksheets:
            rows = list(sheet.iter_rows(values_only=True))
            header = rows[1]
            sheets[sheet.title] = [dict(zip(header, row, strict=True)) for row in rows[2:]]
        return sheets
    finally:
        book.close()


def matched(sheets: dict[str, list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    return [
        (r["振込依頼人名"], r["請求番号"], r["消込額"], r["差額"], r["理由"])
        for r in sheets["消込済"]
    ]


def test_run_with_vars_only_writes_the_four_sheets_without_waiting() -> None:
    data = finished(plan_run())
    sheets = workbook(data)
    assert list(sheets) == SHEETS
    assert Path(data["outputs"]["write_result"]["report"]["output_path"]).name == "消込結果.xlsx"
    assert matched(sheets) == MATCHED
    assert [r["照会番号"] for r in sheets["消込済"]][:3] == ["000001", "000001", "000002"]
    assert [r["請求金額"] for r in sheets["消込済"]][:3] == [330000, 110000, 220000]
    assert [(r["振込依頼人名"], r["候補数"]) for r in sheets["要確認"]] == REVIEW
    assert "1009 株式会社山田工業" in sheets["要確認"][1]["候補"]
    assert "1010 株式会社山田興業" in sheets["要確認"][1]["候補"]
    assert [r["請求番号"] for r in sheets["未入金"]] == UNPAID
    assert [r["振込依頼人名"] for r in sheets["不明入金"]] == UNKNOWN
    summary = data["outputs"]["apply_answers"]["summary"]
    assert (summary["lines"], summary["fees"]) == (11, 660 + 440 + 880)
    assert data["outputs"]["learn_names"]["learn_summary"]["added"] == 0


@pytest.mark.parametrize("bank", BANK_FILES[1:])
def test_every_bank_format_of_the_same_deposits_gives_the_same_result(bank: str) -> None:
    sheets = workbook(finished(plan_run(bank=bank)))
    assert matched(sheets) == MATCHED
    assert [(r["振込依頼人名"], r["候補数"]) for r in sheets["要確認"]] == REVIEW
    assert [r["請求番号"] for r in sheets["未入金"]] == UNPAID
    assert [r["振込依頼人名"] for r in sheets["不明入金"]] == UNKNOWN
    where = sheets["消込済"][0]["位置"]
    assert bank in where


def test_a_person_confirms_through_the_cli_and_the_parent_company_is_learned(
    workspace: Path,
) -> None:
    waiting = finished(plan_run("--var", "confirm=true"), "waiting_input")
    assert [w["node_id"] for w in waiting["waiting"]] == ["confirm_review"]
    asked = waiting["answers_example"]["confirm_review"]
    shipped = example_answers("payment_matching")["confirm_review"]
    assert set(shipped) <= set(asked)  # the shipped answers name this run's questions

    resumed = runner.invoke(
        app,
        ["plan", "resume", waiting["run_id"], "--answers", str(ANSWERS), "--json"],
        env={"COLUMNS": "200"},
    )
    sheets = workbook(finished(resumed))
    rows = {(r["振込依頼人名"], r["請求番号"]): r["理由"] for r in sheets["消込済"]}
    assert rows[(PARENT, "INV-2025-0108")] == "名義: 確認済み／金額: 一致"
    assert rows[("ｶ)ﾔﾏﾀﾞｺｳｷﾞﾖｳ", "INV-2025-0110")] == "名義: 確認済み／金額: 一致"
    assert sheets["要確認"] == []
    assert [r["請求番号"] for r in sheets["未入金"]] == ["INV-2025-0106", "INV-2025-0111"]
    store = (workspace / "learned_payer_names.csv").read_text(encoding="utf-8")
    assert f"{PARENT},1007" in store
    assert "ﾔﾏﾀﾞｺｳｷﾞﾖｳ" not in store  # confirmed, not to be remembered

    # The next run, without asking anyone, knows who the parent company pays for.
    again = workbook(finished(plan_run(out="翌月.xlsx")))
    rows = {(r["振込依頼人名"], r["請求番号"]): r["理由"] for r in again["消込済"]}
    assert rows[(PARENT, "INV-2025-0108")] == "名義: 学習済み／金額: 一致"
    assert [r["振込依頼人名"] for r in again["要確認"]] == ["ｶ)ﾔﾏﾀﾞｺｳｷﾞﾖｳ"]


def test_the_learned_names_file_can_be_given_as_a_var() -> None:
    sheets = workbook(finished(plan_run("--var", f"aliases={DATA / '学習済みの名義.csv'}")))
    rows = {(r["振込依頼人名"], r["請求番号"]): r["理由"] for r in sheets["消込済"]}
    assert rows[(PARENT, "INV-2025-0108")] == "名義: 学習済み／金額: 一致"


def test_a_broken_bank_file_stops_the_run_with_a_located_japanese_error(tmp_path: Path) -> None:
    data = (DATA / "振込入金通知.txt").read_bytes()
    broken = tmp_path / "振込入金通知.txt"
    broken.write_bytes(data[: 202 * 3 + 150])  # the third data record cut short
    result = plan_run(bank=str(broken))
    assert result.exit_code != 0
    error = json.loads(result.stdout)["error"]
    assert error["details"]["node_id"] == "read_bank"
    assert error["message"] == (
        "「振込入金通知.txt」の 4 件目のレコード（4 行目、先頭から 607 バイト目）は 150 バイトしかなく、"
        "途中で切れています（振込入金通知は 1 レコード 200 バイトです）。"
    )
    assert not list((tmp_path / "runs").rglob("*.xlsx"))  # no workbook half-written
