"""Why a page's LLM cannot be used, and how to configure a provider, in one Japanese notice.

Pages call :func:`llm_problem` with the role they need; ``None`` means the role's model has its
credentials. The notice names the missing variables and explains every supported provider
(OpenAI, Azure OpenAI, Anthropic, and OpenAI-compatible servers such as Ollama or vLLM), since a
person who sees it may not have chosen one yet.
"""

from __future__ import annotations

from keiri_agent.config import LLMRole, Settings
from keiri_agent.ui.sidebar import ROLE_LABELS

__all__ = ["PROVIDER_SETUP", "llm_problem"]

PROVIDER_SETUP = (
    "プロバイダーごとの設定（環境変数または .env）:\n"
    "- OpenAI: OPENAI_API_KEY（モデルは KEIRI_LLM_MODEL=openai:gpt-4.1-mini など）\n"
    "- Azure OpenAI: KEIRI_LLM_MODEL=azure:<デプロイ名>、AZURE_OPENAI_API_KEY、"
    "AZURE_OPENAI_ENDPOINT、OPENAI_API_VERSION\n"
    "- Anthropic: KEIRI_LLM_MODEL=anthropic:claude-sonnet-4-5 など、ANTHROPIC_API_KEY\n"
    "- Ollama・vLLM など OpenAI 互換サーバー: OPENAI_BASE_URL（例: http://localhost:11434/v1）と"
    " KEIRI_LLM_MODEL=openai:<サーバーのモデル名>（API キーは不要）"
)


def llm_problem(settings: Settings, role: LLMRole) -> str | None:
    """The notice for ``role`` when its model cannot be used, else None."""
    label = ROLE_LABELS.get(role.value, role.value)
    variable = (
        "KEIRI_LLM_MODEL" if role is LLMRole.DEFAULT else f"KEIRI_LLM_MODEL_{role.value.upper()}"
    )
    ref = settings.model_for(role)
    if ref is None:
        return (
            f"{label}用のモデルが設定されていません。{variable} を設定してください。\n\n"
            + PROVIDER_SETUP
        )
    missing = settings.missing_credentials(ref.provider)
    if not missing:
        return None
    return (
        f"{label}のモデル {ref} を使うには"
        f" {', '.join(missing)} の設定が必要です。設定してからアプリを再起動してください"
        f"（この用途だけ別のモデルにするなら {variable}）。"
        " 設定の確認は `keiri-agent doctor` でできます。\n\n" + PROVIDER_SETUP
    )
