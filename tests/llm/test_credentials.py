"""A missing credential is a clear error at first use, never at import or construction."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from keiri_agent.errors import ConfigurationError, CredentialsMissingError, ErrorCode
from keiri_agent.llm import get_embedder, get_llm


def test_importing_and_constructing_need_no_key() -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "AZURE", "ANTHROPIC"))
    }
    code = (
        "import keiri_agent, keiri_agent.llm, keiri_agent.events, keiri_agent.workspace, "
        "keiri_agent.cli; from keiri_agent.llm import get_llm; get_llm('reason'); print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_missing_openai_key_names_the_variable() -> None:
    client = get_llm("reason")
    with pytest.raises(CredentialsMissingError) as info:
        client.invoke("q")
    error = info.value
    assert error.code == ErrorCode.CONFIGURATION_ERROR
    assert "OPENAI_API_KEY" in error.message
    assert "OPENAI_API_KEY" in error.hint
    assert "keiri-agent doctor" in error.hint
    assert error.details["purpose"] == "データ分析: 判断"  # the role as people name it


@pytest.mark.parametrize(
    ("model", "variables"),
    [
        (
            "azure:my-deploy",
            ["AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION"],
        ),
        ("anthropic:claude-sonnet-4-6", ["ANTHROPIC_API_KEY"]),
    ],
)
def test_missing_provider_credentials_name_every_variable(
    monkeypatch: pytest.MonkeyPatch, model: str, variables: list[str]
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_CODEACT", model)
    client = get_llm("codeact")  # constructing is fine without keys
    with pytest.raises(CredentialsMissingError) as info:
        client.invoke("q")
    assert info.value.missing == variables
    for variable in variables:
        assert variable in info.value.message


def test_embedding_role_unset_is_reported_not_guessed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    embedder = get_embedder()
    assert embedder.configured is False
    with pytest.raises(ConfigurationError, match="KEIRI_LLM_MODEL_EMBEDDING") as info:
        embedder.embed_query("請求書")
    assert info.value.code == ErrorCode.CONFIGURATION_ERROR
