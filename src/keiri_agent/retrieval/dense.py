"""Dense retrieval: embeddings from the LLM layer, cached on disk, ranked by cosine similarity.

Vectors come from :class:`keiri_agent.llm.EmbeddingClient` (``KEIRI_LLM_MODEL_EMBEDDING``); this
module never builds a model itself. :class:`EmbeddingCache` keeps every vector in one SQLite file
under ``KEIRI_CACHE_DIR``, keyed by the SHA-256 of (model, kind, text): a document or block spec
that has not changed is never embedded again, and a different model never reuses another's vectors.
Documents and queries are cached separately because some models embed them differently.

Texts longer than ``max_chars`` are embedded by their first ``max_chars`` characters (models
refuse longer inputs); the limit is an argument and reported on the index.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast

import numpy as np
import numpy.typing as npt

from keiri_agent.config import LLMRole
from keiri_agent.errors import (
    ConfigurationError,
    ErrorCode,
    FileProcessingError,
    LLMOutputError,
    cause_of,
    reason_of,
)
from keiri_agent.retrieval.hits import Hit

if TYPE_CHECKING:  # the LLM layer is imported only by whoever builds an embedder
    from keiri_agent.llm import EmbeddingClient

__all__ = [
    "CACHE_FILE",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_EMBED_CHARS",
    "DenseHit",
    "DenseIndex",
    "EmbeddingCache",
    "TextEmbedder",
    "cosine_scores",
    "embed_cached",
    "embedding_model_key",
]

CACHE_FILE = "embeddings.sqlite3"
DEFAULT_BATCH_SIZE = 64  # texts per embeddings request
DEFAULT_MAX_EMBED_CHARS = 6_000  # below the 8,191-token input limit of common embedding models
EmbedKind = Literal["document", "query"]
FloatMatrix = npt.NDArray[np.float32]


class TextEmbedder(Protocol):
    """What :func:`embed_cached` needs of an embedder: the LLM layer's ``EmbeddingClient`` (a
    provider) or :class:`~keiri_agent.retrieval.local_embedding.LocalEmbedder` (the bundled
    model, which also names itself with ``model_key``)."""

    @property
    def configured(self) -> bool: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def embedding_model_key(embedder: EmbeddingClient | TextEmbedder) -> str:
    """The name cache entries are filed under: the configured ``provider:model``, or the local
    model's own key."""
    own = getattr(embedder, "model_key", None)
    if isinstance(own, str):
        return own
    client = cast("EmbeddingClient", embedder)
    ref = client.settings.model_for(LLMRole.EMBEDDING)
    if ref is not None:
        return str(ref)
    if client.configured:  # a model object injected without a setting
        model = client.embeddings
        name = getattr(model, "model", None) or getattr(model, "model_name", None) or ""
        return f"custom:{type(model).__module__}.{type(model).__qualname__}:{name}"
    raise _not_configured()


def _not_configured() -> ConfigurationError:
    return ConfigurationError(
        "埋め込みモデルが設定されていないため、dense 検索はできません。",
        hint="KEIRI_LLM_MODEL_EMBEDDING に provider:model（例: openai:text-embedding-3-small）を"
        "設定するか、BM25 で検索してください。",
        details={"variable": "KEIRI_LLM_MODEL_EMBEDDING"},
    )


