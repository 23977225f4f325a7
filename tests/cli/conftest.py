"""Fixtures of the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpdesk import build_example_index, sample_embedding_cache


@pytest.fixture(scope="session")
def helpdesk_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample help-desk knowledge base, ingested once (default settings); read-only."""
    return build_example_index(
        tmp_path_factory.mktemp("helpdesk") / "index", sample_embedding_cache(tmp_path_factory)
    )
