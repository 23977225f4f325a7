"""Which schema plan generation sends to which endpoint (``KEIRI_LLM_STRICT_SCHEMA``).

``auto`` sends OpenAI's strict structured outputs only where they are enforced: OpenAI's own API
(no ``OPENAI_BASE_URL``, or one on api.openai.com) and Azure OpenAI. Any other
``OPENAI_BASE_URL`` (vLLM, Ollama, llama.cpp...) and Anthropic get the tool-use schema, with no
``strict`` field anywhere in the request; ``on`` / ``off`` force the choice. Every case reads the
request bodies the scripted server received (both stages: skeleton and wiring).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from keiri_agent.config import Settings, load_settings
from keiri_agent.design.engine import generate_plan
from keiri_agent.llm import LLMClient
from tests.design.test_generate import INSTRUCTION, SKELETON, wiring
from tests.support.conformance import Conformance, openai_strict_problems
from tests.support.forward import forwarding_client
from tests.support.llm_server import ScriptedLLMServer

OPENAI_HOST = "api.openai.com"


def _script(server: ScriptedLLMServer) -> None:
    server.add_chat(json=SKELETON)
    server.add_chat(json=wiring())


def _assert_strict(requests: list[dict[str, Any]]) -> None:
    assert len(requests) == 2  # skeleton, wiring
    for request in requests:
        function = request["tools"][0]["function"]
        assert function["strict"] is True
        assert openai_strict_problems(function["parameters"]) == []


def _assert_tool_use(requests: list[dict[str, Any]]) -> None:
    """The tool variant, and nothing a non-OpenAI server would have to ignore or refuse."""
    assert len(requests) == 2
    for request in requests:
        assert "strict" not in json.dumps(
            {k: v for k, v in request.items() if k != "messages"}, ensure_ascii=False
        )
    wired = requests[1]["tools"][0]["function"]["parameters"]
    ports = wired["$defs"]["block_node"]["anyOf"][0]["properties"]["in"]
    assert "required" not in ports  # optional inputs may be left out: not the strict variant


def _own_endpoint_client(
    server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, base_url: str | None
) -> tuple[LLMClient, Settings]:
    """A plan client whose settings name OpenAI's own endpoint; the model's HTTP client
    delivers its requests (addressed to api.openai.com) to the scripted server."""
    if base_url is None:
        monkeypatch.delenv("OPENAI_BASE_URL")
    else:
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    settings = load_settings()
    model = ChatOpenAI(
        model="gpt-4o-mini",
        api_key=SecretStr("sk-test"),
        base_url=base_url,
        max_retries=0,
        use_responses_api=False,
        http_client=forwarding_client(server),
    )
    return LLMClient("plan", model=model, settings=settings), settings


def _hosts(server: ScriptedLLMServer) -> set[str]:
    return {request.headers.get("host", "") for request in server.requests}


@pytest.mark.parametrize(
    "base_url", [None, "https://api.openai.com/v1"], ids=["no-base-url", "api.openai.com"]
)
def test_openai_own_endpoint_gets_the_strict_schema(
    design_env: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    base_url: str | None,
) -> None:
    llm_server.conformance = Conformance("openai")
    _script(llm_server)
    llm, settings = _own_endpoint_client(llm_server, monkeypatch, base_url)
    assert not settings.openai_base_url_is_custom()

    result = generate_plan(INSTRUCTION, llm=llm, settings=settings)

    assert result.status == "ok", (result.errors, llm_server.conformance.rejections)
    assert _hosts(llm_server) == {OPENAI_HOST}
    _assert_strict(llm_server.chat_requests())


def test_a_custom_base_url_gets_the_tool_schema_without_strict(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    """OPENAI_BASE_URL at another server (here the scripted one, as a user points it at vLLM or
    Ollama): the strict schema was never tried there."""
    _script(llm_server)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    assert load_settings().openai_base_url_is_custom()
    _assert_tool_use(llm_server.chat_requests())


def test_strict_on_forces_the_strict_schema_on_a_custom_base_url(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_STRICT_SCHEMA", "on")
    llm_server.conformance = Conformance("openai")
    _script(llm_server)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", (result.errors, llm_server.conformance.rejections)
    _assert_strict(llm_server.chat_requests())


def test_strict_off_sends_the_tool_schema_to_openai_itself(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_STRICT_SCHEMA", "off")
    _script(llm_server)
    llm, settings = _own_endpoint_client(llm_server, monkeypatch, None)

    result = generate_plan(INSTRUCTION, llm=llm, settings=settings)

    assert result.status == "ok", result.errors
    assert _hosts(llm_server) == {OPENAI_HOST}
    _assert_tool_use(llm_server.chat_requests())


def test_azure_gets_the_strict_schema(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_PLAN", "azure:keiri-gpt4o")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-test")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", llm_server.root_url)
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    llm_server.conformance = Conformance("openai")
    _script(llm_server)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", (result.errors, llm_server.conformance.rejections)
    paths = {request.path for request in llm_server.requests}
    assert paths == {"/openai/deployments/keiri-gpt4o/chat/completions"}
    _assert_strict(llm_server.chat_requests())


def test_anthropic_gets_the_tool_schema_without_strict(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_PLAN", "anthropic:claude-sonnet-4-6")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", llm_server.root_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    _script(llm_server)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    requests = llm_server.message_requests()
    assert len(requests) == 2
    for request in requests:
        assert all("strict" not in tool for tool in request["tools"])
    schema = requests[1]["tools"][0]["input_schema"]
    assert "required" not in schema["$defs"]["block_node"]["anyOf"][0]["properties"]["in"]
