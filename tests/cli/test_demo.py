"""`keiri-agent demo`: the invoice reconciliation example on the bundled data, no API key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from keiri_agent.cli import app


@pytest.fixture(autouse=True)
def no_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "KEIRI_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_demo_runs_headless_and_says_where_the_workbook_and_log_are(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--runs-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line)
    workbook, log = Path(lines["出力ブック"]), Path(lines["実行ログ"])
    assert workbook.is_file()
    assert workbook.is_relative_to(tmp_path)
    assert log.is_file()
    assert log.suffix == ".jsonl"
    assert "一致 3 件、差異 2 件、未入金 1 件、不明入金 1 件" in lines["照合結果"]
    book = load_workbook(workbook)
    assert book.sheetnames == ["照合結果", "差異", "未入金", "不明入金"]
    events = [json.loads(line)["event"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert events[0] == "plan_start"
    assert events[-1] == "plan_complete"
    # Progress names the steps as the plan labels them, as `plan run` does: no node or block id.
    assert "▶ 請求書と入金明細の指定 開始" in result.stderr
    assert "collect_inputs" not in result.stderr
    assert "ui.interactive_input" not in result.stderr


def test_demo_json_reports_the_same_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--runs-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "success"
    assert Path(data["workbook"]).is_file()
    assert data["summary"]["matched"] == 3


@pytest.mark.parametrize("as_json", [False, True])
def test_demo_with_a_file_as_runs_dir_says_so_in_japanese(tmp_path: Path, as_json: bool) -> None:
    taken = tmp_path / "runs"
    taken.write_text("not a directory", encoding="utf-8")
    args = ["demo", "--runs-dir", str(taken)] + (["--json"] if as_json else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    if as_json:
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "PERMISSION_DENIED"
        assert "ディレクトリを作れません" in error["message"]
        assert "--runs-dir" in error["hint"]
    else:
        assert "ディレクトリを作れません" in result.stderr
    assert taken.read_text(encoding="utf-8") == "not a directory"
