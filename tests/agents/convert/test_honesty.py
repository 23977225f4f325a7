"""The conversion never claims a success it did not earn (issue 24), through
`keiri-agent convert --json` as a script calls it, with the scripted LLM replying in the shapes
real models produce and CodeAct's code running in the real sandbox."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import keiri_agent.cli.convert  # noqa: F401  (registers `convert`)
from keiri_agent.agents.convert.pipeline import QUESTION_FILE
from keiri_agent.cli import app
from keiri_agent.events import CodeExec, read_events
from tests.support import ScriptedLLMServer, prompt_contains

runner = CliRunner()
SALES_CSV = "月,売上\n2024-04,120000\n2024-05,80000\n"
XML_JOB = {
    "action": "convert",
    "target_format": "xml",
    "output_name": "sales",
    "summary_ja": "売上表を XML に変換します。",
}
CODEACT = prompt_contains("You are CodeAct")
TO_XML = 'df.to_xml("sales.xml", parser="etree", index=False)\nprint("saved", len(df))\n'
CSV_INSTEAD = 'df.to_csv("売上.csv", index=False)\nprint("saved")\n'


def fenced(code: str) -> str:
    return f"```python\n{code}```"


@pytest.fixture
def source(llm_server: ScriptedLLMServer, convert_env: Path) -> Path:
    path = convert_env / "売上.csv"
    path.write_text(SALES_CSV, encoding="utf-8")
    return path


def convert(*args: str) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, ["convert", *args, "--json"])
    return result.exit_code, json.loads(result.stdout), result.stderr


def xml_rows(path: Path) -> list[dict[str, str | None]]:
    root = ET.parse(path).getroot()
    return [{child.tag: child.text for child in row} for row in root]


def test_xml_asked_and_csv_written_is_sent_back_then_the_xml_is_the_result(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat(fenced(CSV_INSTEAD), when=CODEACT)
    llm_server.add_chat(fenced(TO_XML), when=CODEACT)  # df.to_xml works in the sandbox
    out = tmp_path / "out"

    code, data, _ = convert("売上を XML にして", "--source", str(source), "--out", str(out))

    assert code == 0, data
    assert data["status"] == "success"
    assert [Path(f).name for f in data["files"]] == ["sales.xml"]  # not the CSV
    assert xml_rows(out / "sales.xml")[0] == {"月": "2024-04", "売上": "120000"}
    assert sorted(p.name for p in out.iterdir()) == ["sales.xml"]
    feedback = llm_server.chat_requests()[-1]["messages"][-1]["content"]
    assert "依頼の形式（XML）ではありません" in feedback
    assert "売上.csv" in feedback
    assert [run["success"] for run in data["code_runs"]] == [True, True]
    assert data["code_runs"][0]["wrong_format"]


def test_xml_never_made_fails_and_nothing_says_success(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json=XML_JOB)
    # The right name, the wrong content: CSV text in sales.xml, every time.
    llm_server.add_chat(fenced('df.to_csv("sales.xml", index=False)\n'), when=CODEACT, repeat=True)
    out = tmp_path / "out"

    code, data, stderr = convert("売上を XML にして", "--source", str(source), "--out", str(out))

    assert code == 1
    assert data["status"] == "failed"
    assert data["files"] == []
    assert not out.exists() or list(out.iterdir()) == []
    error = data["error"]
    assert error["code"] == "CODE_EXECUTION_FAILED"
    assert "XML のファイルを作成できませんでした" in error["message"]
    assert "XML として読めません（内容は CSV です）" in error["message"]
    assert "。。" not in error["message"] + error["hint"]
    assert "XML" in error["hint"]
    assert len(data["code_runs"]) == 3
    assert "success" not in stderr.lower()


def test_a_reply_that_builds_in_one_block_and_saves_in_the_next_runs_both(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat(
        "XML を組み立てます。\n```python\n"
        'text = df.to_xml(parser="etree", root_name="rows", index=False)\n```\n'
        "保存します。\n```python\n"
        'with open("sales.xml", "w", encoding="utf-8") as handle:\n'
        "    handle.write(text)\n"
        'print("ok")\n```',
        when=CODEACT,
    )
    out = tmp_path / "out"

    code, data, _ = convert("売上を XML にして", "--source", str(source), "--out", str(out))

    assert code == 0, data
    assert len(xml_rows(out / "sales.xml")) == 2
    assert len(data["code_runs"]) == 1


def test_s3_503_after_retries_is_a_fetch_error_not_an_invented_table(
    llm_server: ScriptedLLMServer,
    convert_env: Path,
    s3_env: str,
    s3_proxy: Any,
    s3_admin: Any,
    s3_bucket: str,
) -> None:
    s3_admin.put_object(Bucket=s3_bucket, Key="2024/sales.csv", Body=SALES_CSV.encode())
    s3_proxy.fail(-1, status=503, code="ServiceUnavailable")
    url = f"s3://{s3_bucket}/2024/"
    llm_server.add_chat(json={**XML_JOB, "target_format": "csv", "source": url})
    llm_server.add_chat(
        fenced('open("sales.csv", "w").write("月,売上\\n4月,999999\\n")\n'), when=CODEACT
    )
    out = convert_env / "out"

    code, data, stderr = convert(f"{url} の売上を CSV にして", "--out", str(out))

    assert code == 1, data
    assert data["status"] == "failed"
    assert data["files"] == []
    assert data["used_fallback"] is False
    assert data["error"]["code"] == "API_ERROR"
    assert "失敗しました" in data["error"]["message"]
    assert data["error"]["hint"]
    assert len(llm_server.chat_requests()) == 1  # CodeAct was never asked
    assert llm_server.pending() == 1
    assert "[ファイルの取得] 開始" in stderr


def test_a_question_pauses_the_task_and_the_answer_continues_it(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat("ルート要素名は何にしますか？", when=CODEACT)
    out = tmp_path / "out"

    result = runner.invoke(
        app, ["convert", "売上を XML にして", "--source", str(source), "--out", str(out)]
    )

    assert result.exit_code == 3, result.output
    assert "CodeAct からの質問: ルート要素名は何にしますか？" in result.stdout
    assert f"keiri-agent convert --continue {out} --answer" in result.stdout
    assert (out / QUESTION_FILE).is_file()

    llm_server.add_chat(
        fenced('df.to_xml("sales.xml", parser="etree", root_name="売上一覧", index=False)\n'),
        when=prompt_contains("回答: 売上一覧"),
    )
    code, data, _ = convert("--continue", str(out), "--answer", "売上一覧")

    assert code == 0, data
    assert data["status"] == "success"
    assert ET.parse(out / "sales.xml").getroot().tag == "売上一覧"
    assert not (out / QUESTION_FILE).exists()
    interprets = [r for r in llm_server.chat_requests() if not CODEACT(r)]
    assert len(interprets) == 1  # the job was not interpreted again


def test_json_of_a_question_says_waiting_input_with_the_question(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat("どの列を属性にしますか？", when=CODEACT)

    code, data, _ = convert("XML にして", "--source", str(source), "--out", str(tmp_path / "o"))

    assert code == 3
    assert data["status"] == "waiting_input"
    assert data["question"] == "どの列を属性にしますか？"
    assert data["files"] == []


def test_an_llm_failure_prints_status_error_and_what_the_run_made(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat(fenced("print(df['存在しない列'])\n"), when=CODEACT)
    llm_server.add_error(500, "upstream exploded", when=CODEACT)

    code, data, _ = convert("XML にして", "--source", str(source), "--out", str(tmp_path / "o"))

    assert code == 1
    assert data["status"] == "error"
    assert data["error"]["code"] == "API_ERROR"
    assert "turn" not in data["error"]["details"]
    assert data["job"]["target_format"] == "xml"
    assert data["used_fallback"] is True
    (run,) = data["code_runs"]
    assert "KeyError" in run["error"]
    assert data["files"] == []


def test_a_failed_run_event_and_progress_line_carry_the_error_the_model_saw(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat(fenced("import subprocess\n"), when=CODEACT)  # refused by the policy
    llm_server.add_chat(fenced(TO_XML), when=CODEACT)

    code, data, stderr = convert(
        "XML にして", "--source", str(source), "--out", str(tmp_path / "o")
    )

    assert code == 0, data
    events = read_events(data["run_log"])
    failed = [e for e in events if isinstance(e, CodeExec) and e.success is False]
    (refused,) = failed
    assert "PolicyViolation" in refused.stderr
    assert "subprocess" in refused.stderr
    # The progress line says the sandbox's own Japanese reason, without Python's class name.
    (line,) = [ln for ln in stderr.splitlines() if "CodeAct: 実行 失敗（" in ln]
    assert "subprocess" in line
    assert "PolicyViolation" not in line


def test_the_task_deadline_stops_an_endless_loop_with_a_clear_error(
    source: Path, llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_CONVERT_TIMEOUT_S", "8")
    llm_server.add_chat(json=XML_JOB)
    llm_server.add_chat(fenced("while True:\n    pass\n"), when=CODEACT, repeat=True)

    code, data, _ = convert("XML にして", "--source", str(source), "--out", str(tmp_path / "o"))

    assert code == 1
    assert data["status"] == "failed"
    assert data["error"]["code"] == "TIMEOUT_ERROR"
    assert "制限時間（8 秒）" in data["error"]["message"]
    assert "KEIRI_CONVERT_TIMEOUT_S" in data["error"]["hint"]
    assert data["files"] == []