class EmbeddingCache:
    """Vectors on disk, keyed by SHA-256 of (model, kind, text); safe across threads and processes."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.path = self.directory / CACHE_FILE
        self._lock = threading.Lock()
        self._ready = False

    @staticmethod
    def key(model: str, kind: EmbedKind, text: str) -> str:
        payload = "\0".join((model, kind, text)).encode("utf-8")
        return hashlib.sha256(payload).hexdigest()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            with self._lock:
                if not self._ready:
                    self.directory.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise self._error(exc) from exc
        try:
            with connection:
                if not self._ready:
                    connection.execute(
                        "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY,"
                        " model TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL)"
                    )
                    self._ready = True
                yield connection
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        finally:
            connection.close()

    def _error(self, exc: BaseException) -> FileProcessingError:
        return FileProcessingError(
            str(self.path),
            f"埋め込みキャッシュ {self.path} を読み書きできません: {reason_of(exc)}",
            code=ErrorCode.FILE_UNREADABLE,
            hint="KEIRI_CACHE_DIR の場所に書き込めるか確認してください。壊れている場合は"
            f" {self.path} を削除すると作り直されます（埋め込みは再計算されます）。",
            details={"cause": cause_of(exc)},
        )

    def get_many(self, keys: Sequence[str]) -> dict[str, FloatMatrix]:
        """The cached vectors among ``keys`` (missing keys are simply absent)."""
        found: dict[str, FloatMatrix] = {}
        if not keys or not self.path.exists():
            return found
        with self._connect() as connection:
            unique = list(dict.fromkeys(keys))
            for start in range(0, len(unique), 500):  # SQLite's host-parameter limit
                batch = unique[start : start + 500]
                marks = ",".join("?" * len(batch))
                rows = connection.execute(
                    f"SELECT key, dim, vector FROM embeddings WHERE key IN ({marks})", batch
                )
                for key, dim, blob in rows:
                    vector = np.frombuffer(blob, dtype="<f4")
                    if vector.size != dim:
                        raise self._error(ValueError(f"entry {key[:12]} has the wrong length"))
                    found[key] = vector.astype(np.float32)
        return found

    def put_many(self, model: str, items: Mapping[str, Sequence[float]]) -> None:
        """Store vectors (replacing entries with the same key)."""
        if not items:
            return
        rows = []
        for key, vector in items.items():
            array = np.asarray(vector, dtype="<f4")
            rows.append((key, model, int(array.size), array.tobytes()))
        with self._connect() as connection:
            connection.executemany(
                "INSERT OR REPLACE INTO embeddings (key, model, dim, vector) VALUES (?, ?, ?, ?)",
                rows,
            )

    def __len__(self) -> int:
        if not self.path.exists():
            return 0
        with self._connect() as connection:
            (count,) = connection.execute("SELECT COUNT(*) FROM embeddings").fetchone()
            return int(count)


@dataclass(frozen=True, slots=True)
class DenseHit(Hit):
    """One search result whose ``score`` is the cosine similarity of document and query."""


def cosine_scores(matrix: FloatMatrix, vector: FloatMatrix) -> FloatMatrix:
    """Cosine similarity of ``vector`` with each row of ``matrix`` (0 for zero vectors)."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    if matrix.shape[1] != vector.shape[0]:
        raise ValueError(
            f"query vector has {vector.shape[0]} dimensions, the index {matrix.shape[1]}"
        )
    norms = np.linalg.norm(matrix, axis=1)
    query_norm = float(np.linalg.norm(vector))
    if query_norm == 0.0:
        return np.zeros(matrix.shape[0], dtype=np.float32)
    safe = np.where(norms == 0.0, 1.0, norms)
    result = (matrix @ vector) / (safe * query_norm)
    return np.where(norms == 0.0, 0.0, result).astype(np.float32)


