"""``KnowledgeBase``: the searchable help-desk index (manual chunks and Q/A pairs).

- ``search_manual``: BM25 with the Sudachi tokenizer over the manual chunks. Exact terms win,
  which is what error codes (``E-1004``), screen names and proper nouns need.
- ``search_qa``: semantic search over the Q/A pairs with the LLM layer's embeddings in Qdrant
  (``qa_mode == "dense"``) when an embedding model is configured; otherwise BM25 over the
  question and answer text (``qa_mode == "bm25"``). The choice is logged at INFO when the base
  is opened and shown by :meth:`KnowledgeBase.stats`, never made silently.
- ``search_hybrid``: both sources in one ranking. Each source's candidate scores are min-max
  normalized for the query (``keiri_agent.retrieval.hybrid``); in dense mode the Q/A side
  fuses its BM25 and cosine scores first. On equal scores a Q/A pair comes before a manual
  chunk (a matching FAQ answer is complete and short).

The base is safe to search from several threads (the help-desk agent runs subtasks in parallel).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from keiri_agent.agents.helpdesk.knowledge import storage
from keiri_agent.agents.helpdesk.knowledge.models import KnowledgeStats, QAMode, SearchOutput
from keiri_agent.config import LLMRole
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.hybrid import fuse, minmax

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.knowledge.qdrant import QAVectorStore
    from keiri_agent.config import Settings
    from keiri_agent.llm import EmbeddingClient

__all__ = ["HYBRID_MIN_POOL", "MAX_K", "KnowledgeBase"]

logger = logging.getLogger(__name__)

MAX_K = 50  # results per search
HYBRID_MIN_POOL = 20  # candidates per source that hybrid ranking normalizes over


def _ingest_hint(directory: Path) -> str:
    return (
        "`keiri-agent helpdesk ingest --manual マニュアルのフォルダー --qa QA.csv"
        f" --index {directory}` で作成してください。"
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
        manual_index: BM25Index,
        qa_index: BM25Index,
        vectors: QAVectorStore | None,
        qa_mode_reason: str,
    ) -> None:
        self.directory = directory
        self._db = db
        self._manual = manual_index
        self._qa = qa_index
        self._vectors = vectors
        self.qa_mode: QAMode = "dense" if vectors is not None else "bm25"
        self.qa_mode_reason = qa_mode_reason
        self._qa_rows = [int(i) for i in qa_index.ids]
        self._qa_file = db.get_meta("qa_file") or "qa.csv"
        self._qa_prefix = (db.get_meta("qa_sha256") or "qa")[:16]

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
            state = storage.read_state(directory)
            generation = int(db.get_meta("generation") or 0)
            if state is None or state.get("generation") != generation:
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
            manual_index = BM25Index.load(directory / storage.MANUAL_BM25_DIR)
            qa_index = BM25Index.load(directory / storage.QA_BM25_DIR)
            vectors, reason = cls._qa_backend(directory, db, settings, embedder)
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
        )
        logger.info(
            "help-desk knowledge base %s: search_qa mode %s (%s)", directory, kb.qa_mode, reason
        )
        return kb

    @staticmethod
    def _qa_backend(
        directory: Path, db: storage.IndexDB, settings: Settings, embedder: EmbeddingClient | None
    ) -> tuple[QAVectorStore | None, str]:
        if embedder is None and settings.model_for(LLMRole.EMBEDDING) is not None:
            from keiri_agent.llm import get_embedder  # only with a model: the SDKs are slow to load

            embedder = get_embedder(settings=settings)
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

    def search_manual(self, query: str, k: int = 3) -> list[SearchOutput]:
        """The ``k`` manual chunks with the best BM25 score, best first."""
        _check(query, k)
        hits = self._manual.search(query, k)
        found = self._db.chunks(hit.id for hit in hits)
        return [self._manual_output(found[hit.id], hit.score) for hit in hits if hit.id in found]

    def search_qa(self, query: str, k: int = 3) -> list[SearchOutput]:
        """The ``k`` best Q/A pairs: semantic in dense mode, BM25 otherwise (see ``qa_mode``)."""
        _check(query, k)
        if self._vectors is not None:
            scored = self._vectors.search(query, k)
        else:
            scored = [(int(hit.id), hit.score) for hit in self._qa.search(query, k)]
        return self._qa_outputs(scored)

    def search_hybrid(self, query: str, k: int = 3) -> list[SearchOutput]:
        """Manual chunks and Q/A pairs in one ranking by per-source normalized scores."""
        _check(query, k)
        pool = max(k, HYBRID_MIN_POOL)
        manual_hits = self._manual.search(query, pool)
        manual_scores = minmax([hit.score for hit in manual_hits])
        qa_scored = self._qa_candidates(query, pool)
        ranked: list[tuple[float, int, int, Any]] = []
        for position, (row, score) in enumerate(qa_scored):
            ranked.append((-score, 0, position, row))
        for position, (hit, score) in enumerate(zip(manual_hits, manual_scores, strict=True)):
            ranked.append((-float(score), 1, position, hit.id))
        ranked.sort(key=lambda item: item[:3])
        top = ranked[:k]
        chunks = self._db.chunks(str(item[3]) for item in top if item[1] == 1)
        pairs = self._db.qa_pairs(int(item[3]) for item in top if item[1] == 0)
        outputs: list[SearchOutput] = []
        for negative, source, _, key in top:
            if source == 1 and key in chunks:
                outputs.append(self._manual_output(chunks[key], -negative))
            elif source == 0 and key in pairs:
                outputs.append(self._qa_output(pairs[key], -negative))
        return outputs

    def _qa_candidates(self, query: str, pool: int) -> list[tuple[int, float]]:
        """(row, normalized score) of the best Q/A candidates, best first."""
        if not self._qa_rows:
            return []
        bm25_all = self._qa.scores(query)
        if self._vectors is None:
            hits = self._qa.search(query, pool)
            scores = minmax([hit.score for hit in hits])
            return [(int(hit.id), float(s)) for hit, s in zip(hits, scores, strict=True)]
        dense = dict(self._vectors.search(query, pool))
        positions = {row: i for i, row in enumerate(self._qa_rows)}
        order = np.argsort(-bm25_all, kind="stable")[:pool]
        candidates = list(dict.fromkeys([*(self._qa_rows[int(i)] for i in order), *dense]))
        floor = min(dense.values()) if dense else 0.0
        fused = fuse(
            [str(row) for row in candidates],
            [float(bm25_all[positions[row]]) for row in candidates],
            [dense.get(row, floor) for row in candidates],
        )
        return [(int(hit.id), hit.score) for hit in fused]

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

    def _qa_outputs(self, scored: list[tuple[int, float]]) -> list[SearchOutput]:
        pairs = self._db.qa_pairs(row for row, _ in scored)
        return [self._qa_output(pairs[row], score) for row, score in scored if row in pairs]

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
            qdrant=self._vectors.location if self._vectors is not None else None,
            ingested_at=self._db.get_meta("ingested_at"),
            file_names=sorted(record.file_name for record in files.values()),
        )


def _check(query: str, k: int) -> None:
    if not query or not query.strip():
        raise BlockError(
            "検索語が空です。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="調べたい言葉（エラーコード、画面名、質問文など）を指定してください。",
        )
    if not 1 <= k <= MAX_K:
        raise BlockError(
            f"件数 k は 1〜{MAX_K} で指定してください（指定値: {k}）。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="既定は 3 件です。",
            details={"k": k},
        )
