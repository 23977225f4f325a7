"""A plan whose ``ai.process_llm`` node reads a customer CSV as evidence (issue 37): the rows
reach the model masked (by their column headers and by form), the node's outputs hold the real values where the model wrote placeholders, and
the run log holds none of them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from keiri_agent.cli import app
from tests.support import ScriptedLLMServer
from tests.support.personal import customers, identifiers, leaked, names, write_csv

runner = CliRunner()
ROWS = customers()[:10]
PLAN = """apiVersion: v1
id: privacy_check
version: 1.0.0
vars:
  path: {path}
graph:
  - id: extract
    block: file.extract_text
    in:
      paths: ${{vars.path}}
    out:
      evidence_data: evidence
  - id: ask
    block: ai.process_llm
    in:
      evidence_data: ${{extract.evidence}}
      prompt: 顧客一覧から、最初の顧客の氏名と電話番号、売上金額の合計を返してください。
      output_schema:
        first_name: string
        first_phone: string
        total: integer
    out:
      results: answer
"""


def test_process_llm_gets_the_rows_masked_and_its_outputs_restored(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    source = write_csv(tmp_path / "顧客.csv", ROWS)
    total = sum(int(str(row["売上金額"])) for row in ROWS)
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(path=source), encoding="utf-8")
    llm_server.add_chat(
        json={"first_name": "〔人名1〕", "first_phone": "〔電話番号1〕", "total": total}
    )

    result = runner.invoke(app, ["plan", "run", str(plan), "--json"])

    assert result.exit_code == 0, result.output
    (body,) = llm_server.chat_requests()
    sent = json.dumps(body, ensure_ascii=False)
    assert leaked([sent], identifiers(ROWS)) == []
    assert leaked([sent], names(ROWS)) == []
    assert "C001,〔人名1〕,〔電話番号1〕" in sent
    assert str(ROWS[0]["売上金額"]) in sent  # amounts are not personal data
    data = json.loads(result.stdout)
    answer = data["outputs"]["ask"]["answer"]
    assert answer == {
        "first_name": ROWS[0]["氏名"],
        "first_phone": ROWS[0]["携帯電話"],
        "total": total,
    }
    assert data["masked"]["person"] == 10
    assert data["masked"]["my_number"] == 10
    log = Path(data["log_path"]).read_text(encoding="utf-8")
    assert '"node_complete"' in log
    assert leaked([log], identifiers(ROWS)) == []
    assert leaked([log], names(ROWS)) == []
