"""Plan generation's schema notices in Japanese: what the design log, the result's errors and the
template checks say when a reply or a template does not fit its schema.

Each names the field as a person reads it, what was wrong and what came; the validator's English
(``Input should be ...``) appears only in what goes back to the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.design.compose import compose
from keiri_agent.design.engine import generate_plan
from keiri_agent.design.models import DesignEngineOptions
from keiri_agent.design.templates import TemplateLibrary, TemplateSpec
from keiri_agent.errors import BlockError
from tests.design.test_generate import INSTRUCTION, SKELETON, events_of, last_human, wiring
from tests.support.llm_server import ScriptedLLMServer

ENGLISH = ("Input should", "Field required", "Extra inputs", "should be a valid")
# The field by its labels (the schema's titles and descriptions), never the program's path.
WRONG_ID = "ノードの 1 番目のノード ID: 文字列ではありません（受け取った値: 123）"


def _wrong_id() -> dict[str, object]:
    bad = wiring()
    bad["graph"][0]["id"] = 123
    return bad


def _english_free(text: str) -> None:
    assert not any(words in text for words in ENGLISH), text


def test_a_repair_round_of_stage_two_logs_a_japanese_notice(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=_wrong_id())
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    notes = [e["msg"] for e in events_of(result) if e["event"] == "log"]
    assert len(notes) == 1
    assert WRONG_ID in notes[0]
    assert "excel.read_data" not in notes[0]  # the union tag is not a field
    _english_free(notes[0])
    # The model is told the same and the exact place with the validator's words.
    repair = last_human(llm_server.chat_requests()[2])
    assert WRONG_ID in repair
    assert "[graph.0.id: string_type: Input should be a valid string]" in repair


def test_a_reply_that_never_fits_fails_with_a_japanese_error(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_REPAIR_ROUNDS", "0")
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=_wrong_id())

    result = generate_plan(INSTRUCTION, options=DesignEngineOptions(max_attempts=1))

    assert result.status == "failed"
    (attempt,) = result.attempts
    assert attempt.output_error is not None
    assert WRONG_ID in attempt.output_error
    _english_free(attempt.output_error)
    mismatch = [e for e in result.errors if e.code == "OUTPUT_SCHEMA_MISMATCH"]
    assert mismatch
    assert WRONG_ID in mismatch[0].message


def test_a_free_form_reply_that_does_not_fit_is_a_japanese_error(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_error(400, "This model does not support tools")
    llm_server.add_chat("```json\n" + json.dumps(SKELETON, ensure_ascii=False) + "\n```")
    bad = wiring()
    bad["graph"][0]["in"]["sheet_name"] = ["シート1"]  # not a port of excel.read_data
    llm_server.add_chat("```json\n" + json.dumps(bad, ensure_ascii=False) + "\n```")

    result = generate_plan(INSTRUCTION, options=DesignEngineOptions(max_attempts=1))

    assert result.status == "failed"
    (attempt,) = result.attempts
    assert attempt.mode == "free_form"
    assert attempt.output_error is not None
    assert (
        "ノードの 1 番目の入力ポート: 定義にない項目です（削除してください）（受け取った値: 一覧 1 件）"
        in attempt.output_error
    )
    assert "sheet_name" not in attempt.output_error
    _english_free(attempt.output_error)


def test_a_template_of_the_wrong_shape_is_a_japanese_error(tmp_path: Path) -> None:
    folder = tmp_path / "check"
    folder.mkdir()
    (folder / "broken.yaml").write_text(
        "id: broken\ntitle: 壊れたテンプレート\ngraph_snippet:\n"
        "  - id: pick\n    block: table.filter\n    in: 表\n",
        encoding="utf-8",
    )
    with pytest.raises(BlockError) as err:
        TemplateLibrary.load(tmp_path, registry=BlockRegistry())
    message = err.value.message
    assert (
        'graph_snippet[0].in: オブジェクト（{...}）ではありません（受け取った値: "表"）' in message
    )
    _english_free(message)


def test_a_composed_plan_of_the_wrong_shape_is_a_japanese_conflict() -> None:
    # A template made in code (not through TemplateLibrary.load's checks) with a node whose
    # `in` is not a mapping.
    spec = TemplateSpec.model_validate(
        {
            "id": "broken",
            "title": "壊れたテンプレート",
            "category": "check",
            "graph_snippet": [{"id": "pick", "block": "table.filter", "in": "表"}],
        }
    )
    result = compose([spec], plan_id="generated/test")
    assert result.plan is None
    (conflict,) = result.conflicts
    assert conflict.kind == "invalid_plan"
    assert conflict.message == (
        "合成した Plan が DSL の形になりません: "
        'graph の 1 番目の in: オブジェクト（{...}）ではありません（受け取った値: "表"）'
    )
