"""A conversion of customer data that falls back to CodeAct (issue 37): the interpretation and
CodeAct prompts (with the file preview) carry placeholders, the code the model writes runs on
the real data, and the file it names after a placeholder bears the real name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.agents.convert.pipeline import run_convert
from keiri_agent.sandbox import SandboxExecutor
from tests.support import ScriptedLLMServer, prompt_contains
from tests.support.personal import customers, identifiers, leaked, names, write_csv

ROWS = customers()[:10]
OWNER = "長谷川 美咲"
XML_CODE = """rows = ["<rows>"]
for record in df.to_dict(orient="records"):
    rows.append("<row>" + "".join(f"<c>{v}</c>" for v in record.values()) + "</row>")
rows.append("</rows>")
with open("〔人名1〕_顧客.xml", "w", encoding="utf-8") as handle:
    handle.write("\\n".join(rows))
print(df.head(3).to_string())
"""


@pytest.fixture
def source(llm_server: ScriptedLLMServer, convert_env: Path) -> Path:
    return write_csv(convert_env / "顧客.csv", ROWS)


def test_codeact_sees_placeholders_and_writes_the_real_data(
    source: Path, llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor
) -> None:
    llm_server.add_chat(
        json={
            "action": "convert",
            "source": None,
            "target_format": "xml",
            "output_name": "〔人名1〕_顧客",
            "summary_ja": "顧客表を XML に変換します。",
        }
    )
    llm_server.add_chat(f"```python\n{XML_CODE}```", when=prompt_contains("You are CodeAct"))

    result = run_convert(
        f"担当 {OWNER} さんの顧客表を XML に変換してください",
        source=str(source),
        out_dir=source.parent / "out",
        executor=sandbox_executor,
    )

    assert result.status == "success", result.error
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.chat_requests()]
    assert len(bodies) == 2
    values = [*identifiers(ROWS), *names(ROWS), OWNER]
    assert leaked(bodies, values) == []
    assert "〔人名1〕" in bodies[0]
    assert "〔電話番号1〕" in bodies[1]
    assert "〔マイナンバー1〕" in bodies[1]
    (written,) = result.files
    assert written.name == f"{OWNER}_顧客.xml"
    xml = written.read_text(encoding="utf-8")
    assert str(ROWS[0]["携帯電話"]) in xml
    assert str(ROWS[9]["氏名"]) in xml
    assert result.masked["person"] >= 1
    assert result.run_log is not None
    log = Path(result.run_log).read_text(encoding="utf-8")
    assert '"code_exec"' in log
    assert leaked([log], values) == []
