"""Rebuilding the search indexes of a knowledge base from what its database stores.

The database keeps each chunk's and each Q/A pair's Sudachi analysis (the costly part), so the
lexical indexes (:class:`keiri_agent.retrieval.lexical.LexicalIndex`) are rebuilt from it after
every change without tokenizing anything again. ``state.json`` is written last: it names the
database generation and the index format the indexes were built from, and a reader that finds
another generation or format is told to run ``ingest`` again (which rebuilds them).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from keiri_agent.agents.helpdesk.knowledge import storage
from keiri_agent.agents.helpdesk.knowledge.chunking import search_text
from keiri_agent.retrieval.lexical import Analysis, LexicalIndex, analyze
from keiri_agent.retrieval.tokenize import JapaneseTokenizer
from keiri_agent.workspace import atomic_path

__all__ = ["analyzer", "rebuild"]


def analyzer(tokenizer: JapaneseTokenizer) -> Callable[[list[str]], list[str]]:
    """Texts → their encoded analyses, as the database stores them."""

    def run(texts: list[str]) -> list[str]:
        return [a.encode() for a in analyze(tokenizer, [search_text(t) for t in texts])]

    return run


def rebuild(
    db: storage.IndexDB, directory: Path, tokenizer: JapaneseTokenizer, generation: int
) -> None:
    """Rebuild both lexical indexes from the stored analyses, then record the generation."""
    ids, texts, encoded = db.chunk_analyses()
    rows, qa_texts, qa_encoded = db.qa_analyses()
    corpora = (
        (storage.MANUAL_LEXICAL_DIR, ids, [search_text(t) for t in texts], encoded),
        (storage.QA_LEXICAL_DIR, [str(r) for r in rows], qa_texts, qa_encoded),
    )
    for name, doc_ids, doc_texts, analyses in corpora:
        LexicalIndex.build(
            doc_texts,
            analyses=[Analysis.decode(e) for e in analyses],
            ids=doc_ids,
            tokenizer=tokenizer,
        ).save(directory / name)
    for old in storage.OLD_INDEX_DIRS:
        shutil.rmtree(directory / old, ignore_errors=True)
    state = {
        "format": storage.INDEX_FORMAT,
        "lexical_format": storage.LEXICAL_FORMAT,
        "generation": generation,
        "manual_chunks": len(ids),
        "qa_rows": len(rows),
    }
    with atomic_path(directory / storage.STATE_FILE) as tmp:
        tmp.write_text(json.dumps(state), encoding="utf-8")
