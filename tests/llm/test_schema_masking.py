"""Tool and structured-output schemas are masked at the wire like messages (issue 37).

``ai.process_llm`` builds its reply schema from the plan's ``output_schema``, so a user's words
reach the request outside the messages: property names, descriptions, enum values. They go out
as placeholders and the reply comes back with the real values (keys too). Every schema the
product writes itself goes out as written (``test_every_product_schema_goes_out_as_written``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from keiri_agent.agents.analysis.models import CodeGenOutput, ReasonOutput, ReportOutput
from keiri_agent.agents.convert.models import ConvertJob
from keiri_agent.agents.helpdesk import tools as helpdesk_tools
from keiri_agent.agents.helpdesk.models import Plan, ReflectionResult
from keiri_agent.blocks.ai.output_schema import schema_to_model
from keiri_agent.blocks.registry import default_registry
from keiri_agent.design.schema import design_model, skeleton_model
from keiri_agent.design.wire import SCHEMA_VARIANTS, skeleton_schema, wiring_schema
from keiri_agent.llm import get_llm
from keiri_agent.llm.masking import mask_tool
from keiri_agent.privacy import PersonalKind, Vault, job_scope
from keiri_agent.privacy.schema import map_schema_texts
from tests.support import ScriptedLLMServer
from tests.support.personal import leaked

STAFF = ("石川 太郎", "山田 花子")
PHONE = "090-4412-7788"
OUTPUT_SCHEMA = {
    "担当者": {"enum": list(STAFF), "description": "請求書の担当者（石川 太郎 か 山田 花子）"},
    "石川さんの担当件数": "integer",
    "連絡先": {"type": "string", "description": f"不明なら代表 {PHONE}"},
    "金額": "integer",
}


def sent(server: ScriptedLLMServer) -> list[str]:
    return [json.dumps(body, ensure_ascii=False) for body in server.chat_requests()]


def _learnt(vault: Vault) -> dict[str, str]:
    """Placeholders for the plan's people, learnt before the call (the reply must use them)."""
    return {name: vault.learn(PersonalKind.PERSON, name) for name in (*STAFF, "石川")}


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_a_plans_output_schema_goes_out_masked_and_its_reply_comes_back_real(
    llm_server: ScriptedLLMServer, method: str
) -> None:
    model = schema_to_model(OUTPUT_SCHEMA)
    with job_scope() as vault:
        placeholder = _learnt(vault)
        key = f"{placeholder['石川']}さんの担当件数"
        llm_server.add_chat(
            json={"担当者": placeholder["石川 太郎"], key: 4, "連絡先": None, "金額": 12000}
        )
        reply = get_llm("process").structured(
            model, "請求書から担当者と件数を読んでください", method=method
        )  # type: ignore[arg-type]
    assert reply.model_dump(by_alias=True) == {
        "担当者": "石川 太郎",
        "石川さんの担当件数": 4,
        "連絡先": None,
        "金額": 12000,
    }
    (body,) = sent(llm_server)
    assert leaked([body], [*STAFF, "石川さん", PHONE]) == []
    (request,) = llm_server.chat_requests()
    if method == "json_schema":
        schema = request["response_format"]["json_schema"]["schema"]
    else:
        schema = request["tools"][0]["function"]["parameters"]
    assert key in schema["properties"]
    assert "金額" in schema["properties"]  # not a person's: as written
    enum = schema["properties"]["担当者"]["anyOf"][0]["enum"]
    assert enum == [placeholder["石川 太郎"], placeholder["山田 花子"]]


def test_a_bound_tools_user_texts_go_out_masked(llm_server: ScriptedLLMServer) -> None:
    def assign(who: str) -> str:
        return who

    tool = StructuredTool.from_function(
        func=assign,
        name="assign",
        description=f"担当を {STAFF[0]} か {STAFF[1]} に割り当てます（連絡先 {PHONE}）",
    )
    with job_scope() as vault:
        placeholder = _learnt(vault)
        llm_server.add_chat(
            tool_calls=[{"name": "assign", "arguments": {"who": placeholder["山田 花子"]}}]
        )
        reply = get_llm("reason").invoke("割り当ててください", tools=[tool])
    assert reply.tool_calls[0]["args"] == {"who": "山田 花子"}
    assert leaked(sent(llm_server), [*STAFF, PHONE]) == []
    assert llm_server.chat_requests()[0]["tools"][0]["function"]["name"] == "assign"


