"""The knowledge base's semantic vectors: manual chunks (as pieces) and Q/A pairs, on the local model.

With no provider embedding model configured (``KEIRI_LLM_MODEL_EMBEDDING``) and
``KEIRI_HELPDESK_SEMANTIC`` on (the default), ``ingest`` embeds every manual chunk
(:func:`~keiri_agent.retrieval.semantic.split_pieces`) and every Q/A pair with the model that
ships with the install (:mod:`keiri_agent.retrieval.local_embedding`) and writes them to
``<index>/semantic.npz``, stamped with the index generation and the model: a search needs no
network and no key. Texts are embedded through the embedding cache (``KEIRI_CACHE_DIR``), so
re-ingesting embeds only new or changed text.

Opening an index whose vectors are missing or stale (ingested with semantic search off, by an
older version, or interrupted) embeds them in memory from the stored text (through the cache)
and says so in the log; the next ``ingest`` writes them.

A provider model keeps its own path (Q/A vectors in Qdrant: :mod:`.qdrant`).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from keiri_agent.agents.helpdesk.knowledge import storage
from keiri_agent.agents.helpdesk.knowledge.ranking import (
    RELATIVE_WINDOW,
    SHARED_WORDS_TOP,
    Candidate,
    Coverage,
    apply_semantic_floor,
    coverage,
    fuse_semantic,
    lexical_candidates,
    merge,
)
from keiri_agent.config import LLMRole
from keiri_agent.retrieval.dense import EmbeddingCache
from keiri_agent.retrieval.normalize import normalize_text
from keiri_agent.retrieval.semantic import Background, SemanticIndex, embed_query, split_pieces

if TYPE_CHECKING:
    from keiri_agent.config import Settings
    from keiri_agent.llm import EmbeddingClient
    from keiri_agent.retrieval.lexical import LexicalIndex
    from keiri_agent.retrieval.local_embedding import LocalEmbedder

__all__ = [
    "SEMANTIC_FILE",
    "SEMANTIC_FORMAT",
    "SEMANTIC_STAMP",
    "SemanticSearch",
    "Signals",
    "build_semantic",
    "is_current",
    "local_semantic",
    "open_semantic",
    "provider_embedder",
]

logger = logging.getLogger(__name__)

SEMANTIC_FILE = "semantic.npz"
SEMANTIC_STAMP = "semantic.json"  # {generation, model, format}: what the vectors are of
# Bump when the pieces or the vectors stored per piece change: older files are embedded again.
SEMANTIC_FORMAT = 3  # 2: every piece also embedded in the form of a question; 3: NFKC pieces
_BACKGROUNDS: dict[str, Background] = {}  # by model key
_BACKGROUND_LOCK = threading.Lock()


def local_semantic(settings: Settings) -> LocalEmbedder | None:
    """The local model when the knowledge base searches with it: semantic search on and no
    provider embedding model configured (that one keeps its Qdrant path)."""
    if not settings.keiri_helpdesk_semantic or settings.model_for(LLMRole.EMBEDDING) is not None:
        return None
    from keiri_agent.retrieval.local_embedding import local_embedder

    return local_embedder()


def provider_embedder(
    settings: Settings, given: EmbeddingClient | None = None
) -> EmbeddingClient | None:
    """The provider embedding client of the knowledge base: ``given``, else the one of
    ``KEIRI_LLM_MODEL_EMBEDDING`` when it is set; None without one (the LLM SDKs, slow to load,
    are not loaded then)."""
    if given is not None or settings.model_for(LLMRole.EMBEDDING) is None:
        return given
    from keiri_agent.llm import get_embedder

    return get_embedder(settings=settings)


def _documents(db: storage.IndexDB) -> tuple[list[str], list[list[str]]]:
    ids, texts, _ = db.chunk_analyses()
    refs = [f"manual:{chunk_id}" for chunk_id in ids]
    pieces = [split_pieces(normalize_text(text)) or [normalize_text(text)] for text in texts]
    for row, pair in db.qa_pairs().items():
        refs.append(f"qa:{row}")
        pieces.append([normalize_text(pair.text)])
    return refs, pieces


def build_semantic(
    db: storage.IndexDB, directory: Path, embedder: LocalEmbedder, settings: Settings
) -> int:
    """Embed the index's texts and write ``semantic.npz``; returns how many texts the model got."""
    refs, pieces = _documents(db)
    index, sent = SemanticIndex.build(
        refs, pieces, embedder=embedder, cache=EmbeddingCache(settings.keiri_cache_dir)
    )
    index.save(directory / SEMANTIC_FILE)
    stamp = _stamp(db, index.model_key)
    (directory / SEMANTIC_STAMP).write_text(json.dumps(stamp), encoding="utf-8")
    return sent


