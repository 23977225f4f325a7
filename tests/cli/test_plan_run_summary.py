"""`plan run` ends with what the person wants: the outcome, the files written (absolute, one
per line), the result tables summarised (name, rows × columns, total row) as the plan presents
them, and the resume command when the run waits; `--json` keeps the runner's document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.examples import example_answers, example_plan

runner = CliRunner()


@pytest.fixture(autouse=True)
def runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_NEGATIVE_AMOUNTS", "triangle")
    return tmp_path / "runs"


def _answers(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(example_answers(name), allow_unicode=True), encoding="utf-8")
    return path


def _section(out: str, heading: str) -> list[str]:
    lines = out.split(f"{heading}\n", 1)[1].splitlines()
    taken = []
    for line in lines:
        if line.endswith(":") and not line.startswith(" ") and not line.startswith("/"):
            break
        taken.append(line)
    return taken


def test_the_summary_lists_files_and_tables_in_plan_order(tmp_path: Path, runs: Path) -> None:
    plan = example_plan("monthly_sales_report")
    result = runner.invoke(
        app,
        ["plan", "run", str(plan), "--answers", str(_answers(tmp_path, "monthly_sales_report"))],
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("結果: 成功（")
    files = [Path(line) for line in _section(out, "作成したファイル:")][:4]
    assert all(path.is_absolute() and path.is_file() for path in files)
    # In the plan's order (write_report and write_workbook run side by side after chart): the
    # chart, the report with its copy of the chart beside it, the workbook.
    assert [path.relative_to(runs).parts[-2:] for path in files] == [
        ("chart", "月別売上.png"),
        ("write_report", "月別売上.png"),
        ("write_report", "月次売上レポート.md"),
        ("write_workbook", "月次売上.xlsx"),
    ]
    assert all(path.is_relative_to(runs) for path in files)
    tables = _section(out, "結果の表:")[:4]
    assert tables == [
        "  月別: 6 行 × 3 列（月、売上金額、件数）",
        "  商品区分別: 4 行 × 3 列（商品区分、売上金額、件数）　合計: 売上金額 27,850,400、件数 345",
        "  得意先別: 7 行 × 2 列（得意先、売上金額）　合計: 売上金額 27,850,400",
        "  読み込んだ表: 345 行 × 5 列（売上日、伝票番号、得意先、商品区分、金額）",
    ]
    assert "{" not in out  # no raw JSON
    assert "read_sales" not in out  # no node ids
    assert "file.read_table" not in out  # no block ids
    assert "▶ 売上明細の読み込み 開始" in result.stderr


def test_a_waiting_run_ends_with_the_answers_file_and_the_resume_command(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", "run", str(example_plan("duplicate_invoice_check"))])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("結果: 入力待ち（")
    assert "  請求書一覧の指定: 重複をチェックする請求書一覧（Excel）を指定してください" in out
    run_id = out.split("実行 ID: ")[1].split()[0]
    assert f"  keiri-agent plan resume {run_id} --answers answers.yaml" in out


def test_json_output_is_the_runner_document(tmp_path: Path) -> None:
    plan = example_plan("duplicate_invoice_check")
    answers = _answers(tmp_path, "duplicate_invoice_check")
    result = runner.invoke(app, ["plan", "run", str(plan), "--answers", str(answers), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {
        "run_id", "plan_id", "status", "outputs", "error", "waiting", "log_path", "duration_ms"
    }  # fmt: skip
    assert data["status"] == "success"
