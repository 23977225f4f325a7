"""`keiri-agent convert` as a user runs it: the scripted LLM server, real files, the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import keiri_agent.cli.convert  # noqa: F401  (registers `convert`)
from keiri_agent.cli import app
from keiri_agent.events import read_events
from tests.support import ScriptedLLMServer, prompt_contains

runner = CliRunner()
SALES_CSV = "月,売上\n2024-04,120000\n2024-05,80000\n"


@pytest.fixture
def source(llm_server: ScriptedLLMServer, convert_env: Path) -> Path:
    path = convert_env / "売上.csv"
    path.write_text(SALES_CSV, encoding="utf-8")
    return path


def test_convert_prints_the_answer_and_files_with_progress_on_stderr(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(
        json={"action": "convert", "target_format": "parquet", "summary_ja": "Parquet に変換"}
    )
    out = tmp_path / "out"

    result = runner.invoke(
        app, ["convert", "売上を Parquet にして", "--source", str(source), "--out", str(out)]
    )

    assert result.exit_code == 0, result.output
    assert "1 件のファイルを PARQUET に変換しました。" in result.stdout
    assert f"  {out / '売上.parquet'}" in result.stdout
    assert pd.read_parquet(out / "売上.parquet")["売上"].tolist() == [120000, 80000]
    assert "[依頼の解釈] 開始（0%）" in result.stderr
    assert "[形式の変換] 完了（80%）" in result.stderr
    assert "[仕上げ] 完了（100%）" in result.stderr
    assert "[" not in result.stdout.splitlines()[0]  # no progress lines in the answer
    (log,) = (tmp_path / "runs" / "convert").glob("*.jsonl")
    assert f"実行ログ: {log}" in result.stderr
    assert read_events(log)[-1].event == "stage"


def test_json_output_is_the_convert_result_and_names_the_fallback(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "xml"})
    code = 'open("売上.xml", "w", encoding="utf-8").write("<rows/>")\n'
    llm_server.add_chat(f"```python\n{code}```", when=prompt_contains("You are CodeAct"))

    result = runner.invoke(
        app, ["convert", "XML にして", "--source", str(source), "--out", str(tmp_path), "--json"]
    )

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "success"
    assert data["files"] == [str(tmp_path / "売上.xml")]
    assert data["used_fallback"] is True
    assert "UnsupportedFormatError" in data["fallback_reason"]
    assert "CodeAct（代替処理）に切り替え" in result.stderr
    assert "CodeAct: 実行 成功" in result.stderr


def test_a_default_out_dir_is_a_new_workspace_folder(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "json"})

    result = runner.invoke(app, ["convert", "JSON に", "--source", str(source)])

    assert result.exit_code == 0, result.output
    (written,) = (tmp_path / "workspace").glob("*/売上.json")
    assert str(written) in result.stdout


def test_a_missing_input_exits_2_with_the_hint(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "csv"})

    result = runner.invoke(app, ["convert", "CSV に", "--source", str(tmp_path / "ない.csv")])

    assert result.exit_code == 2
    assert "見つかりません" in result.stderr
    assert "ヒント:" in result.stderr
    assert result.stdout == ""


def test_an_llm_api_error_exits_1(source: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(500, "upstream exploded")

    result = runner.invoke(app, ["convert", "CSV に", "--source", str(source)])

    assert result.exit_code == 1
    assert "エラー（AI サービスの失敗）: " in result.stderr
    assert "HTTP 500" in result.stderr


@pytest.mark.parametrize("failure", ["missing input", "llm error"])
def test_a_failed_run_leaves_no_folder_made_for_it(
    failure: str, source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    if failure == "llm error":
        llm_server.add_error(500, "upstream exploded")
    else:
        llm_server.add_chat(json={"action": "convert", "target_format": "csv"})
        source = tmp_path / "ない.csv"

    result = runner.invoke(app, ["convert", "CSV に", "--source", str(source)])

    assert result.exit_code == (1 if failure == "llm error" else 2), result.output
    workspace = tmp_path / "workspace"  # KEIRI_WORKSPACE_ROOT
    assert not workspace.exists() or sorted(workspace.iterdir()) == []


def test_without_an_llm_key_the_user_is_told_what_to_set(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")

    result = runner.invoke(app, ["convert", "CSV に", "--source", str(source)])

    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.stderr
