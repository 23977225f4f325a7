"""`keiri-agent plan generate --docs` with a reference document that names people (issue 37):
the skeleton and wiring prompts carry placeholders, the saved plan the real values."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from keiri_agent.cli import app
from tests.design.test_generate import INSTRUCTION, SKELETON, wiring
from tests.support.llm_server import ScriptedLLMServer
from tests.support.personal import leaked

runner = CliRunner()
NAME = "長谷川 美咲"
VALUES = [NAME, "090-4412-7788", "misaki.hasegawa@example.jp", "3958211", "123456789018"]
MEMO = (
    f"経費精算の担当: {NAME}（携帯 090-4412-7788、misaki.hasegawa@example.jp）。\n"
    "高額の経費は 5 万円以上（50,000円）とし、2025年4月1日から適用する。\n"
    "立替金の振込先は 普通 3958211、本人確認のマイナンバー 123456789018 は別途保管。\n"
)


def test_a_reference_document_reaches_the_model_masked_and_the_plan_keeps_the_values(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    memo = design_env / "経費規程メモ.txt"
    memo.write_text(MEMO, encoding="utf-8")
    llm_server.add_chat(json=SKELETON)
    plan = wiring()
    plan["description"] = "5 万円以上の経費を抜き出し、〔人名1〕さん（〔メール1〕）に渡す"
    llm_server.add_chat(json=plan)

    args = ["plan", "generate", "--instruction", INSTRUCTION, "--docs", str(memo), "--json"]
    result = runner.invoke(app, args)

    assert result.exit_code == 0, result.output
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.chat_requests()]
    assert len(bodies) == 2
    assert leaked(bodies, VALUES) == []
    assert "50,000円" in bodies[0]
    assert "2025年4月1日" in bodies[0]
    data = json.loads(result.stdout)
    saved = Path(data["saved"]).read_text(encoding="utf-8")
    assert f"{NAME}さん（misaki.hasegawa@example.jp）に渡す" in saved
    logs = [path.read_text(encoding="utf-8") for path in (design_env / "runs").rglob("*.jsonl")]
    assert logs
    assert leaked(logs, VALUES) == []
