"""Provider selection: each `provider:model` builds the right LangChain model, wired as set."""

from __future__ import annotations

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_openai import AzureChatOpenAI, ChatOpenAI, OpenAIEmbeddings

from keiri_agent.config import load_settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.llm import build_chat_model, build_embeddings, get_embedder, get_llm
from keiri_agent.llm.providers import SELF_HOSTED_PLACEHOLDER_KEY
from tests.support import ScriptedLLMServer


def test_openai_with_custom_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("KEIRI_LLM_MODEL", "openai:qwen2.5:7b")
    monkeypatch.setenv("KEIRI_LLM_TIMEOUT_S", "42")
    settings = load_settings()
    model = build_chat_model(settings.keiri_llm_model, settings)
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "qwen2.5:7b"
    assert model.openai_api_base == "http://127.0.0.1:11434/v1"
    assert model.request_timeout == 42
    assert model.max_retries == 0  # our retry layer is the only one
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == SELF_HOSTED_PLACEHOLDER_KEY


def test_azure_uses_deployment_endpoint_and_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_PLAN", "azure:keiri-gpt4o")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-secret")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://keiri.openai.azure.com")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    model = get_llm("plan").chat_model
    assert isinstance(model, AzureChatOpenAI)
    assert model.deployment_name == "keiri-gpt4o"
    assert model.azure_endpoint == "https://keiri.openai.azure.com"
    assert model.openai_api_version == "2024-10-21"


def test_anthropic_role(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_CODEACT", "anthropic:claude-sonnet-4-6")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    model = get_llm("codeact").chat_model
    assert isinstance(model, ChatAnthropic)
    assert model.model == "claude-sonnet-4-6"
    assert model.max_retries == 0


def test_anthropic_has_no_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "anthropic:claude-sonnet-4-6")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    settings = load_settings()
    ref = settings.model_for("embedding")
    assert ref is not None
    with pytest.raises(ConfigurationError, match="埋め込み"):
        build_embeddings(ref, settings)


def test_embeddings_through_an_openai_compatible_server(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:scripted-embedding")
    embedder = get_embedder()
    assert embedder.configured
    assert isinstance(embedder.embeddings, OpenAIEmbeddings)
    vectors = embedder.embed_documents(["請求書の支払期日", "請求書の支払い期限", "社員旅行の案内"])
    assert len(vectors) == 3
    assert len(vectors[0]) == llm_server.embedding_dim

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(vectors[0], vectors[1]) > cos(vectors[0], vectors[2])
    assert llm_server.requests[-1].body["model"] == "scripted-embedding"
