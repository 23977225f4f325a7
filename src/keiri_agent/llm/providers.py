"""Builders of LangChain chat and embedding models, one per provider.

This is the only module in keiri-agent that constructs a model object. Credentials are checked
here, at the moment a model is first needed; a missing one raises ``CredentialsMissingError``
naming the variables to set. SDK-level retries are disabled (``max_retries=0``) because
``keiri_agent.llm.retry`` retries, counts and reports every attempt itself.
"""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from keiri_agent.config import ModelRef, Settings
from keiri_agent.errors import ConfigurationError

__all__ = [
    "SELF_HOSTED_PLACEHOLDER_KEY",
    "build_chat_model",
    "build_embeddings",
    "strict_schema_for",
    "takes_strict_schema",
]

# vLLM, Ollama and llama.cpp servers accept any key but the OpenAI SDK insists on one;
# "EMPTY" is the value vLLM's own documentation uses. Only sent to a custom OPENAI_BASE_URL.
SELF_HOSTED_PLACEHOLDER_KEY = "EMPTY"
DEFAULT_ANTHROPIC_MAX_TOKENS = 8192


def takes_strict_schema(ref: ModelRef, settings: Settings) -> bool:
    """Whether ``ref``'s endpoint is known to enforce OpenAI's strict structured outputs:
    Azure OpenAI, and OpenAI's own API (no ``OPENAI_BASE_URL``, or one on api.openai.com).

    An OpenAI-compatible server behind ``OPENAI_BASE_URL`` is not: vLLM's request model has no
    ``strict`` on a tool (the field is logged as ignored) and Ollama reads only the schema of a
    ``json_schema`` response format, so a strict request there is the strict variant's
    JSON-text encoding with nothing enforcing it; they are sent the plain tool-use schema.
    """
    if ref.provider == "azure":
        return True
    return ref.provider == "openai" and not settings.openai_base_url_is_custom()


def strict_schema_for(ref: ModelRef, settings: Settings) -> bool:
    """Whether calls whose schema is built for OpenAI's strict subset (plan generation) send it
    strict: ``KEIRI_LLM_STRICT_SCHEMA`` on / off as set, ``auto`` by :func:`takes_strict_schema`."""
    choice = settings.keiri_llm_strict_schema
    if choice != "auto":
        return choice == "on"
    return takes_strict_schema(ref, settings)


def _require(settings: Settings, ref: ModelRef, purpose: str) -> None:
    settings.require_credentials(ref.provider, purpose=purpose)


def _openai_key(settings: Settings) -> SecretStr:
    if settings.openai_api_key is not None:
        return settings.openai_api_key
    return SecretStr(SELF_HOSTED_PLACEHOLDER_KEY)


def _secret(value: SecretStr | None) -> SecretStr:
    # _require() has already checked presence; this only narrows the type.
    assert value is not None
    return value


def _openai_model(ref: ModelRef, settings: Settings, *, embeddings: bool, **options: Any) -> Any:
    """An OpenAI (or OpenAI-compatible) or Azure OpenAI chat or embedding model: its endpoint
    and key, ``options``, and no SDK retries."""
    from langchain_openai import (
        AzureChatOpenAI,
        AzureOpenAIEmbeddings,
        ChatOpenAI,
        OpenAIEmbeddings,
    )

    azure = ref.provider == "azure"
    if azure:
        where = {
            "azure_deployment": ref.model,
            "azure_endpoint": settings.azure_openai_endpoint,
            "api_version": settings.openai_api_version,
            "api_key": _secret(settings.azure_openai_api_key),
        }
        if embeddings:  # an Azure chat model is named by its deployment alone
            where["model"] = ref.model
    else:
        where = {"model": ref.model, "api_key": _openai_key(settings)}
        where["base_url"] = settings.openai_base_url
    classes = {
        (False, False): ChatOpenAI,
        (False, True): AzureChatOpenAI,
        (True, False): OpenAIEmbeddings,
        (True, True): AzureOpenAIEmbeddings,
    }
    return classes[embeddings, azure](**where, max_retries=0, **options)


def _unsupported(ref: ModelRef, variable: str, forms: str) -> ConfigurationError:
    return ConfigurationError(
        f"未対応の LLM プロバイダーです: {ref.provider}",
        hint=f"{variable} を {forms} の形式で指定してください。",
        details={"model": str(ref)},
    )


def build_chat_model(
    ref: ModelRef,
    settings: Settings,
    *,
    timeout_s: float | None = None,
    purpose: str = "",
) -> BaseChatModel:
    """A chat model for ``ref`` with the settings' credentials, timeout and temperature."""
    _require(settings, ref, purpose)
    timeout = timeout_s if timeout_s is not None else settings.keiri_llm_timeout_s
    temperature = settings.keiri_llm_temperature
    if ref.provider in ("openai", "azure"):
        chat: BaseChatModel = _openai_model(
            ref,
            settings,
            embeddings=False,
            timeout=timeout,
            temperature=temperature,
            stream_usage=True,
            # Chat Completions is what every OpenAI-compatible server speaks.
            use_responses_api=False,
        )
        return chat
    if ref.provider == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(
            model=ref.model,
            api_key=_secret(settings.anthropic_api_key),
            base_url=settings.anthropic_base_url,
            timeout=timeout,
            max_retries=0,
            temperature=temperature,
            max_tokens_to_sample=DEFAULT_ANTHROPIC_MAX_TOKENS,
            stop=None,
        )
    raise _unsupported(ref, "KEIRI_LLM_MODEL", "openai:… / azure:… / anthropic:…")


def build_embeddings(
    ref: ModelRef, settings: Settings, *, timeout_s: float | None = None
) -> Embeddings:
    """An embedding model for ``ref`` (OpenAI, Azure or any OpenAI-compatible server)."""
    if ref.provider == "anthropic":
        raise ConfigurationError(
            f"Anthropic は埋め込みモデルを提供していません: {ref}",
            hint="KEIRI_LLM_MODEL_EMBEDDING に openai:text-embedding-3-small などの"
            " 埋め込みモデル（OpenAI 互換サーバーのものでも可）を指定してください。",
            details={"model": str(ref)},
        )
    _require(settings, ref, "embedding")
    if ref.provider not in ("openai", "azure"):
        raise _unsupported(ref, "KEIRI_LLM_MODEL_EMBEDDING", "openai:… / azure:…")
    embeddings: Embeddings = _openai_model(
        ref,
        settings,
        embeddings=True,
        timeout=timeout_s if timeout_s is not None else settings.keiri_llm_timeout_s,
        # The length check needs tiktoken's files from the network; callers chunk text.
        check_embedding_ctx_length=False,
    )
    return embeddings
