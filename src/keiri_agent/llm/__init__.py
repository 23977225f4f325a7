"""The LLM layer: the only place that builds chat and embedding models.

Use ``get_llm(role)`` for a chat client bound to a role's model (``KEIRI_LLM_MODEL`` or
``KEIRI_LLM_MODEL_<ROLE>``) and ``get_embedder()`` for the embedding model. Both are cheap to
create and need no key until the first call. ``cancellable(event)`` makes every call inside
it abort in flight once ``event`` is set.
"""

from __future__ import annotations

from typing import Unpack

from keiri_agent.config import LLMRole, ModelRef
from keiri_agent.llm.cancel import cancellable
from keiri_agent.llm.client import ClientOptions, EmbeddingClient, LLMClient, StructuredMethod
from keiri_agent.llm.providers import build_chat_model, build_embeddings, strict_schema_for
from keiri_agent.llm.retry import RetryPolicy
from keiri_agent.llm.usage import UsageLedger, UsageRecord, UsageSums, UsageTotals

__all__ = [
    "ClientOptions",
    "EmbeddingClient",
    "LLMClient",
    "LLMRole",
    "ModelRef",
    "RetryPolicy",
    "StructuredMethod",
    "UsageLedger",
    "UsageRecord",
    "UsageSums",
    "UsageTotals",
    "build_chat_model",
    "build_embeddings",
    "cancellable",
    "get_embedder",
    "get_llm",
    "strict_schema_for",
]


def get_llm(role: LLMRole | str = LLMRole.DEFAULT, **options: Unpack[ClientOptions]) -> LLMClient:
    """A chat client for ``role``; the model is built (and keys checked) on first use.

    With ``cancel``, setting the event aborts the client's call in flight (see ``llm.cancel``).
    """
    return LLMClient(role, **options)


def get_embedder(**options: Unpack[ClientOptions]) -> EmbeddingClient:
    """The embedding client; check ``.configured`` before relying on dense retrieval."""
    return EmbeddingClient(**options)
