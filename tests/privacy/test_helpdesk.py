"""`keiri-agent helpdesk ask` with a question that carries its asker's personal data (issue 37).

The plan, subtask and answer prompts must not carry the name, the マイナンバー, the account
number or the phone number; the answer the user reads shows them where the model wrote the
placeholders; the run log holds none of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import keiri_agent.cli.helpdesk_ask  # noqa: F401  (registers `helpdesk ask`)
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.agents.helpdesk.models import citation
from keiri_agent.cli import app
from tests.privacy.registers import make_registers
from tests.privacy.test_registers import leaks_and_losses, sent_bodies
from tests.support.helpdesk import HelpDeskScript, build_example_index, sample_embedding_cache
from tests.support.personal import leaked

runner = CliRunner()
NAME = "長谷川 美咲"
MY_NUMBER = "1234 5678 9018"
ACCOUNT = "3958211"
PHONE = "090-4412-7788"
QUESTION = (
    f"{NAME}です。マイナンバー（{MY_NUMBER}）の登録と、振込口座（普通 {ACCOUNT}）の変更方法を"
    f"教えてください。連絡先は{PHONE}です。"
)
TASK = "振込口座の変更手順を調べる"
QUERY = "振込口座 変更"


@pytest.fixture(scope="module")
def helpdesk_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example_index(
        tmp_path_factory.mktemp("helpdesk") / "index", sample_embedding_cache(tmp_path_factory)
    )


def test_the_question_personal_data_stays_out_of_every_prompt(
    helpdesk_script: HelpDeskScript, helpdesk_index_dir: Path
) -> None:
    with KnowledgeBase.open(helpdesk_index_dir) as kb:
        cite = citation(kb.search_manual(QUERY, 3)[0])
    script = helpdesk_script
    script.plan(TASK)
    script.subtask(
        TASK, QUERY, f"〔人名1〕様の口座（普通 〔口座番号1〕）は設定画面で変更します{cite}。"
    )
    script.final(
        f"〔人名1〕様、振込口座（普通 〔口座番号1〕）の変更は設定画面から行え、"
        f"ご連絡先 〔電話番号1〕 に確認のお電話を差し上げます{cite}。"
    )

    result = runner.invoke(
        app, ["helpdesk", "ask", QUESTION, "--index", str(helpdesk_index_dir), "--json"]
    )

    assert result.exit_code == 0, result.output
    bodies = [json.dumps(body, ensure_ascii=False) for body in script.server.chat_requests()]
    assert len(bodies) == 5  # plan, tool choice, answer, reflection, final answer
    assert leaked(bodies, [NAME, MY_NUMBER, ACCOUNT, PHONE]) == []
    assert "〔人名1〕です。マイナンバー（〔マイナンバー1〕）" in bodies[0]
    data = json.loads(result.stdout)
    assert data["answer"].startswith(f"{NAME}様、振込口座（普通 {ACCOUNT}）の変更は")
    assert PHONE in data["answer"]
    assert data["subtasks"][0]["subtask_answer"].startswith(f"{NAME}様の口座（普通 {ACCOUNT}）")
    assert {"person", "my_number", "account", "phone"} <= set(data["usage"]["masked"])

    log = Path(data["run_log"]).read_text(encoding="utf-8")
    assert '"masked": {"person": 1' in log  # each call's counts, never the values
    assert leaked([log], [NAME, MY_NUMBER, ACCOUNT, PHONE]) == []


def test_a_help_desk_question_carrying_identifiers_sends_none(
    helpdesk_script: HelpDeskScript, helpdesk_index_dir: Path
) -> None:
    """Session 15: a question carrying a 人事 form, bank details and phone numbers as the
    registers generator writes them (健康保険証の記号・番号 and 運転免許証の番号 were sent before)."""
    docs = make_registers(15, 1, ["hr_form", "bank", "phones"])
    question = "次の内容で登録を変更したいです。手順を教えてください。\n" + "\n".join(
        d.text for d in docs
    )
    with KnowledgeBase.open(helpdesk_index_dir) as kb:
        cite = citation(kb.search_manual("振込口座 変更", 3)[0])
    task = "登録内容の変更手順を調べる"
    helpdesk_script.plan(task)
    helpdesk_script.subtask(task, "振込口座 変更", f"設定画面で変更します{cite}。")
    helpdesk_script.final(f"設定画面から変更できます{cite}。")

    args = ["helpdesk", "ask", question, "--index", str(helpdesk_index_dir), "--json"]
    result = runner.invoke(app, args)

    assert result.exit_code == 0, result.output
    leaked, _ = leaks_and_losses(docs, sent_bodies(helpdesk_script.server))
    assert leaked == {}
