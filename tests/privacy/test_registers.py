"""The fifth generator (``tests.privacy.registers``) through every LLM entry point a test can
drive cheaply, as a security review asks "what personal data leaves for the LLM?" (the help
desk's question: ``tests/privacy/test_helpdesk.py``, which builds the index once).

Each document goes through the product's real request path (the OpenAI-compatible wire,
recorded by the scripted server): alone through ``get_llm`` in its own job; as evidence files
(CSV, Excel, text) of one ``ai.process_llm`` node; as the sheets of a workbook ``analyze`` previews
and prints; as a question to the help desk; as reference documents of ``plan generate``. No
identifier may be in any request body, and every number the README keeps visible (invoice
numbers, 法人番号, T-numbers, amounts, dates, product codes) must be there unchanged.

On the code before session 15 (seed 15, 40 documents a shape, 320 documents, 1,626
identifiers): 64 documents sent 171 identifiers (健康保険証の記号・番号 and 被保険者番号, 運転免許証の
番号 in any form and in its column, ``+81 (0)90-...``), and 33 of the 40 tables with no personal
column lost 113 of their numbers to masking (phone-shaped 品番, a 伝票番号 with a マイナンバー's
check digit, a 13-digit JAN code or 法人番号 read as a card); now none. The cases each fix is for:
``test_backoffice.FOUND`` and ``test_what_the_readme_keeps_visible_stays``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import Workbook
from typer.testing import CliRunner

from keiri_agent.cli import app
from tests.design.test_generate import INSTRUCTION, SKELETON, wiring
from tests.privacy.backoffice import Doc, leaks
from tests.privacy.registers import SHAPES, make_registers
from tests.privacy.test_backoffice import assert_reaches_the_model_masked
from tests.privacy.test_plan_run import PLAN
from tests.support import ScriptedLLMServer

runner = CliRunner()
SEED = 15
PER_SHAPE = 40
DOCS = make_registers(SEED, PER_SHAPE)
TEXTS = [d for d in DOCS if not d.rows]
TABLES = [d for d in DOCS if d.rows]


def sent_bodies(server: ScriptedLLMServer) -> str:
    return "\n".join(json.dumps(b, ensure_ascii=False) for b in server.chat_requests())


def leaks_and_losses(docs: list[Doc], sent: str) -> tuple[dict[str, list[str]], list[str]]:
    leaked = {d.text: found for d in docs if (found := leaks(d, sent))}
    lost = [v for d in docs for v in d.kept if v not in sent]
    return leaked, lost


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_generated_identifier_reaches_the_model(
    llm_server: ScriptedLLMServer, shape: str
) -> None:
    docs = [d for d in DOCS if d.shape == shape]
    assert len(docs) >= PER_SHAPE
    assert_reaches_the_model_masked(llm_server, list(docs))


def test_the_generator_writes_what_a_review_lists() -> None:
    assert len(DOCS) == 320
    assert sum(len(set(d.secrets)) for d in DOCS) > 1500
    assert sum(len(d.kept) for d in DOCS) > 2000


def _workbook(path: Path, docs: list[Doc]) -> Path:
    book = Workbook()
    first = book.active
    assert first is not None
    book.remove(first)
    for index, doc in enumerate(docs):
        sheet = book.create_sheet(f"表{index + 1}")
        for row in doc.rows:
            sheet.append(row)
    book.save(path)
    return path


def test_evidence_files_of_a_plan_node_reach_the_model_masked(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    docs = [*TEXTS[::24], *TABLES[::8]]
    paths = []
    for index, doc in enumerate(docs):
        if doc.rows and index % 2:
            paths.append(_workbook(tmp_path / f"台帳{index}.xlsx", [doc]))
            cells = {cell for row in doc.rows for cell in row}
            doc = Doc(doc.shape, doc.text, doc.secrets, [v for v in doc.kept if v in cells])
            docs[index] = doc  # a workbook holds the rows only
        else:
            path = tmp_path / f"資料{index}.{'csv' if doc.rows else 'txt'}"
            path.write_text(doc.text, encoding="utf-8")
            paths.append(path)
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(path=json.dumps([str(p) for p in paths])), encoding="utf-8")
    llm_server.add_chat(
        json={"first_name": "〔人名1〕", "first_phone": "〔電話番号1〕", "total": 1}
    )

    result = runner.invoke(app, ["plan", "run", str(plan), "--json"])

    assert result.exit_code == 0, result.output
    leaked, lost = leaks_and_losses(docs, sent_bodies(llm_server))
    assert leaked == {}
    assert lost == []


def test_the_analysis_preview_and_printed_rows_reach_the_model_masked(
    llm_server: ScriptedLLMServer, public_dir: Path
) -> None:
    cards = [d for d in TABLES if {"免許証番号", "保険証番号"} & set(d.rows[0])]
    docs = [*cards[:4], *[d for d in TABLES if d.shape == "business"][:2]]
    source = _workbook(public_dir / "台帳.xlsx", docs)
    code = "for name, frame in dfs.items():\n    print(name)\n    print(frame.to_string())\n"
    llm_server.add_chat(json={"next_action": "act", "instruction": "一覧", "rationale": "r"})
    llm_server.add_chat(json={"code": code, "expected_outputs": []})
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "十分"})
    llm_server.add_chat(
        json={"title": "台帳", "conclusion": "確認しました。", "evidence": ["4 枚の表"]}
        | {"sections": [], "suggestions": []}
    )
    args = ["analyze", str(source), "台帳の中身を一覧にして", "--json"]
    result = runner.invoke(app, [*args, "--workspace-root", str(public_dir / "ws")])

    assert result.exit_code == 0, result.output
    sent = sent_bodies(llm_server)
    assert len(llm_server.chat_requests()) == 4
    leaked, _ = leaks_and_losses(docs, sent)
    assert leaked == {}
    assert json.loads(result.stdout)["execution_results"][0]["stdout"]  # the rows were printed


def test_reference_documents_of_plan_generation_send_no_identifier(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    docs = [*TEXTS[5::40], *TABLES[3::40]]
    paths = []
    for index, doc in enumerate(docs):
        path = design_env / f"参考{index}.{'csv' if doc.rows else 'txt'}"
        path.write_text(doc.text, encoding="utf-8")
        paths.append(str(path))
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())

    args = ["plan", "generate", "--instruction", INSTRUCTION, "--docs", ",".join(paths), "--json"]
    result = runner.invoke(app, args)

    assert result.exit_code == 0, result.output
    leaked, _ = leaks_and_losses(docs, sent_bodies(llm_server))
    assert leaked == {}
