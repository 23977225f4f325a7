"""Dense retrieval against the scripted OpenAI-compatible server: cosine ranking and the cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from keiri_agent.errors import ConfigurationError, FileProcessingError
from keiri_agent.llm import get_embedder
from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.dense import (
    CACHE_FILE,
    DenseIndex,
    EmbeddingCache,
    cosine_scores,
)
from keiri_agent.retrieval.hybrid import HybridIndex
from tests.support.llm_server import ScriptedLLMServer

DOCS = [
    "入金消込: 銀行の入金明細と請求一覧を突合します",
    "経費精算の規程: 領収書を添付して申請します",
    "月次売上を得意先別に集計してグラフにします",
]
IDS = ["reconcile", "expense", "sales"]


@pytest.fixture
def embedding_model(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:scripted-embed")


def _inputs(server: ScriptedLLMServer) -> list[str]:
    texts: list[str] = []
    for body in server.embedding_requests():
        raw = body["input"]
        texts.extend(raw if isinstance(raw, list) else [raw])
    return texts


@pytest.mark.usefixtures("embedding_model")
def test_dense_search_ranks_by_cosine_similarity(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    index = DenseIndex.build(DOCS, ids=IDS, embedder=get_embedder(), cache=EmbeddingCache(tmp_path))
    hits = index.search("銀行の入金明細を請求一覧と突合したい", k=3)
    assert next(h.id for h in hits) == "reconcile"
    assert all(-1.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].score > hits[1].score
    assert llm_server.embedding_requests()[0]["model"] == "scripted-embed"


@pytest.mark.usefixtures("embedding_model")
def test_the_cache_prevents_embedding_the_same_text_twice(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    cache = EmbeddingCache(tmp_path / "cache")
    first = DenseIndex.build(DOCS, ids=IDS, embedder=get_embedder(), cache=cache)
    first.scores("入金消込")
    requests = len(llm_server.embedding_requests())
    assert first.embedded_documents == len(DOCS)
    assert (tmp_path / "cache" / CACHE_FILE).is_file()

    # A new index (a new process, say) over the same texts asks the model for nothing.
    again = DenseIndex.build(DOCS, ids=IDS, embedder=get_embedder(), cache=cache)
    assert again.embedded_documents == 0
    assert np.allclose(again.scores("入金消込"), first.scores("入金消込"))
    assert len(llm_server.embedding_requests()) == requests

    # One changed document: only that one is sent.
    changed = [*DOCS[:2], "月次売上を商品別に集計します"]
    DenseIndex.build(changed, ids=IDS, embedder=get_embedder(), cache=cache)
    assert _inputs(llm_server)[-1:] == ["月次売上を商品別に集計します"]
    assert len(llm_server.embedding_requests()) == requests + 1


def test_another_model_never_reuses_cached_vectors(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache = EmbeddingCache(tmp_path)
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:scripted-embed")
    DenseIndex.build(DOCS, embedder=get_embedder(), cache=cache)
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:other-embed")
    other = DenseIndex.build(DOCS, embedder=get_embedder(), cache=cache)
    assert other.embedded_documents == len(DOCS)
    assert llm_server.embedding_requests()[-1]["model"] == "other-embed"
    assert len(cache) == 2 * len(DOCS)


def test_dense_without_an_embedding_model_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        DenseIndex.build(DOCS, embedder=get_embedder(), cache=EmbeddingCache(tmp_path))
    assert "KEIRI_LLM_MODEL_EMBEDDING" in info.value.hint


@pytest.mark.usefixtures("embedding_model")
def test_a_damaged_cache_file_is_reported_not_ignored(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    with pytest.raises(FileProcessingError, match="埋め込みキャッシュ") as info:
        DenseIndex.build(DOCS, embedder=get_embedder(), cache=EmbeddingCache(tmp_path))
    assert "削除" in info.value.hint


@pytest.mark.usefixtures("embedding_model")
def test_hybrid_index_combines_both_and_keeps_the_components(tmp_path: Path) -> None:
    bm25 = BM25Index.build(DOCS, ids=IDS)
    dense = DenseIndex.build(DOCS, ids=IDS, embedder=get_embedder(), cache=EmbeddingCache(tmp_path))
    hybrid = HybridIndex(bm25, dense, dense_weight=0.5)
    hits = hybrid.search("領収書を添付した経費の申請", k=2)
    assert hits[0].id == "expense"
    assert hits[0].bm25 > 0
    assert 0 < hits[0].dense <= 1
    assert 0.0 <= hits[-1].score <= hits[0].score <= 1.0


def test_cosine_handles_zero_vectors_and_dimension_mismatch() -> None:
    matrix = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]], dtype=np.float32)
    scores = cosine_scores(matrix, np.array([2.0, 0.0], dtype=np.float32))
    assert scores.tolist() == pytest.approx([1.0, 0.0, 2**-0.5])
    assert cosine_scores(matrix, np.zeros(2, dtype=np.float32)).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="dimensions"):
        cosine_scores(matrix, np.ones(3, dtype=np.float32))
