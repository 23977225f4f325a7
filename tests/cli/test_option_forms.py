"""A ``NAME=VALUE`` option given in another form is one error in every command that takes one
(``--var``, ``--input``, ``--bind``): the option, what was given, the form it is written in,
and an example in the hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app

runner = CliRunner()

CASES = [
    (["plan", "dry-run", "plan.yaml", "--var", "month"], "--var", "month", "KEY=VALUE"),
    (
        ["sandbox", "run", "code.py", "--workdir", "work", "--input", "sales"],
        "--input",
        "sales",
        "NAME=PATH",
    ),
    (
        ["plan", "generate", "-i", "照合", "--bind", "excel_report.table"],
        "--bind",
        "excel_report.table",
        "<テンプレートID>.<入力名>=<テンプレートID>.<出力名>",
    ),
]


@pytest.mark.parametrize(("args", "option", "given", "form"), CASES, ids=[c[1] for c in CASES])
def test_an_option_not_in_its_form_says_which_form_it_takes(
    args: list[str],
    option: str,
    given: str,
    form: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    (tmp_path / "plan.yaml").write_text("id: monthly\n", encoding="utf-8")  # the files are
    (tmp_path / "code.py").write_text("print(1)\n", encoding="utf-8")  # checked first

    result = runner.invoke(app, [*args, "--json"])

    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "INPUT_VALIDATION_FAILED"
    assert error["message"] == f"{option} '{given}' は {form} の形ではありません。"
    assert error["hint"].startswith(f"例: {option} ")
    assert error["details"] == {option.removeprefix("--"): given}
