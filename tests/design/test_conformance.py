"""Plan generation against the scripted server in provider-conformance mode.

The server refuses (HTTP 400, the provider's message) any tool schema the provider would
refuse (tests/support/conformance.py), so these tests fail the way production would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from keiri_agent.blocks.registry import default_registry
from keiri_agent.design.engine import generate_plan
from keiri_agent.design.schema import design_model
from keiri_agent.design.wire import wiring_schema
from keiri_agent.errors import LLMError
from keiri_agent.llm import get_llm
from tests.design.test_generate import INSTRUCTION, SKELETON, wiring
from tests.support.conformance import (
    Conformance,
    anthropic_strict_problems,
    openai_strict_problems,
)
from tests.support.llm_server import ScriptedLLMServer

SCHEMA_BUDGET = 16_000  # bytes of the stage-2 schema for a typical request
ALL_BLOCKS = [spec.id for spec in default_registry().list()]


def _script(server: ScriptedLLMServer) -> None:
    server.add_chat(json=SKELETON)
    server.add_chat(json=wiring())


def test_openai_strict_accepts_the_generated_schemas(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scripted server is a custom OPENAI_BASE_URL, where auto sends the tool variant
    # (tests/design/test_strict_schema.py); "on" sends what OpenAI's own endpoint gets.
    monkeypatch.setenv("KEIRI_LLM_STRICT_SCHEMA", "on")
    llm_server.conformance = Conformance("openai", max_schema_bytes=SCHEMA_BUDGET)
    _script(llm_server)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", (result.errors, llm_server.conformance.rejections)
    assert llm_server.conformance.rejections == []
    skeleton, wired = llm_server.chat_requests()
    for request in (skeleton, wired):
        function = request["tools"][0]["function"]
        assert function["strict"] is True
        assert openai_strict_problems(function["parameters"]) == []
    parameters = wired["tools"][0]["function"]["parameters"]
    size = len(json.dumps(parameters, ensure_ascii=False, separators=(",", ":")).encode())
    assert size <= SCHEMA_BUDGET
    # Every port has a JSON type, not just a description.
    ports = parameters["$defs"]["block_node"]["anyOf"][0]["properties"]["in"]["properties"]
    assert ports
    assert all("type" in port or "enum" in port for port in ports.values())


def test_openai_without_strict_gets_the_tool_variant(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_STRICT_SCHEMA", "off")
    llm_server.conformance = Conformance("openai", max_schema_bytes=SCHEMA_BUDGET)
    _script(llm_server)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", llm_server.conformance.rejections
    function = llm_server.chat_requests()[1]["tools"][0]["function"]
    assert "strict" not in function or function["strict"] is False
    # Optional inputs may be left out; objects are objects here, not JSON text.
    assert (
        "required"
        not in function["parameters"]["$defs"]["block_node"]["anyOf"][0]["properties"]["in"]
    )


def test_anthropic_tool_use_accepts_the_generated_schemas(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_PLAN", "anthropic:claude-sonnet-4-6")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", llm_server.root_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    llm_server.conformance = Conformance("anthropic", max_schema_bytes=SCHEMA_BUDGET)
    _script(llm_server)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", (result.errors, llm_server.conformance.rejections)
    requests = llm_server.message_requests()
    assert len(requests) == 2
    assert llm_server.chat_requests() == []
    schema = requests[1]["tools"][0]["input_schema"]
    assert schema["type"] == "object"
    assert "anyOf" not in schema
    assert llm_server.conformance.rejections == []


def test_the_old_pydantic_schema_is_refused_in_strict_mode(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    """The schema generation used to send (Pydantic's, all blocks) fails where production would."""
    llm_server.conformance = Conformance("openai")
    old = design_model(default_registry(), ALL_BLOCKS)
    parameters = convert_to_openai_tool(old, strict=True)["function"]["parameters"]
    problems = openai_strict_problems(parameters)
    assert any("'default' is not permitted" in p for p in problems)
    assert any("must have a 'type' key" in p for p in problems)  # typeless ports
    assert len(json.dumps(parameters, ensure_ascii=False).encode()) > 5 * SCHEMA_BUDGET

    llm = get_llm("plan")
    with pytest.raises(LLMError) as refused:
        llm.structured(old, [("human", INSTRUCTION)], method="function_calling", strict=True)
    assert refused.value.details["failure"] == "bad_request"
    assert "is not permitted" in refused.value.details["provider_message"]
    assert len(llm_server.conformance.rejections) == 1
    # The schema built for the same blocks is accepted, and is a fraction of the size.
    new = wiring_schema(default_registry(), ALL_BLOCKS, variant="strict")
    assert openai_strict_problems(new.schema) == []
    assert new.size < len(json.dumps(parameters, ensure_ascii=False).encode()) / 3


# --- the checks themselves can fail -----------------------------------------------------------


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = _closed({"x": schema})
    return schema


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, "additionalProperties"),
        ({**_closed({"a": {"type": "string"}}), "required": []}, "Missing 'a'"),
        (_closed({"a": {"type": "string", "default": "x"}}), "'default' is not permitted"),
        (_closed({"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}), "'oneOf' is not permitted"),
        (_closed({"a": {"type": "string", "minLength": 1}}), "'minLength' is not permitted"),
        (_closed({"a": {"description": "no type"}}), "must have a 'type' key"),
        (_nested(11), "levels of nesting exceeds limit of 10"),
        (_closed({"a": {"type": "string", "enum": [f"v{i}" for i in range(1001)]}}), "enum values exceeds"),
        (
            _closed({"a": {"anyOf": [_closed({"k": {"type": "string"}}), _closed({"k": {"type": "string"}})]}}),
            "identical first keys",
        ),
    ],
)  # fmt: skip
def test_openai_strict_rules_refuse(schema: dict[str, Any], expected: str) -> None:
    problems = openai_strict_problems(schema)
    assert any(expected in p for p in problems), problems


def test_openai_strict_accepts_ten_levels() -> None:
    assert openai_strict_problems(_nested(10)) == []


def test_anthropic_refuses_top_level_unions_bad_names_and_strict_constraints() -> None:
    conformance = Conformance("anthropic")
    union = {"tools": [{"name": "plan", "input_schema": {"anyOf": [{"type": "object"}]}}]}
    assert "at the top level" in (conformance.check("/v1/messages", union) or "")
    bad_name = {"tools": [{"name": "plan.v1", "input_schema": {"type": "object"}}]}
    assert "should match pattern" in (conformance.check("/v1/messages", bad_name) or "")
    loose = {
        "tools": [
            {"name": "plan", "strict": True, "input_schema": {"type": "object", "properties": {}}}
        ]
    }
    assert "additionalProperties" in (conformance.check("/v1/messages", loose) or "")
    assert anthropic_strict_problems(_closed({"n": {"type": "integer", "minimum": 0}}))
    assert len(conformance.rejections) == 3


def test_a_schema_over_the_size_budget_is_refused() -> None:
    conformance = Conformance("openai", max_schema_bytes=1000)
    body = {"tools": [{"type": "function", "function": {"name": "x", "parameters": _closed(
        {f"p{i}": {"type": "string"} for i in range(100)}
    )}}]}  # fmt: skip
    assert "over the limit of 1000" in (conformance.check("/v1/chat/completions", body) or "")
