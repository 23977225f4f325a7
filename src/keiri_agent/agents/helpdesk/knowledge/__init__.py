"""The help desk's knowledge base: manuals and a Q/A CSV, ingested once, searched by the agent.

- :func:`ingest` — manuals (PDF, Word, Markdown, text) and a Q/A CSV into an index directory,
  incrementally by content hash (``keiri-agent helpdesk ingest``)
- :class:`KnowledgeBase` — ``search_manual``, ``search_qa``, ``search_hybrid`` (lexical search
  fused with semantic search by the bundled model, :mod:`.semantic`; with a provider embedding
  model, Q/A in Qdrant; lexical only with ``KEIRI_HELPDESK_SEMANTIC=false``), ``coverage``,
  ``stats``
- :class:`SearchOutput` — one hit: file_name, content, page or row, chunk_id, score, source
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.knowledge.ingest import ProgressCallback, ingest
    from keiri_agent.agents.helpdesk.knowledge.models import (
        FileFailure,
        FileNote,
        IngestResult,
        KnowledgeStats,
        QAMode,
        QAPair,
        QAReport,
        SearchOutput,
    )
    from keiri_agent.agents.helpdesk.knowledge.qa import QATable, read_qa_csv
    from keiri_agent.agents.helpdesk.knowledge.sources import MANUAL_EXTENSIONS
    from keiri_agent.agents.helpdesk.knowledge.store import MAX_K, KnowledgeBase

__all__ = [
    "MANUAL_EXTENSIONS",
    "MAX_K",
    "FileFailure",
    "FileNote",
    "IngestResult",
    "KnowledgeBase",
    "KnowledgeStats",
    "ProgressCallback",
    "QAMode",
    "QAPair",
    "QAReport",
    "QATable",
    "SearchOutput",
    "ingest",
    "read_qa_csv",
]

# Loaded on first use: searching must not import the file layer (pandas, PDF and Office readers)
# that only ingesting needs.
_EXPORTS = {
    "MANUAL_EXTENSIONS": ".sources",
    "MAX_K": ".store",
    "FileFailure": ".models",
    "FileNote": ".models",
    "IngestResult": ".models",
    "KnowledgeBase": ".store",
    "KnowledgeStats": ".models",
    "ProgressCallback": ".ingest",
    "QAMode": ".models",
    "QAPair": ".models",
    "QAReport": ".models",
    "QATable": ".qa",
    "SearchOutput": ".models",
    "ingest": ".ingest",
    "read_qa_csv": ".qa",
}
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
