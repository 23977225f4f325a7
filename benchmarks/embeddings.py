"""Which embedding model a retrieval benchmark uses: the configured one, the test server's
hashed n-gram vectors (``--scripted-embeddings``, to run the dense path offline), or none;
or the bundled model with default settings (:func:`bundled_settings`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypedDict, Unpack

from keiri_agent.config import Settings, load_settings

__all__ = ["HelpdeskOverrides", "bundled_settings", "embedding_settings"]


class HelpdeskOverrides(TypedDict, total=False):
    """The help-desk settings a benchmark varies over the defaults."""

    keiri_helpdesk_semantic: bool
    keiri_helpdesk_min_relevance: float


def bundled_settings(cache: Path, **overrides: Unpack[HelpdeskOverrides]) -> Settings:
    """Default settings without ``.env`` or keys: semantic search with the bundled model, its
    vectors cached in ``cache``."""
    return Settings(
        _env_file=None, keiri_llm_model_embedding=None, keiri_cache_dir=cache, **overrides
    )


def embedding_settings(scripted: bool, cache_dir: Path) -> tuple[Settings | None, str, Any]:
    """Settings for dense/hybrid (None: skipped), a label, and a server to stop (or None)."""
    if scripted:
        from tests.support.llm_server import ScriptedLLMServer  # dev checkout only

        server = ScriptedLLMServer().start()
        os.environ["NO_PROXY"] = ",".join(
            filter(None, [os.environ.get("NO_PROXY", ""), "127.0.0.1", "localhost"])
        )
        settings = Settings(
            _env_file=None,
            openai_base_url=server.url,
            openai_api_key="sk-benchmark-scripted",
            keiri_llm_model_embedding="openai:scripted-embed",
            keiri_cache_dir=cache_dir,
        )
        return settings, "scripted n-gram-hash embeddings, not a real model", server
    settings = load_settings()
    ref = settings.model_for("embedding")
    if ref is None:
        return None, "", None
    return settings.model_copy(update={"keiri_cache_dir": cache_dir}), str(ref), None
