"""The LLM layer: the only place that builds chat and embedding models.

Use ``get_llm(role)`` for a chat client bound to a role's model (``KEIRI_LLM_MODEL`` or
``KEIRI_LLM_MODEL_<ROLE>``) and ``get_embedder()`` for the embedding model. Both are cheap to
create and need no key until the first call. ``cancellable(event)`` makes every call inside
it abort in flight once ``event`` is set.

Names are loaded on first use (``keiri_agent._lazy``): a module that needs only a light part of
the layer (``field_problems``, ``cancel``) does not pull in the provider SDKs, so a command that
stops at a missing key starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.config import LLMRole, ModelRef
    from keiri_agent.llm.cancel import cancellable
    from keiri_agent.llm.client import (
        ClientOptions,
        EmbeddingClient,
        LLMClient,
        StructuredMethod,
        get_embedder,
        get_llm,
    )
    from keiri_agent.llm.providers import build_chat_model, build_embeddings, strict_schema_for
    from keiri_agent.llm.retry import RetryPolicy
    from keiri_agent.llm.usage import UsageLedger, UsageSums, UsageTotals

__all__ = [
    "ClientOptions",
    "EmbeddingClient",
    "LLMClient",
    "LLMRole",
    "ModelRef",
    "RetryPolicy",
    "StructuredMethod",
    "UsageLedger",
    "UsageSums",
    "UsageTotals",
    "build_chat_model",
    "build_embeddings",
    "cancellable",
    "get_embedder",
    "get_llm",
    "strict_schema_for",
]

_EXPORTS = {
    "LLMRole": "keiri_agent.config",
    "ModelRef": "keiri_agent.config",
    "cancellable": ".cancel",
    "ClientOptions": ".client",
    "EmbeddingClient": ".client",
    "LLMClient": ".client",
    "StructuredMethod": ".client",
    "get_embedder": ".client",
    "get_llm": ".client",
    "build_chat_model": ".providers",
    "build_embeddings": ".providers",
    "strict_schema_for": ".providers",
    "RetryPolicy": ".retry",
    "UsageLedger": ".usage",
    "UsageSums": ".usage",
    "UsageTotals": ".usage",
}

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
