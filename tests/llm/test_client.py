"""LLMClient against the scripted OpenAI-compatible server: the paths users depend on."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from keiri_agent.errors import ErrorCode, LLMError, LLMOutputError, LLMTimeoutError
from keiri_agent.events import EventStream
from keiri_agent.llm import LLMClient, UsageLedger, get_llm
from tests.support import ScriptedLLMServer


class Invoice(BaseModel):
    vendor: str = Field(description="取引先名")
    amount: int = Field(description="税込金額（円）")


INVOICE = {"vendor": "株式会社テスト商事", "amount": 110000}


def test_plain_call_reaches_the_server_with_the_configured_model(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat("こんにちは")
    reply = get_llm("reason").invoke("挨拶してください")
    assert reply.text == "こんにちは"
    (request,) = llm_server.chat_requests()
    assert request["model"] == "scripted-model"
    assert request["messages"][-1]["content"] == "挨拶してください"


def test_per_role_override_sends_that_roles_model(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_CODEGEN", "openai:coder-model")
    llm_server.add_chat("a", repeat=True)
    get_llm("codegen").invoke("x")
    get_llm("report").invoke("x")
    assert [r["model"] for r in llm_server.chat_requests()] == ["coder-model", "scripted-model"]


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_structured_output_returns_a_validated_model(
    llm_server: ScriptedLLMServer, method: str
) -> None:
    llm_server.add_chat(json=INVOICE)
    invoice = get_llm("plan").structured(Invoice, "請求書を読み取ってください", method=method)  # type: ignore[arg-type]
    assert invoice == Invoice(**INVOICE)
    (request,) = llm_server.chat_requests()
    if method == "json_schema":
        assert request["response_format"]["type"] == "json_schema"
        schema = request["response_format"]["json_schema"]["schema"]
        assert set(schema["properties"]) == {"vendor", "amount"}
    else:
        assert request["tools"][0]["function"]["name"] == "Invoice"
        assert "response_format" not in request


def test_structured_method_comes_from_settings(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_STRUCTURED_METHOD", "function_calling")
    llm_server.add_chat(json=INVOICE)
    assert get_llm().structured(Invoice, "読んで").amount == 110000
    assert "tools" in llm_server.chat_requests()[0]


def test_reply_that_does_not_fit_the_schema_is_an_output_error(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(json={"vendor": "A社", "amount": "たくさん"}, repeat=True)
    with pytest.raises(LLMOutputError) as info:
        get_llm().structured(Invoice, "読んで")
    error = info.value
    assert error.code == ErrorCode.OUTPUT_SCHEMA_MISMATCH
    assert "税込金額: 整数として読めません（受け取った値: 「たくさん」）" in error.message
    assert "amount" not in error.message  # the field by its label, not the program's name
    assert "たくさん" in error.details["raw"]
    assert error.hint


def test_429_then_500_are_retried_until_success(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(429)
    llm_server.add_error(500)
    llm_server.add_chat("三度目の正直", usage=(12, 5))
    stream = EventStream("run_retry", "test")
    reply = get_llm(events=stream).invoke("質問")
    assert reply.text == "三度目の正直"
    assert len(llm_server.chat_requests()) == 3
    (event,) = [e for e in stream.events() if e.event == "llm_call"]
    assert event.attempts == 3
    assert event.ok is True
    assert (event.input_tokens, event.output_tokens, event.total_tokens) == (12, 5, 17)


@pytest.mark.parametrize(("status", "word"), [(500, "サーバーエラー"), (429, "レート制限")])
def test_exhausted_retries_raise_api_error_with_hint(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, status: int, word: str
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "2")
    llm_server.add_error(status, times=3)
    llm_server.add_chat("never reached")
    ledger = UsageLedger()
    with pytest.raises(LLMError) as info:
        get_llm(ledger=ledger).invoke("質問")
    error = info.value
    assert error.code == ErrorCode.API_ERROR
    assert word in error.message
    assert error.hint
    assert error.details["attempts"] == 3
    assert error.details["status_code"] == status
    assert len(llm_server.chat_requests()) == 3
    assert llm_server.pending() == 1
    (record,) = ledger.records
    assert (record.ok, record.error_code, record.attempts) == (False, "API_ERROR", 3)


def test_client_errors_are_not_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(401, "Incorrect API key provided")
    llm_server.add_chat("never reached")
    with pytest.raises(LLMError) as info:
        get_llm().invoke("質問")
    assert "認証" in info.value.message
    assert "OPENAI_API_KEY" in info.value.hint
    assert len(llm_server.chat_requests()) == 1


@pytest.mark.parametrize(("role", "said"), [("reason", "データ分析: 判断"), ("plan", "設計")])
def test_an_error_names_the_role_in_japanese(
    llm_server: ScriptedLLMServer, role: str, said: str
) -> None:
    llm_server.add_error(400, "Invalid parameter: messages")
    with pytest.raises(LLMError) as info:
        get_llm(role).invoke("質問")
    assert f"{said}（openai:" in info.value.message
    assert f"{role} (" not in info.value.message


def test_timeouts_are_retried_then_reported_as_timeout_error(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_TIMEOUT_S", "0.3")
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "1")
    llm_server.add_chat("slow", delay=2.0)
    llm_server.add_chat("fast")
    assert get_llm().invoke("q").text == "fast"

    llm_server.add_chat("slow", delay=2.0)
    llm_server.add_chat("slow", delay=2.0)
    with pytest.raises(LLMTimeoutError) as info:
        get_llm().invoke("q")
    assert info.value.code == ErrorCode.TIMEOUT_ERROR
    assert "KEIRI_LLM_TIMEOUT_S" in info.value.hint


def test_streaming_yields_pieces_and_accounts_tokens(llm_server: ScriptedLLMServer) -> None:
    text = "売上は前年同月比で12%増加しました。主因は新規顧客です。"
    llm_server.add_chat(text, usage=(40, 20))
    ledger = UsageLedger()
    stream = EventStream("run_stream", "test")
    pieces = list(get_llm("report", ledger=ledger, events=stream).stream("要約して"))
    assert len(pieces) > 1
    assert "".join(pieces) == text
    (record,) = ledger.records
    assert record.streamed is True
    assert (record.input_tokens, record.output_tokens, record.total_tokens) == (40, 20, 60)
    assert llm_server.chat_requests()[0]["stream"] is True


def test_streaming_connection_failure_is_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(503)
    llm_server.add_chat("復旧しました")
    assert "".join(get_llm().stream("q")) == "復旧しました"


def test_token_accounting_sums_per_run_and_lands_in_events(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat("一", usage=(10, 1))
    llm_server.add_chat(json=INVOICE, usage=(100, 20))
    llm_server.add_chat("三", usage=(7, 3))
    ledger = UsageLedger()
    stream = EventStream("run_usage", "test")
    get_llm("reason", ledger=ledger, events=stream, node_id="n1").invoke("a")
    get_llm("plan", ledger=ledger, events=stream).structured(Invoice, "b")
    get_llm("report", ledger=ledger, events=stream).invoke("c")
    totals = ledger.totals()
    assert (totals.calls, totals.input_tokens, totals.output_tokens) == (3, 117, 24)
    assert totals.total_tokens == 141
    assert totals.by_model["openai:scripted-model"]["calls"] == 3
    events = [e for e in stream.events() if e.event == "llm_call"]
    assert [e.role for e in events] == ["reason", "plan", "report"]
    assert events[0].node_id == "n1"
    assert events[1].structured is True
    assert sum(e.total_tokens for e in events) == 141
    assert all(e.latency_ms > 0 for e in events)


def test_tools_are_bound_and_tool_calls_come_back(llm_server: ScriptedLLMServer) -> None:
    from langchain_core.tools import tool

    @tool
    def search_manual(query: str) -> str:
        """マニュアルを検索する。"""
        return query

    llm_server.add_chat(tool_calls=[{"name": "search_manual", "arguments": {"query": "E-102"}}])
    reply = get_llm("helpdesk").invoke("E-102 とは？", tools=[search_manual])
    assert reply.tool_calls[0]["name"] == "search_manual"
    assert reply.tool_calls[0]["args"] == {"query": "E-102"}
    assert llm_server.chat_requests()[0]["tools"][0]["function"]["name"] == "search_manual"


def test_client_is_lazy_and_injected_models_are_used() -> None:
    from langchain_core.language_models import FakeListChatModel

    client = LLMClient("reason", model=FakeListChatModel(responses=["注入"]))
    assert client.invoke("q").text == "注入"
