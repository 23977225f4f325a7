"""Fixtures of the help-desk tests: the sample knowledge base, ingested once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk.knowledge import ingest
from keiri_agent.config import Settings
from keiri_agent.retrieval.local_embedding import LOCAL_MODEL_KEY
from tests.support.helpdesk import sample_embedding_cache

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "helpdesk"


def bm25_settings(**values: object) -> Settings:
    """Lexical search only: no embedding model, semantic search off (and no .env), whatever the
    environment says (``semantic_settings`` for the default, semantic search)."""
    values.setdefault("keiri_helpdesk_semantic", False)
    return Settings(_env_file=None, keiri_llm_model_embedding=None, **values)  # type: ignore[call-arg]


def semantic_settings(cache: Path, **values: object) -> Settings:
    """The default settings with no keys: semantic search with the bundled model."""
    return Settings(  # type: ignore[call-arg]
        _env_file=None, keiri_llm_model_embedding=None, keiri_cache_dir=cache, **values
    )


@pytest.fixture(scope="session")
def semantic_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample knowledge base ingested once with the default settings and no keys (the
    bundled model), and its embedding cache: (index directory, cache directory)."""
    root = tmp_path_factory.mktemp("semantic")
    result = ingest(
        root / "index",
        manuals=[EXAMPLES / "manual"],
        qa=EXAMPLES / "qa.csv",
        settings=semantic_settings(cache := sample_embedding_cache(tmp_path_factory)),
    )
    assert result.ok, result.failures
    assert (result.qa_mode, result.embedding_model) == ("dense", LOCAL_MODEL_KEY)
    return root / "index", cache


@pytest.fixture(scope="session")
def helpdesk_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample knowledge base (examples/helpdesk: manual PDF, release notes, qa.csv) as an
    index directory, ingested once with lexical search only (no embedding model, semantic
    search off). Read-only: tests that write to an index use ``helpdesk_index_copy``."""
    directory = tmp_path_factory.mktemp("helpdesk") / "index"
    result = ingest(
        directory,
        manuals=[EXAMPLES / "manual"],
        qa=EXAMPLES / "qa.csv",
        settings=bm25_settings(),
    )
    assert result.ok, result.failures
    return directory


@pytest.fixture
def helpdesk_index_copy(helpdesk_index: Path, tmp_path: Path) -> Path:
    """A private copy of the sample index that a test may change."""
    return Path(shutil.copytree(helpdesk_index, tmp_path / "index"))
