"""A help-desk knowledge base ingested into a temporary folder with default settings and no keys,
as benchmarks/helpdesk_heldout.py does it (keiri-agent venv; used by dump_hits.py and
manual_hits.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.embeddings import bundled_settings
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
from keiri_agent.config import Settings


def default_settings(tmp: Path) -> Settings:
    """The product's defaults with the embedding cache under ``tmp``."""
    return bundled_settings(tmp / "cache")


@contextmanager
def ingested(
    index_dir: Path, settings: Settings, manuals: list[Path], qa: Path | None = None
) -> Iterator[KnowledgeBase]:
    """The knowledge base of ``manuals`` (and ``qa``) ingested into ``index_dir``, opened."""
    done = ingest(index_dir, manuals=manuals, qa=qa, settings=settings)
    if not done.ok:
        raise SystemExit(f"ingest failed: {done.failures}")
    with KnowledgeBase.open(index_dir, settings=settings) as kb:
        yield kb