def is_current(db: storage.IndexDB, directory: Path, model_key: str) -> bool:
    """Whether ``semantic.npz`` holds this index state's texts embedded by ``model_key``."""
    try:
        stamp = json.loads((directory / SEMANTIC_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(stamp == _stamp(db, model_key) and (directory / SEMANTIC_FILE).is_file())


def _stamp(db: storage.IndexDB, model_key: str) -> dict[str, object]:
    return {
        "generation": int(db.get_meta("generation") or 0),
        "model": model_key,
        "format": SEMANTIC_FORMAT,
    }


def open_semantic(
    db: storage.IndexDB, directory: Path, embedder: LocalEmbedder, settings: Settings
) -> SemanticIndex:
    """The stored vectors when they are of this index state and model, else embedded now."""
    if is_current(db, directory, embedder.model_key):
        return SemanticIndex.load(directory / SEMANTIC_FILE)
    logger.warning(
        "help-desk knowledge base %s: semantic vectors missing or stale; embedding them now "
        "(run `keiri-agent helpdesk ingest` to store them)",
        directory,
    )
    refs, pieces = _documents(db)
    index, _ = SemanticIndex.build(
        refs, pieces, embedder=embedder, cache=EmbeddingCache(settings.keiri_cache_dir)
    )
    return index


@dataclass(frozen=True, slots=True)
class Signals:
    """One question against the knowledge base: its coverage, the semantic ranking of every
    text (``source:key``, best first), the lexical candidates of each source and every text's
    lexical relevance (by ``source:key``)."""

    coverage: Coverage
    semantic: list[tuple[str, float]]
    manual: list[Candidate]
    qa: list[Candidate]
    relevance: dict[str, float]


class SemanticSearch:
    """The stored vectors, the local model and the background: one knowledge base's semantic
    side (safe to use from several threads: the model serializes its calls)."""

    def __init__(self, index: SemanticIndex, embedder: LocalEmbedder, settings: Settings) -> None:
        self.index = index
        self.embedder = embedder
        self.model_name = embedder.name
        self.min_margin = settings.keiri_helpdesk_min_margin
        self._cache = EmbeddingCache(settings.keiri_cache_dir)

    def background(self) -> Background:
        """The background embedded by this model: once per process (the texts are fixed)."""
        with _BACKGROUND_LOCK:
            found = _BACKGROUNDS.get(self.embedder.model_key)
            if found is None:
                found = _BACKGROUNDS[self.embedder.model_key] = Background(
                    self.embedder, self._cache
                )
            return found

    def signals(
        self, query: str, manual_index: LexicalIndex, qa_index: LexicalIndex, pool: int
    ) -> Signals:
        vector = embed_query(self.embedder, query, self._cache)
        sims = self.index.similarities(vector)
        refs = self.index.ids
        manual, manual_relevance = lexical_candidates(manual_index, query, pool, "manual")
        qa, qa_relevance = lexical_candidates(qa_index, query, pool, "qa")
        relevance = {f"manual:{key}": value for key, value in manual_relevance.items()}
        relevance.update({f"qa:{key}": value for key, value in qa_relevance.items()})
        order = sims.argsort(kind="stable")[::-1]
        semantic = [(refs[int(i)], float(sims[int(i)])) for i in order]
        background = self.background()
        covered = coverage(
            semantic[0][1] if semantic else -1.0,
            background.best(vector),
            max(relevance.values(), default=0.0),
            max((relevance.get(ref, 0.0) for ref, _ in semantic[:SHARED_WORDS_TOP]), default=0.0),
            as_question=self.index.best_as_question(vector) - background.best_as_question(vector),
            min_margin=self.min_margin,
        )
        return Signals(covered, semantic, manual, qa, relevance)

    def rank(
        self,
        query: str,
        manual_index: LexicalIndex,
        qa_index: LexicalIndex,
        tool: str,
        pool: int,
        min_relevance: float,
    ) -> list[Candidate]:
        """The fused candidates of ``tool`` (manual / qa / hybrid), flagged by the floor."""
        found = self.signals(query, manual_index, qa_index, pool)
        sources: tuple[str, ...]
        if tool == "manual":
            lexical, sources = found.manual, ("manual",)
        elif tool == "qa":
            lexical, sources = found.qa, ("qa",)
        else:
            lexical, sources = merge(found.manual, found.qa), ("manual", "qa")
        # Only texts near the question's best similarity vote: a code or a screen name has
        # little meaning, and far texts would push the ones that contain it down.
        near = found.coverage.best - RELATIVE_WINDOW
        ranked = [
            ref for ref, sim in found.semantic if sim >= near and ref.split(":", 1)[0] in sources
        ][:pool]
        candidates = fuse_semantic(lexical, ranked, dict(found.semantic), found.relevance)
        return apply_semantic_floor(candidates, found.coverage, min_relevance=min_relevance)