class DenseIndex:
    """Document embeddings searchable by cosine similarity (build with :meth:`build`)."""

    def __init__(
        self,
        *,
        ids: Sequence[str],
        matrix: FloatMatrix,
        embedder: EmbeddingClient,
        cache: EmbeddingCache | None,
        model_key: str,
        max_chars: int,
    ) -> None:
        self._ids = list(ids)
        self.matrix = matrix
        self.embedder = embedder
        self.cache = cache
        self.model_key = model_key
        self.max_chars = max_chars
        self.embedded_documents = 0  # how many documents this build sent to the model

    @classmethod
    def build(
        cls,
        texts: Sequence[str],
        *,
        embedder: EmbeddingClient,
        cache: EmbeddingCache | None = None,
        ids: Sequence[str] | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_chars: int = DEFAULT_MAX_EMBED_CHARS,
    ) -> DenseIndex:
        """Embed ``texts`` (cached ones are read from ``cache``, the rest sent in batches)."""
        if not embedder.configured:
            raise _not_configured()
        doc_ids = [str(i) for i in range(len(texts))] if ids is None else list(ids)
        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} ids for {len(texts)} documents")
        model_key = embedding_model_key(embedder)
        index = cls(
            ids=doc_ids,
            matrix=np.zeros((0, 0), dtype=np.float32),
            embedder=embedder,
            cache=cache,
            model_key=model_key,
            max_chars=max_chars,
        )
        vectors, sent = index._embed(list(texts), "document", batch_size=batch_size)
        index.matrix = _stack(vectors)
        index.embedded_documents = sent
        return index

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> list[str]:
        return list(self._ids)

    def embed_query(self, query: str) -> FloatMatrix:
        (vector,), _ = self._embed([query], "query", batch_size=1)
        return vector

    def scores(self, query: str) -> FloatMatrix:
        """Cosine similarity of every document with ``query`` (in -1..1)."""
        if not self._ids:
            return np.zeros(0, dtype=np.float32)
        return cosine_scores(self.matrix, self.embed_query(query))

    def search(self, query: str, k: int = 10) -> list[DenseHit]:
        """The ``k`` most similar documents, best first (ties by corpus order)."""
        if k < 1:
            raise ValueError("k must be at least 1")
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")[:k]
        return [DenseHit(int(i), self._ids[int(i)], float(scores[int(i)])) for i in order]

    def _embed(
        self, texts: list[str], kind: EmbedKind, *, batch_size: int
    ) -> tuple[list[FloatMatrix], int]:
        return embed_cached(
            self.embedder,
            texts,
            kind=kind,
            cache=self.cache,
            model_key=self.model_key,
            batch_size=batch_size,
            max_chars=self.max_chars,
        )


def embed_cached(
    embedder: EmbeddingClient | TextEmbedder,
    texts: Sequence[str],
    *,
    kind: EmbedKind,
    cache: EmbeddingCache | None,
    model_key: str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_chars: int = DEFAULT_MAX_EMBED_CHARS,
) -> tuple[list[FloatMatrix], int]:
    """Vectors for ``texts`` (cached ones from ``cache``, the rest from the model in batches).

    Returns the vectors in input order and how many distinct texts were sent to the model.
    Each text is embedded by its first ``max_chars`` characters.
    """
    if not embedder.configured:
        raise _not_configured()
    key_model = model_key or embedding_model_key(embedder)
    clipped = [text[:max_chars] for text in texts]
    keys = [EmbeddingCache.key(key_model, kind, text) for text in clipped]
    known = cache.get_many(keys) if cache is not None else {}
    missing = list(dict.fromkeys(key for key in keys if key not in known))
    text_of = dict(zip(keys, clipped, strict=True))
    step = max(1, batch_size)
    for start in range(0, len(missing), step):
        batch = missing[start : start + step]
        batch_texts = [text_of[key] for key in batch]
        if kind == "query":
            raw = [embedder.embed_query(text) for text in batch_texts]
        else:
            raw = embedder.embed_documents(batch_texts)
        if len(raw) != len(batch):
            raise LLMOutputError(
                f"埋め込みモデル {key_model} が {len(batch)} 件の入力に"
                f" {len(raw)} 件のベクトルを返しました。",
                hint="KEIRI_LLM_MODEL_EMBEDDING が埋め込みモデルを指しているか確認してください。",
                details={"model": key_model},
            )
        fresh = {key: vector for key, vector in zip(batch, raw, strict=True)}
        if cache is not None:
            cache.put_many(key_model, fresh)
        known.update({key: np.asarray(v, dtype=np.float32) for key, v in fresh.items()})
    return [known[key] for key in keys], len(missing)


def _stack(vectors: list[FloatMatrix]) -> FloatMatrix:
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    sizes = {vector.shape[0] for vector in vectors}
    if len(sizes) != 1:
        raise ConfigurationError(
            f"埋め込みベクトルの次元がそろっていません: {sorted(sizes)}",
            hint="埋め込みモデルを変えた直後なら、KEIRI_CACHE_DIR のキャッシュを削除して再実行してください。",
            details={"dimensions": sorted(sizes)},
        )
    return np.vstack(vectors).astype(np.float32)
