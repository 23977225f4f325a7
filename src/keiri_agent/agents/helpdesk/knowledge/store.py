"""``KnowledgeBase``: the searchable help-desk index (manual chunks and Q/A pairs).

- ``search_manual``: lexical search over the manual chunks (:class:`LexicalIndex`: Sudachi
  words with spelling variants, character bigrams and reading bigrams, one calibrated 0..1
  score). Exact terms still win, which error codes (``E-1004``) and screen names need.
- ``search_qa``: the same over the Q/A pairs, fused by reciprocal rank fusion with semantic
  search in Qdrant (``qa_mode == "dense"``) when an embedding model is configured. The mode is
  logged at INFO when the base is opened and shown by :meth:`KnowledgeBase.stats`.
- ``search_hybrid``: both sources in one ranking (see :mod:`.ranking`: calibrated lexical
  scores, RRF with the dense ranking; no per-source normalization that crowns the best Q/A).

With the local model (no provider embedding model, ``KEIRI_HELPDESK_SEMANTIC`` on: the
default), every tool fuses lexical and semantic search over the same texts, and the floor is
decided on the question's coverage as well as each hit (:mod:`.ranking`, :mod:`.semantic`).

Every search applies the relevance floor (``KEIRI_HELPDESK_MIN_RELEVANCE``, or
``min_relevance=`` per call): hits below it are left out, so an empty list means 該当なし.
``rank()`` returns the candidates with their ``above_floor`` flag instead (for evaluation and
for showing what the floor removed).

The base is safe to search from several threads (the help-desk agent runs subtasks in parallel).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.agents.helpdesk.knowledge import storage
from keiri_agent.agents.helpdesk.knowledge.models import (
    KnowledgeStats,
    QAMode,
    SearchOutput,
    Source,
)
from keiri_agent.agents.helpdesk.knowledge.ranking import (
    Candidate,
    Coverage,
    apply_floor,
    fuse_dense,
    interleave,
    lexical_candidates,
    merge,
)
from keiri_agent.agents.helpdesk.knowledge.semantic import (
    SemanticSearch,
    local_semantic,
    open_semantic,
    provider_embedder,
)
from keiri_agent.errors import BlockError, ErrorCode, input_error
from keiri_agent.retrieval.lexical import LexicalIndex
from keiri_agent.retrieval.normalize import Spellings, split_questions
from keiri_agent.shell_words import typed

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.knowledge.qdrant import QAVectorStore
    from keiri_agent.config import Settings
    from keiri_agent.llm import EmbeddingClient

__all__ = ["HYBRID_MIN_POOL", "MAX_K", "TOOLS", "KnowledgeBase"]

logger = logging.getLogger(__name__)

MAX_K = 50  # results per search
HYBRID_MIN_POOL = 20  # candidates per source that are ranked and fused
TOOLS: tuple[Source | str, ...] = ("manual", "qa", "hybrid")


def _ingest_hint(directory: Path) -> str:
    return (
        "`keiri-agent helpdesk ingest --manual マニュアルのフォルダー --qa QA.csv"
        f" --index {typed(str(directory))}` で作成してください。"
    )


def _missing(directory: Path, message: str) -> BlockError:
    return BlockError(
        message,
        code=ErrorCode.DEPENDENCY_NOT_FOUND,
        hint=_ingest_hint(directory),
        details={"index_dir": str(directory)},
    )


class KnowledgeBase:
    """An opened index; build one with :meth:`open` (after ``ingest``)."""

    def __init__(
        self,
        directory: Path,
        *,
        db: storage.IndexDB,
        manual_index: LexicalIndex,
        qa_index: LexicalIndex,
        vectors: QAVectorStore | None,
        qa_mode_reason: str,
        min_relevance: float = 0.0,
        min_similarity: float = 1.0,
        semantic: SemanticSearch | None = None,
    ) -> None:
        self.directory = directory
        self._db = db
        self._manual = manual_index
        self._qa = qa_index
        self._vectors = vectors
        self._semantic = semantic
        dense = vectors is not None or semantic is not None
        self.qa_mode: QAMode = "dense" if dense else "bm25"
        self.qa_mode_reason = qa_mode_reason
        self._qa_rows = [int(i) for i in qa_index.ids]
        self.min_relevance = min_relevance
        self.min_similarity = min_similarity
        self._qa_file = db.get_meta("qa_file") or "qa.csv"
        self._qa_prefix = (db.get_meta("qa_sha256") or "qa")[:16]
        self._spellings: Spellings | None = None
        self._spellings_lock = threading.Lock()

    @classmethod
    def open(
        cls,
        index_dir: Path | str,
        *,
        settings: Settings | None = None,
        embedder: EmbeddingClient | None = None,
    ) -> KnowledgeBase:
        """Open the index written by ``ingest``; a missing, empty or half-written one is an error.

        With an embedding model configured, Q/A vectors missing from Qdrant (an index ingested
        without a model, or for another model) are added now, from the embedding cache when
        possible.
        """
        from keiri_agent.config import load_settings

        settings = settings or load_settings()
        directory = Path(index_dir)
        try:
            db = storage.IndexDB.open(directory, create=False)
        except FileNotFoundError:
            raise _missing(
                directory, f"ヘルプデスクのナレッジベース {directory} がありません。"
            ) from None
        try:
            generation = int(db.get_meta("generation") or 0)
            if storage.stale_indexes(directory, generation):
                raise BlockError(
                    f"ナレッジベース {directory} の前回の取り込みが完了していません。",
                    code=ErrorCode.FILE_UNREADABLE,
                    hint="同じ指定で `keiri-agent helpdesk ingest` をもう一度実行してください"
                    "（変更のないファイルは読み直しません）。",
                    details={"index_dir": str(directory)},
                )
            if db.chunk_count() == 0 and db.qa_count() == 0:
                raise _missing(
                    directory, f"ナレッジベース {directory} にはマニュアルも Q/A もありません。"
                )
            manual_index = LexicalIndex.load(directory / storage.MANUAL_LEXICAL_DIR)
            qa_index = LexicalIndex.load(directory / storage.QA_LEXICAL_DIR)
            vectors, reason = cls._qa_backend(directory, db, settings, embedder)
            local = local_semantic(settings) if vectors is None else None
            semantic = None
            if local is not None:
                semantic = SemanticSearch(
                    open_semantic(db, directory, local, settings), local, settings
                )
                reason = (
                    f"同梱の埋め込みモデル {local.name} による意味検索"
                    "（キーワード検索と融合。ネットワーク不要）"
                )
        except BaseException:
            db.close()
            raise
        kb = cls(
            directory,
            db=db,
            manual_index=manual_index,
            qa_index=qa_index,
            vectors=vectors,
            qa_mode_reason=reason,
            min_relevance=settings.keiri_helpdesk_min_relevance,
            min_similarity=settings.keiri_helpdesk_min_similarity,
            semantic=semantic,
        )
        logger.info(
            "help-desk knowledge base %s: search_qa mode %s (%s)", directory, kb.qa_mode, reason
        )
        return kb

    @staticmethod
    def _qa_backend(
        directory: Path, db: storage.IndexDB, settings: Settings, embedder: EmbeddingClient | None
    ) -> tuple[QAVectorStore | None, str]:
        embedder = provider_embedder(settings, embedder)
        if embedder is None or not embedder.configured:
            return None, (
                "埋め込みモデルが未設定（KEIRI_LLM_MODEL_EMBEDDING）のため、"
                "Q/A も BM25（キーワード一致）で検索します"
            )
        from keiri_agent.agents.helpdesk.knowledge.qdrant import QAVectorStore

        vectors = QAVectorStore.connect(
            directory, index_id=str(db.get_meta("index_id")), settings=settings, embedder=embedder
        )
        vectors.sync(db.qa_pairs())
        return vectors, (
            f"埋め込みモデル {vectors.model_key} による意味検索（Qdrant: {vectors.location}）"
        )

    def close(self) -> None:
        if self._vectors is not None:
            self._vectors.close()
        self._db.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- searching --------------------------------------------------------------------------

    def search_manual(
        self, query: str, k: int = 3, *, min_relevance: float | None = None
    ) -> list[SearchOutput]:
        """The ``k`` best manual chunks above the relevance floor, best first."""
        return self.search(query, k, tool="manual", min_relevance=min_relevance)

    def search_qa(
        self, query: str, k: int = 3, *, min_relevance: float | None = None
    ) -> list[SearchOutput]:
        """The ``k`` best Q/A pairs above the floor (lexical, fused with dense in dense mode)."""
        return self.search(query, k, tool="qa", min_relevance=min_relevance)

    def search_hybrid(
        self, query: str, k: int = 3, *, min_relevance: float | None = None
    ) -> list[SearchOutput]:
        """Manual chunks and Q/A pairs in one ranking, above the floor."""
        return self.search(query, k, tool="hybrid", min_relevance=min_relevance)

    def search(
        self, query: str, k: int = 3, *, tool: str = "manual", min_relevance: float | None = None
    ) -> list[SearchOutput]:
        """The ``k`` best hits of ``tool`` (manual / qa / hybrid) that pass the floor.

        An empty list means 該当なし: nothing reached the floor.
        """
        ranked = self.rank(query, k, tool=tool, min_relevance=min_relevance)
        return [hit for hit in ranked if hit.above_floor][:k]

    def rank(
        self, query: str, k: int = 3, *, tool: str = "manual", min_relevance: float | None = None
    ) -> list[SearchOutput]:
        """The best candidates of ``tool``, best first, each with its ``above_floor`` flag.

        Up to ``k`` candidates above the floor, and the first ``k`` below it that rank before
        the last of those (what the floor removed).
        """
        _check(query, k)
        if tool not in TOOLS:
            raise input_error(
                f"検索方法「{tool}」はありません。",
                "manual / qa / hybrid のどれかを指定してください。",
                tool=tool,
            )
        pool = max(k, HYBRID_MIN_POOL)
        floor = self.min_relevance if min_relevance is None else min_relevance
        rankings = []
        for question in self.questions_of(query):
            if self._semantic is not None:
                rankings.append(
                    self._semantic.rank(question, self._manual, self._qa, tool, pool, floor)
                )
            else:
                rankings.append(self._lexical_ranking(question, tool, pool, floor))
        flagged = interleave(rankings)
        kept = weak = 0
        shown: list[Candidate] = []
        for candidate in flagged:
            if kept >= k:
                break
            if candidate.above_floor or weak < k:
                shown.append(candidate)
            kept += candidate.above_floor
            weak += not candidate.above_floor
        return self._outputs(shown)

    def coverage(self, query: str) -> Coverage | None:
        """Whether the knowledge base covers ``query`` and the signals behind it (None without
        semantic search)."""
        _check(query, 1)
        if self._semantic is None:
            return None
        found = [
            self._semantic.signals(question, self._manual, self._qa, HYBRID_MIN_POOL).coverage
            for question in self.questions_of(query)
        ]
        return max(found, key=lambda covered: covered.margin)  # covered if one question is

    def questions_of(self, message: str) -> list[str]:
        """What is searched for ``message``: each of its questions (no greeting, signature, URL
        or emoji) in one character form, kana written back as the documents write them
        (:mod:`keiri_agent.retrieval.normalize`). A message that asks several things is searched
        question by question, and the rankings are interleaved (:func:`.ranking.interleave`)."""
        with self._spellings_lock:
            if self._spellings is None:
                texts = [
                    *self._db.chunk_analyses()[1],
                    *(p.text for p in self._db.qa_pairs().values()),
                ]
                self._spellings = Spellings.from_texts(texts)
        return [self._spellings.respell(question) for question in split_questions(message)]

    def _lexical_ranking(self, query: str, tool: str, pool: int, floor: float) -> list[Candidate]:
        if tool == "manual":
            candidates, _ = lexical_candidates(self._manual, query, pool, "manual")
        elif tool == "qa":
            candidates = self._qa_ranking(query, pool)
        else:
            manual, _ = lexical_candidates(self._manual, query, pool, "manual")
            qa_lexical, relevance = lexical_candidates(self._qa, query, pool, "qa")
            candidates = merge(manual, qa_lexical)
            if self._vectors is not None:
                candidates = fuse_dense(
                    candidates,
                    self._dense(query, pool),
                    relevance,
                    min_similarity=self.min_similarity,
                )
        return apply_floor(candidates, min_relevance=floor, min_similarity=self.min_similarity)

    def _qa_ranking(self, query: str, pool: int) -> list[Candidate]:
        lexical, relevance = lexical_candidates(self._qa, query, pool, "qa")
        if self._vectors is None:
            return lexical
        return fuse_dense(lexical, self._dense(query, pool), relevance)

    def _dense(self, query: str, pool: int) -> list[tuple[str, float]]:
        assert self._vectors is not None
        return [(str(row), score) for row, score in self._vectors.search(query, pool)]

    def _outputs(self, candidates: list[Candidate]) -> list[SearchOutput]:
        chunks = self._db.chunks(c.key for c in candidates if c.source == "manual")
        pairs = self._db.qa_pairs(int(c.key) for c in candidates if c.source == "qa")
        outputs: list[SearchOutput] = []
        for c in candidates:
            extra = {
                "relevance": round(c.relevance, 6),
                "similarity": None if c.similarity is None else round(c.similarity, 6),
                "above_floor": c.above_floor,
            }
            if c.source == "manual" and c.key in chunks:
                outputs.append(self._manual_output(chunks[c.key], c.score).model_copy(update=extra))
            elif c.source == "qa" and int(c.key) in pairs:
                outputs.append(self._qa_output(pairs[int(c.key)], c.score).model_copy(update=extra))
        return outputs

    def _manual_output(self, chunk: Any, score: float) -> SearchOutput:
        return SearchOutput(
            file_name=chunk.file_name,
            content=chunk.text,
            page=chunk.page,
            row=None,
            chunk_id=chunk.id,
            score=round(float(score), 6),
            source="manual",
        )

    def _qa_output(self, pair: Any, score: float) -> SearchOutput:
        return SearchOutput(
            file_name=self._qa_file,
            content=pair.text,
            page=None,
            row=pair.row,
            chunk_id=f"{self._qa_prefix}-r{pair.row}",
            score=round(float(score), 6),
            source="qa",
        )

    # --- reporting --------------------------------------------------------------------------

    def stats(self) -> KnowledgeStats:
        files = self._db.files()
        return KnowledgeStats(
            index_dir=str(self.directory),
            files=len(files),
            chunks=len(self._manual),
            qa_rows=len(self._qa_rows),
            qa_file=self._db.get_meta("qa_file"),
            qa_mode=self.qa_mode,
            qa_mode_reason=self.qa_mode_reason,
            embedding_model=self._vectors.model_key if self._vectors is not None else None,
            semantic_model=self._semantic.model_name if self._semantic is not None else None,
            min_margin=self._semantic.min_margin if self._semantic is not None else None,
            qdrant=self._vectors.location if self._vectors is not None else None,
            ingested_at=self._db.get_meta("ingested_at"),
            file_names=sorted(record.file_name for record in files.values()),
            min_relevance=self.min_relevance,
        )


def _check(query: str, k: int) -> None:
    if not query or not query.strip():
        raise input_error(
            "検索語が空です。",
            "調べたい言葉（エラーコード、画面名、質問文など）を指定してください。",
        )
    if not 1 <= k <= MAX_K:
        raise input_error(
            f"件数 k は 1〜{MAX_K} で指定してください（指定値: {k}）。", "既定は 3 件です。", k=k
        )
