"""Tests of the scripted LLM server, driven through the real ``openai`` and LangChain clients.

The rest of the suite trusts this double to behave like an OpenAI-compatible endpoint,
so every test here goes through an unmodified client and asserts what that client sees.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import anthropic
import openai
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import BaseModel, SecretStr

from tests.support import ScriptedLLMServer, prompt_contains

MODEL = "scripted-model"


class Invoice(BaseModel):
    vendor: str
    amount: int


@tool
def search(query: str) -> str:
    """Search the ledger."""
    return query


def sdk(server: ScriptedLLMServer, **kwargs: Any) -> openai.OpenAI:
    options: dict[str, Any] = {"base_url": server.url, "api_key": "sk-test", "max_retries": 0}
    return openai.OpenAI(**{**options, **kwargs})


def chat(**kwargs: Any) -> ChatOpenAI:
    """A ChatOpenAI configured only through the environment set by the fixture."""
    return ChatOpenAI(model=MODEL, max_retries=0, **kwargs)


def merge(chunks: Sequence[BaseMessage]) -> AIMessageChunk:
    """Aggregate streamed chunks the way LangChain does for a final message."""
    ai_chunks = [chunk for chunk in chunks if isinstance(chunk, AIMessageChunk)]
    assert len(ai_chunks) == len(chunks)
    return add_ai_message_chunks(ai_chunks[0], *ai_chunks[1:])


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_plain_chat_through_sdk_reports_message_usage_and_echoes_model(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat("こんにちは、経理です。")

    response = sdk(llm_server).chat.completions.create(
        model="my-local-model", messages=[{"role": "user", "content": "Hello there, who are you?"}]
    )

    assert response.choices[0].message.content == "こんにちは、経理です。"
    assert response.choices[0].finish_reason == "stop"
    assert response.model == "my-local-model"
    assert response.id.startswith("chatcmpl-")
    assert response.usage is not None
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (6, 2)
    assert response.usage.total_tokens == 8
    assert llm_server.pending() == 0


def test_chat_openai_reaches_server_through_environment(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("pong", usage=(12, 3))

    message = chat().invoke("ping")

    assert isinstance(message, AIMessage)
    assert message.content == "pong"
    assert message.usage_metadata is not None
    assert message.usage_metadata["input_tokens"] == 12
    assert message.usage_metadata["output_tokens"] == 3
    request = llm_server.requests[-1]
    assert request.headers["authorization"] == "Bearer sk-test-scripted-0000"
    assert request.body["messages"] == [{"role": "user", "content": "ping"}]


def test_structured_output_json_schema_returns_validated_model(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(json={"vendor": "東京電力", "amount": 12800})

    result = chat().with_structured_output(Invoice, method="json_schema").invoke("請求書を読んで")

    assert result == Invoice(vendor="東京電力", amount=12800)
    response_format = llm_server.chat_requests()[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Invoice"


def test_structured_output_function_calling_returns_validated_model(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(json={"vendor": "NTT", "amount": 5500})

    result = chat().with_structured_output(Invoice, method="function_calling").invoke("読んで")

    assert result == Invoice(vendor="NTT", amount=5500)
    body = llm_server.chat_requests()[0]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "Invoice"}}
    assert "response_format" not in body


# langchain_openai model_dump()s the SDK's parsed stream snapshots; pydantic then warns that
# `parsed` holds a model where the generic type says None. Same against the real API.
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
def test_structured_output_json_schema_stream_yields_model(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(json={"vendor": "ヤマト運輸", "amount": 980})

    structured = chat().with_structured_output(Invoice, method="json_schema")
    results = list(structured.stream("読んで"))

    assert results[-1] == Invoice(vendor="ヤマト運輸", amount=980)


def test_bind_tools_returns_explicit_tool_calls_and_accepts_tool_results(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(tool_calls=[{"name": "search", "arguments": {"query": "交通費"}}])
    llm_server.add_chat(
        "交通費は3件です。", when=lambda body: body["messages"][-1]["role"] == "tool"
    )
    llm = chat().bind_tools([search])

    first = llm.invoke([HumanMessage("交通費を探して")])
    assert isinstance(first, AIMessage)
    assert first.tool_calls[0]["name"] == "search"
    assert first.tool_calls[0]["args"] == {"query": "交通費"}
    call_id = first.tool_calls[0]["id"]
    assert call_id is not None
    assert call_id.startswith("call_")
    assert first.response_metadata["finish_reason"] == "tool_calls"

    tool_result = ToolMessage("3 rows", tool_call_id=call_id)
    second = llm.invoke([HumanMessage("交通費を探して"), first, tool_result])

    assert second.content == "交通費は3件です。"
    assert llm_server.chat_requests()[0]["tools"][0]["function"]["name"] == "search"
    assert llm_server.pending() == 0


def test_streaming_splits_content_and_reports_usage(llm_server: ScriptedLLMServer) -> None:
    text = "仕訳を作成しました。借方は旅費交通費、貸方は現金です。"
    llm_server.add_chat(text, usage=(40, 12))

    chunks = list(chat(stream_usage=True).stream("仕訳して"))

    pieces = [chunk.content for chunk in chunks if chunk.content]
    assert len(pieces) >= 2
    assert "".join(str(piece) for piece in pieces) == text
    total = merge(chunks)
    assert total.usage_metadata is not None
    usage = {key: total.usage_metadata[key] for key in ("input_tokens", "output_tokens")}
    assert usage == {"input_tokens": 40, "output_tokens": 12}
    assert total.usage_metadata["total_tokens"] == 52
    assert llm_server.chat_requests()[0]["stream_options"] == {"include_usage": True}


def test_async_invoke_and_stream(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("非同期の応答です。")
    llm_server.add_chat("非同期ストリームの応答です。")
    llm = chat(stream_usage=True)

    async def run() -> tuple[str, list[str]]:
        message = await llm.ainvoke("a")
        pieces = [str(chunk.content) async for chunk in llm.astream("b")]
        return str(message.content), pieces

    content, pieces = asyncio.run(run())

    assert content == "非同期の応答です。"
    assert "".join(pieces) == "非同期ストリームの応答です。"
    assert len([piece for piece in pieces if piece]) >= 2


def test_streaming_tool_calls_accumulate(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(tool_calls=[{"name": "search", "arguments": {"query": "会議費 2024年"}}])

    chunks = list(chat().bind_tools([search]).stream("探して"))
    total = merge(chunks)

    assert [call["args"] for call in total.tool_calls] == [{"query": "会議費 2024年"}]


def test_errors_are_seen_by_sdk_with_status_then_success(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(429, "Rate limit reached", retry_after=0.01)
    llm_server.add_error(500, "The server had an error")
    llm_server.add_chat("ok")
    client = sdk(llm_server)
    messages: Any = [{"role": "user", "content": "hi"}]

    with pytest.raises(openai.RateLimitError) as rate_limited:
        client.chat.completions.create(model=MODEL, messages=messages)
    assert rate_limited.value.status_code == 429
    assert rate_limited.value.response.headers["retry-after"] == "0.01"
    assert rate_limited.value.code == "rate_limit_exceeded"
    assert "Rate limit reached" in rate_limited.value.message
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model=MODEL, messages=messages)
    assert failed.value.status_code == 500
    assert failed.value.type == "server_error"
    response = client.chat.completions.create(model=MODEL, messages=messages)

    assert response.choices[0].message.content == "ok"
    assert len(llm_server.requests) == 3


def test_sdk_retries_honour_retry_after(llm_server: ScriptedLLMServer) -> None:
    # The SDK's own backoff before a first retry is at most 0.5 s; waiting at least the
    # server's 1.5 s shows the header was read (a lower bound holds on a loaded machine too).
    llm_server.add_error(429, retry_after=1.5, times=1)
    llm_server.add_chat("recovered")

    started = time.monotonic()
    response = sdk(llm_server, max_retries=2).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )

    assert response.choices[0].message.content == "recovered"
    assert len(llm_server.requests) == 2
    assert time.monotonic() - started >= 1.5


def test_when_predicates_route_parallel_requests(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("answer for A", when=prompt_contains("question A"), delay=0.2)
    llm_server.add_chat("answer for B", when=prompt_contains("question B"))
    client = sdk(llm_server)
    answers: dict[str, str | None] = {}

    def ask(label: str) -> None:
        response = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": f"question {label}"}]
        )
        answers[label] = response.choices[0].message.content

    threads = [threading.Thread(target=ask, args=(label,)) for label in ("A", "B")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)

    assert answers == {"A": "answer for A", "B": "answer for B"}
    assert llm_server.pending() == 0


def test_unmatched_request_fails_loudly_without_retries(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("only for tax", when=prompt_contains("消費税"))

    with pytest.raises(openai.InternalServerError) as failed:
        sdk(llm_server, max_retries=2).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "源泉徴収について教えて"}]
        )

    assert failed.value.status_code == 500
    assert "no scripted response" in failed.value.message
    assert "源泉徴収について教えて" in failed.value.message
    assert len(llm_server.requests) == 1
    assert llm_server.pending() == 1


def test_repeat_step_is_reused_and_not_pending(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("again", repeat=True)
    client = sdk(llm_server)

    contents = [
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x"}])
        .choices[0]
        .message.content
        for _ in range(3)
    ]

    assert contents == ["again"] * 3
    assert llm_server.pending() == 0


def test_embeddings_are_deterministic_and_similarity_meaningful(
    llm_server: ScriptedLLMServer,
) -> None:
    texts = ["東京への出張の交通費", "東京出張の交通費精算", "サーバーの月額利用料"]

    vectors = OpenAIEmbeddings(
        model="text-embedding-3-small", check_embedding_ctx_length=False
    ).embed_documents(texts)
    raw = sdk(llm_server).embeddings.create(model="text-embedding-3-small", input=texts)
    floats = sdk(llm_server).embeddings.create(
        model="text-embedding-3-small", input=texts[0], encoding_format="float"
    )

    assert [len(vector) for vector in vectors] == [llm_server.embedding_dim] * 3
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]) + 0.3
    for item, vector in zip(raw.data, vectors, strict=True):
        assert item.embedding == pytest.approx(vector, abs=1e-6)
    assert floats.data[0].embedding == pytest.approx(vectors[0], abs=1e-6)
    # The SDK asks for base64 unless told otherwise and decodes it transparently.
    assert [body.get("encoding_format") for body in llm_server.embedding_requests()] == [
        "base64",
        "base64",
        "float",
    ]


def test_scripted_embeddings_and_errors_take_precedence(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(503, "overloaded", endpoint="embeddings")
    llm_server.add_embedding([[1.0, 0.0, 0.0]])
    client = sdk(llm_server)

    with pytest.raises(openai.InternalServerError) as failed:
        client.embeddings.create(model="e", input="a")
    response = client.embeddings.create(model="e", input=["a", "b"])

    assert failed.value.status_code == 503
    assert [item.embedding for item in response.data] == [[1.0, 0.0, 0.0]] * 2
    assert llm_server.pending("embeddings") == 0


def test_delay_triggers_client_timeout_without_blocking_server(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat("too late", delay=60.0, when=prompt_contains("slow"))
    llm_server.add_chat("fast", when=prompt_contains("quick"))
    client = sdk(llm_server, timeout=3.0)

    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "slow"}])
    # the quick answer gets a generous wait: 3 s could pass on a loaded machine
    response = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "quick"}], timeout=40.0
    )

    assert response.choices[0].message.content == "fast"
    assert time.monotonic() - started < 50.0  # before the 60 s delay: the server was not blocked


def test_stop_is_fast_with_pending_delay_and_idle_connections() -> None:
    server = ScriptedLLMServer().start()
    server.add_chat("warm-up", when=prompt_contains("warm"))
    server.add_chat("never sent", delay=30.0, when=prompt_contains("hang"))
    client = sdk(server, timeout=10.0)
    client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "warm"}])
    outcome: list[BaseException] = []

    def hang() -> None:
        try:
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "hang"}]
            )
        except openai.APIError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=hang, daemon=True)
    caller.start()
    asked_by = time.monotonic() + 60.0  # the request is held by the server (not only sent)
    while server.pending() > 0:
        assert time.monotonic() < asked_by, "the request never reached the server"
        time.sleep(0.01)

    started = time.monotonic()
    server.stop()

    assert time.monotonic() - started < 10.0  # far from the 30 s delay it was holding
    caller.join(timeout=30.0)
    assert not caller.is_alive()
    assert isinstance(outcome[0], openai.APIConnectionError)


def test_models_endpoint_and_unknown_paths(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("hi")
    client = sdk(llm_server)
    client.chat.completions.create(model="qwen2.5:7b", messages=[{"role": "user", "content": "hi"}])

    model_ids = [model.id for model in client.models.list()]
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{llm_server.url}/completions-legacy", timeout=5)

    assert model_ids == ["qwen2.5:7b", MODEL]
    assert missing.value.code == 404
    assert "unknown endpoint" in json.loads(missing.value.read())["error"]["message"]


def test_requests_log_records_every_request_with_body(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(400, "bad")
    client = sdk(llm_server)

    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "first"}], temperature=0
        )
    client.embeddings.create(model="e", input="second")

    assert [(r.method, r.path) for r in llm_server.requests] == [
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/embeddings"),
    ]
    assert llm_server.chat_requests() == [
        {"model": MODEL, "messages": [{"role": "user", "content": "first"}], "temperature": 0}
    ]
    assert llm_server.requests[1].body["input"] == "second"
    assert llm_server.requests[0].timestamp <= llm_server.requests[1].timestamp


# --- the Anthropic Messages endpoint (same script, ANTHROPIC_BASE_URL=server.root_url) -----


def claude(server: ScriptedLLMServer) -> ChatAnthropic:
    return ChatAnthropic(
        model_name="claude-3-sonnet-scripted",
        base_url=server.root_url,
        api_key=SecretStr("sk-ant-test"),
        max_retries=0,
        timeout=10,
        stop=None,
    )


def test_anthropic_messages_answer_from_the_chat_script(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("```python\nprint(1)\n```", usage=(21, 7), when=prompt_contains("CodeAct"))

    message = claude(llm_server).invoke(
        [SystemMessage("You are CodeAct."), HumanMessage("売上.csv を Parquet にして")]
    )

    assert message.text == "```python\nprint(1)\n```"
    assert message.usage_metadata is not None
    assert (message.usage_metadata["input_tokens"], message.usage_metadata["output_tokens"]) == (
        21,
        7,
    )
    (body,) = llm_server.message_requests()
    assert body["model"] == "claude-3-sonnet-scripted"
    assert "You are CodeAct." in json.dumps(body["system"])
    assert body["messages"][-1]["role"] == "user"
    request = llm_server.requests[-1]
    # SDK versions send the key as x-api-key or as a bearer token.
    sent = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    assert sent.removeprefix("Bearer ") == "sk-ant-test"
    assert "anthropic-version" in request.headers
    assert llm_server.chat_requests() == []  # the OpenAI endpoint saw nothing
    assert llm_server.pending() == 0


def test_anthropic_structured_output_is_a_tool_use(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(json={"vendor": "東京電力", "amount": 12800})

    result = claude(llm_server).with_structured_output(Invoice).invoke("請求書を読んで")

    assert result == Invoice(vendor="東京電力", amount=12800)
    (body,) = llm_server.message_requests()
    assert [tool["name"] for tool in body["tools"]] == ["Invoice"]


def test_anthropic_errors_have_the_sdk_types_and_stream_is_refused(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_error(500, "overheated")
    llm_server.add_error(429, "slow down", retry_after=0.01)
    llm_server.add_chat("ok")
    client = anthropic.Anthropic(base_url=llm_server.root_url, api_key="k", max_retries=0)
    messages: Any = [{"role": "user", "content": "hi"}]

    with pytest.raises(anthropic.InternalServerError) as failed:
        client.messages.create(model="claude", max_tokens=10, messages=messages)
    with pytest.raises(anthropic.RateLimitError) as limited:
        client.messages.create(model="claude", max_tokens=10, messages=messages)
    reply = client.messages.create(model="claude", max_tokens=10, messages=messages)
    with pytest.raises(anthropic.BadRequestError) as streamed:
        client.messages.create(model="claude", max_tokens=10, messages=messages, stream=True)

    assert failed.value.status_code == 500
    assert failed.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": "overheated"},
    }
    assert limited.value.response.headers["retry-after"] == "0.01"
    assert reply.content[0].type == "text"
    assert reply.stop_reason == "end_turn"
    assert "streaming is not offered" in str(streamed.value)


def test_anthropic_unscripted_request_fails_loudly(llm_server: ScriptedLLMServer) -> None:
    client = anthropic.Anthropic(base_url=llm_server.root_url, api_key="k", max_retries=2)

    with pytest.raises(anthropic.InternalServerError) as failed:
        client.messages.create(
            model="claude", max_tokens=10, messages=[{"role": "user", "content": "誰？"}]
        )

    assert "no scripted response" in str(failed.value)
    assert len(llm_server.message_requests()) == 1  # x-should-retry: false