def test_a_schemas_grammar_is_kept_and_only_its_texts_are_mapped() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "title": "T",
        "description": "D",
        "properties": {
            "P": {"type": "string", "enum": ["E"], "default": "F", "format": "date"},
            "Q": {"type": "array", "items": {"$ref": "#/$defs/R"}, "examples": [{"K": "V"}]},
        },
        "required": ["P"],
        "$defs": {"R": {"type": "object", "properties": {"S": {"const": "C"}}}},
        "additionalProperties": False,
    }
    seen: list[str] = []

    def lower(text: str) -> str:
        seen.append(text)
        return text.lower()

    mapped = map_schema_texts(schema, lower)
    assert sorted(seen) == ["C", "D", "E", "F", "K", "P", "P", "Q", "S", "T", "V"]
    assert mapped["required"] == ["p"]
    assert mapped["properties"]["p"] == {
        "type": "string",
        "enum": ["e"],
        "default": "f",
        "format": "date",
    }
    assert mapped["properties"]["q"]["items"] == {"$ref": "#/$defs/R"}
    assert mapped["properties"]["q"]["examples"] == [{"k": "v"}]
    assert mapped["$defs"] == {"R": {"type": "object", "properties": {"s": {"const": "c"}}}}
    assert (mapped["type"], mapped["additionalProperties"]) == ("object", False)


def _product_schemas() -> list[tuple[str, dict[str, Any]]]:
    """Every schema the product writes itself and sends, as ``llm.repair`` and the client send
    them: the agents' reply models, plan generation's (both stages, both variants, every block:
    the parsing model's name and description with the hand-built parameters, as
    ``design.wiring.Asker`` sends them), the help desk's search tools."""
    registry = default_registry()
    ids = [spec.id for spec in registry.list()]
    models: list[type[BaseModel]] = [
        ConvertJob,
        Plan,
        ReflectionResult,
        CodeGenOutput,
        ReasonOutput,
        ReportOutput,
    ]
    schemas = [(m.__name__, convert_to_openai_tool(m)["function"]) for m in models]
    for variant in SCHEMA_VARIANTS:
        for model, wire in (
            (skeleton_model(ids), skeleton_schema(ids, variant=variant)),
            (design_model(registry, ids), wiring_schema(registry, ids, variant=variant)),
        ):
            tool = convert_to_openai_tool(model)["function"]
            schemas.append((f"{model.__name__}/{variant}", {**tool, "parameters": wire.schema}))
    for description in (
        helpdesk_tools.MANUAL_DESCRIPTION,
        helpdesk_tools.MANUAL_DESCRIPTION_SEMANTIC,
        helpdesk_tools.QA_DESCRIPTION_DENSE,
        helpdesk_tools.QA_DESCRIPTION_BM25,
    ):
        search = StructuredTool.from_function(
            func=lambda query, k=3: [],
            name=helpdesk_tools.SEARCH_MANUAL,
            description=description,
            args_schema=helpdesk_tools.SearchArgs,
        )
        schemas.append(("helpdesk", convert_to_openai_tool(search)))
    return schemas


def test_every_product_schema_goes_out_as_written() -> None:
    # a job that has learnt people's names, as a job reading a staff list would have
    vault = Vault()
    for name in (*STAFF, "佐藤 翔太", "長谷川 美咲"):
        vault.learn(PersonalKind.PERSON, name)
    changed = []
    for name, schema in _product_schemas():
        masked, counts = mask_tool(schema, vault)
        if masked != schema or counts:
            changed.append((name, counts))
    assert changed == []
