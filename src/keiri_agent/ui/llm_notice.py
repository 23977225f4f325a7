"""Why a page's LLM cannot be used, and how to configure a provider, in one Japanese notice.

Pages call :func:`llm_problem` with the roles they need; ``None`` means every role's model has
its credentials. Roles with the same problem (the same model missing the same variables, or no
model at all) share one line, and the provider explanation follows once: the notice names the
missing variables and explains every supported provider (OpenAI, Azure OpenAI, Anthropic, and
OpenAI-compatible servers such as Ollama or vLLM), since a person who sees it may not have chosen
one yet. The notice is Markdown: URLs are written as ``<...>`` autolinks, because a bare URL
followed by Japanese text would swallow that text into the link.
"""

from __future__ import annotations

import streamlit as st

from keiri_agent.config import LLMRole, Settings
from keiri_agent.ui.sidebar import ROLE_LABELS

__all__ = ["PROVIDER_SETUP", "llm_problem", "warn_llm_problem"]

PROVIDER_SETUP = (
    "プロバイダーごとの設定（環境変数または .env）:\n"
    "- OpenAI: OPENAI_API_KEY（モデルは KEIRI_LLM_MODEL=openai:gpt-4.1-mini など）\n"
    "- Azure OpenAI: KEIRI_LLM_MODEL=azure:<デプロイ名>、AZURE_OPENAI_API_KEY、"
    "AZURE_OPENAI_ENDPOINT、OPENAI_API_VERSION\n"
    "- Anthropic: KEIRI_LLM_MODEL=anthropic:claude-sonnet-4-6 など、ANTHROPIC_API_KEY\n"
    "- Ollama・vLLM など OpenAI 互換サーバー: OPENAI_BASE_URL（例: <http://localhost:11434/v1>）と"
    " KEIRI_LLM_MODEL=openai:<サーバーのモデル名>（API キーは不要）"
)


def _variable(role: LLMRole) -> str:
    return "KEIRI_LLM_MODEL" if role is LLMRole.DEFAULT else f"KEIRI_LLM_MODEL_{role.value.upper()}"


def llm_problem(settings: Settings, *roles: LLMRole) -> str | None:
    """The notice for the ``roles`` whose model cannot be used, else None."""
    unset: list[LLMRole] = []
    missing: dict[tuple[str, tuple[str, ...]], list[LLMRole]] = {}
    for role in dict.fromkeys(roles):
        ref = settings.model_for(role)
        if ref is None:
            unset.append(role)
            continue
        needed = tuple(settings.missing_credentials(ref.provider))
        if needed:
            missing.setdefault((str(ref), needed), []).append(role)
    lines = []
    if unset:
        labels = "・".join(ROLE_LABELS.get(r.value, r.value) for r in unset)
        variables = "、".join(_variable(r) for r in unset)
        lines.append(f"{labels}用のモデルが設定されていません。{variables} を設定してください。")
    for (model, needed), group in missing.items():
        labels = "・".join(ROLE_LABELS.get(r.value, r.value) for r in group)
        variables = "、".join(_variable(r) for r in group)
        lines.append(
            f"{labels}のモデル {model} を使うには {', '.join(needed)} の設定が必要です。"
            "設定してからアプリを再起動してください"
            f"（この用途だけ別のモデルにするなら {variables}）。"
        )
    if not lines:
        return None
    if missing:
        lines[-1] += " 設定の確認は `keiri-agent doctor` でできます。"
    return "\n\n".join([*lines, PROVIDER_SETUP])


def warn_llm_problem(settings: Settings, *roles: LLMRole) -> str | None:
    """Show the notice for ``roles`` as a warning at the top of a page, when there is one."""
    problem = llm_problem(settings, *roles)
    if problem is not None:
        st.warning(problem, icon="⚠️")
    return problem
