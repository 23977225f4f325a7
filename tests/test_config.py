"""Settings: environment and .env, per-role models, credentials, validation errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.config import (
    DEFAULT_HELPDESK_MIN_RELEVANCE,
    LLMRole,
    ModelRef,
    load_settings,
    mask_secret,
)
from keiri_agent.errors import ConfigurationError, ErrorCode


def test_defaults_need_no_key_and_have_no_embedding_model() -> None:
    settings = load_settings()
    assert settings.model_for(LLMRole.REASON) == ModelRef("openai", "gpt-4.1-mini")
    assert settings.model_for(LLMRole.EMBEDDING) is None
    assert settings.missing_credentials("openai") == ["OPENAI_API_KEY"]
    assert settings.keiri_agent_llm_fallback is False


def test_role_override_wins_over_default_and_others_follow_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL", "openai:base-model")
    monkeypatch.setenv("KEIRI_LLM_MODEL_CODEGEN", "anthropic:claude-code-model")
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:text-embedding-3-small")
    settings = load_settings()
    assert settings.model_for("codegen") == ModelRef("anthropic", "claude-code-model")
    for role in ("reason", "report", "plan", "helpdesk", "codeact"):
        assert settings.model_for(role) == ModelRef("openai", "base-model")
    assert str(settings.model_for("embedding")) == "openai:text-embedding-3-small"


def test_model_name_may_contain_colons() -> None:
    # Ollama tags look like "qwen2.5:7b"; only the first colon separates the provider.
    assert ModelRef.parse("openai:qwen2.5:7b") == ModelRef("openai", "qwen2.5:7b")


def test_dotenv_is_read_and_environment_wins(
    monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    (isolated_env / ".env").write_text(
        "OPENAI_API_KEY=sk-from-dotenv-1234\nKEIRI_LLM_MODEL=openai:dotenv-model\n"
        "KEIRI_AGENT_LLM_FALLBACK=yes\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("KEIRI_LLM_MODEL", "openai:env-model")
    settings = load_settings()
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "sk-from-dotenv-1234"
    assert settings.model_for("default") == ModelRef("openai", "env-model")
    assert settings.keiri_agent_llm_fallback is True


def test_custom_base_url_makes_the_key_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    settings = load_settings()
    assert settings.openai_base_url_is_custom()
    assert settings.missing_credentials("openai") == []
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")
    assert load_settings().missing_credentials("openai") == ["OPENAI_API_KEY"]


def test_azure_and_anthropic_name_every_missing_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    assert settings.missing_credentials("azure") == [
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "OPENAI_API_VERSION",
    ]
    assert settings.missing_credentials("anthropic") == ["ANTHROPIC_API_KEY"]
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
    assert load_settings().missing_credentials("azure") == ["OPENAI_API_VERSION"]


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("KEIRI_LLM_MODEL", "gpt-4o", "provider:model"),
        ("KEIRI_LLM_MODEL_PLAN", "gemini:pro", "未対応"),
        ("KEIRI_LLM_TIMEOUT_S", "-3", "KEIRI_LLM_TIMEOUT_S"),
        ("KEIRI_LLM_STRUCTURED_METHOD", "xml", "KEIRI_LLM_STRUCTURED_METHOD"),
    ],
)
def test_malformed_settings_raise_a_japanese_configuration_error(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as info:
        load_settings()
    error = info.value
    assert error.code == ErrorCode.CONFIGURATION_ERROR
    assert variable in error.details["invalid"]
    assert expected in error.message
    assert "設定値が不正です" in error.message
    assert error.hint


def test_secrets_are_masked() -> None:
    assert mask_secret("sk-proj-abcdefghijklmnop") == "****mnop"
    assert mask_secret("short") == "****"
    assert mask_secret(None) == "(未設定)"


def test_the_removed_bm25_floor_setting_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """KEIRI_HELPDESK_MIN_SCORE was a floor on raw BM25 scores: a value tuned for that scale
    would mean something else on the 0..1 relevance, so it is refused, never ignored."""
    monkeypatch.setenv("KEIRI_HELPDESK_MIN_SCORE", "1.5")
    with pytest.raises(ConfigurationError) as info:
        load_settings()
    assert "KEIRI_HELPDESK_MIN_SCORE は廃止されました" in info.value.message
    assert "KEIRI_HELPDESK_MIN_RELEVANCE" in info.value.message
    assert info.value.code == ErrorCode.CONFIGURATION_ERROR
    monkeypatch.setenv("KEIRI_HELPDESK_MIN_SCORE", "")
    assert load_settings().keiri_helpdesk_min_relevance == DEFAULT_HELPDESK_MIN_RELEVANCE
