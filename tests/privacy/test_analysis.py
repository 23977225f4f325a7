"""`keiri-agent analyze` over customer data with personal columns, as issue 37's review ran it.

Every request body the scripted server records is searched for the 150 identifiers and the
10 names of the 30 rows; the report the user reads must show the real values where the model
wrote placeholders, the totals the code computed must reach the model unchanged, and the run
log must hold none of the values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from tests.support import ScriptedLLMServer
from tests.support.personal import customers, identifiers, leaked, names, write_csv, write_xlsx

runner = CliRunner()
ROWS = customers()
FIRST = str(ROWS[0]["氏名"])
TOTAL = sum(int(str(row["売上金額"])) for row in ROWS)
BY_MONTH: dict[str, int] = {}
for _row in ROWS:
    _month = str(_row["購入日"])[:7]
    BY_MONTH[_month] = BY_MONTH.get(_month, 0) + int(str(_row["売上金額"]))
# The agent looks at the rows (a preview of every column) and counts customers per region.
CODE = """import pandas as pd
print(df.head(12).to_string())
print(df.groupby("地域")["顧客ID"].count().to_dict())
print("合計", int(df["売上金額"].sum()))
months = pd.to_datetime(df["購入日"]).dt.strftime("%Y-%m")
print("月別", {k: int(v) for k, v in df.groupby(months)["売上金額"].sum().items()})
print(df[df["氏名"] == "〔人名1〕"][["携帯電話", "売上金額"]].to_string())
"""
REPORT = {
    "title": "地域別の顧客数",
    "conclusion": "関東・関西・九州に各 10 件。〔人名1〕様（〔電話番号1〕）が最初の顧客です。",
    "evidence": [f"売上合計 {TOTAL} 円"],
    "sections": [],
    "suggestions": [],
}


def _script(server: ScriptedLLMServer) -> None:
    server.add_chat(json={"next_action": "act", "instruction": "地域別に数える", "rationale": "r"})
    server.add_chat(json={"code": CODE, "expected_outputs": []})
    server.add_chat(json={"next_action": "finalize", "rationale": "十分"})
    server.add_chat(json=REPORT)


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_no_identifier_and_no_name_reaches_the_model_and_the_report_shows_them(
    llm_server: ScriptedLLMServer, public_dir: Path, kind: str
) -> None:
    source = public_dir / f"顧客別売上.{kind}"
    (write_csv if kind == "csv" else write_xlsx)(source, ROWS)
    _script(llm_server)
    args = ["analyze", str(source), "地域別の顧客数を見せて", "--json"]
    result = runner.invoke(app, [*args, "--workspace-root", str(public_dir / "ws")])
    assert result.exit_code == 0, result.output
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.chat_requests()]
    assert len(bodies) == 4
    assert leaked(bodies, identifiers(ROWS)) == []
    assert len(leaked(bodies, names(ROWS))) <= 1
    # The table and the printed rows reached the model, with placeholders where people were.
    assert "〔人名1〕" in bodies[0]
    assert "〔マイナンバー1〕" in bodies[0]
    # What the code computed is not personal: the model still sees the counts and the total.
    assert f"合計 {TOTAL}" in bodies[2]
    assert "{'九州': 10, '関東': 10, '関西': 10}" in bodies[2]
    # Amounts and dates are never masked: the model sees the dates and the same monthly totals.
    assert f"月別 {BY_MONTH}" in bodies[2]
    assert str(ROWS[0]["購入日"]) in bodies[0]
    assert str(ROWS[11]["購入日"]) in bodies[2]
    assert "〔生年月日" not in "".join(bodies)

    data = json.loads(result.stdout)
    assert data["status"] == "success"
    conclusion = data["final_report"]["conclusion"]
    assert f"{FIRST}様（{ROWS[0]['携帯電話']}）" in conclusion
    report = Path(data["report_path"]).read_text(encoding="utf-8")
    assert FIRST in report
    assert "〔人名1〕" not in report
    # The code ran on the real data: the placeholder in it was the first customer's name.
    stdout = data["execution_results"][0]["stdout"]
    assert str(ROWS[0]["携帯電話"]) in stdout
    assert data["masked"]["person"] == 10
    assert data["masked"]["my_number"] == 30

    logs = [path.read_text(encoding="utf-8") for path in Path("runs").rglob("*.jsonl")]
    assert logs
    assert leaked(logs, identifiers(ROWS)) == []
    assert leaked(logs, names(ROWS)) == []
    masked_calls = [
        json.loads(line)["masked"]
        for text in logs
        for line in text.splitlines()
        if '"llm_call"' in line and '"masked"' in line
    ]
    # Each llm_call says how many values of each kind its request had masked.
    assert len(masked_calls) == 4
    assert {"person", "phone", "email", "my_number", "card", "account"} <= set(masked_calls[0])


def test_with_masking_off_the_model_gets_the_data_as_it_is(
    llm_server: ScriptedLLMServer, public_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MASK_PII", "off")
    source = write_csv(public_dir / "顧客別売上.csv", ROWS)
    _script(llm_server)
    args = ["analyze", str(source), "地域別の顧客数を見せて", "--json"]
    result = runner.invoke(app, [*args, "--workspace-root", str(public_dir / "ws")])
    assert result.exit_code == 0, result.output
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.chat_requests()]
    assert FIRST in bodies[0]
    assert str(ROWS[0]["マイナンバー"]) in bodies[0]
    assert json.loads(result.stdout)["masked"] == {}
