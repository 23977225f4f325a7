"""Q/A vectors in Qdrant: embedded local mode inside the index, or a Qdrant server by URL.

Without ``KEIRI_QDRANT_URL`` the vectors live in ``<index>/qdrant`` through
``QdrantClient(path=...)`` (no server, no network); with it, the same code talks to that server.
One collection per index and embedding model (``keiri_helpdesk_qa_<index id>_<model>``), so a
model change never mixes vectors, and two indexes can share one server.

Vectors come from the LLM layer's embedder through the on-disk embedding cache
(``KEIRI_CACHE_DIR``): :meth:`QAVectorStore.sync` compares each point's stored text hash with
the Q/A table and embeds only pairs that are new or changed; deleted pairs are removed.

Qdrant's local mode locks its folder: only one client per process may open it, so local
clients are shared per path within the process. Another process holding the folder is a clear
error (use a Qdrant server for concurrent access).
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.agents.helpdesk.knowledge.models import QAPair
from keiri_agent.agents.helpdesk.knowledge.storage import QDRANT_DIR
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.retrieval.dense import EmbeddingCache, embed_cached, embedding_model_key

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from keiri_agent.config import Settings
    from keiri_agent.llm import EmbeddingClient

__all__ = ["COLLECTION_PREFIX", "QAVectorStore", "collection_name", "release_local"]

logger = logging.getLogger(__name__)

COLLECTION_PREFIX = "keiri_helpdesk_qa"
UPSERT_BATCH = 256
SCROLL_PAGE = 1_000
# Local mode: one client per folder and process, with a lock that serializes its use (the
# embedded engine is plain Python over in-memory arrays; the agent searches from threads).
_LOCAL_CLIENTS: dict[str, tuple[QdrantClient, threading.RLock]] = {}
_LOCAL_LOCK = threading.Lock()


def collection_name(index_id: str, model_key: str) -> str:
    """``keiri_helpdesk_qa_<index id>_<readable model>_<model hash>``."""
    readable = re.sub(r"[^a-z0-9]+", "_", model_key.lower()).strip("_")[:40]
    digest = hashlib.sha256(model_key.encode("utf-8")).hexdigest()[:8]
    return f"{COLLECTION_PREFIX}_{index_id}_{readable}_{digest}"


def _text_hash(pair: QAPair) -> str:
    return hashlib.sha256(pair.text.encode("utf-8")).hexdigest()[:16]


@contextmanager
def _qdrant_errors(location: str) -> Iterator[None]:
    """Turn Qdrant client failures into a Japanese BlockError naming where Qdrant is."""
    try:
        yield
    except BlockError:
        raise
    except Exception as exc:
        text = str(exc)
        if "already accessed by another instance" in text:
            raise BlockError(
                f"Q/A のベクトル保存先（{location}）を別のプロセスが使用中です。",
                code=ErrorCode.PERMISSION_DENIED,
                hint="同じナレッジベースを開いている別の keiri-agent（UI や CLI）を終了するか、"
                "複数のプロセスから使う場合は KEIRI_QDRANT_URL で Qdrant サーバーを指定してください。",
                details={"qdrant": location},
                recoverable=True,
            ) from exc
        raise BlockError(
            f"Qdrant（{location}）の操作に失敗しました: {type(exc).__name__}: {text[:300]}",
            code=ErrorCode.API_ERROR,
            hint="KEIRI_QDRANT_URL のサーバーが起動しているか、URL が正しいか確認してください。"
            "未設定ならインデックス内の qdrant フォルダを使います（壊れている場合は削除して"
            " `keiri-agent helpdesk ingest` を再実行すると作り直されます）。",
            details={"qdrant": location},
            recoverable=True,
        ) from exc


@atexit.register
def _close_local_clients() -> None:
    # Closed here, while the interpreter still works: QdrantClient.__del__ at shutdown fails.
    with _LOCAL_LOCK:
        clients = list(_LOCAL_CLIENTS.values())
        _LOCAL_CLIENTS.clear()
    for client, _ in clients:
        client.close()


def _local_client(path: Path) -> tuple[QdrantClient, threading.RLock]:
    from qdrant_client import QdrantClient

    key = str(path.resolve())
    with _LOCAL_LOCK:
        entry = _LOCAL_CLIENTS.get(key)
        if entry is None:
            path.mkdir(parents=True, exist_ok=True)
            with _qdrant_errors(f"local:{path}"):
                client = QdrantClient(path=key, force_disable_check_same_thread=True)
            entry = _LOCAL_CLIENTS[key] = (client, threading.RLock())
        return entry


def release_local(index_dir: Path) -> None:
    """Close this process's local client for ``index_dir`` (before deleting the folder)."""
    key = str((index_dir / QDRANT_DIR).resolve())
    with _LOCAL_LOCK:
        entry = _LOCAL_CLIENTS.pop(key, None)
    if entry is not None:
        entry[0].close()


class QAVectorStore:
    """The Q/A vectors of one index for one embedding model."""

    def __init__(
        self,
        client: QdrantClient,
        *,
        collection: str,
        location: str,
        embedder: EmbeddingClient,
        cache: EmbeddingCache | None,
        model_key: str,
        lock: AbstractContextManager[Any] | None = None,
        owns_client: bool = False,
    ) -> None:
        self.client = client
        self._lock = lock if lock is not None else nullcontext()
        self._owns_client = owns_client  # a server client of its own, closed by close()
        self.collection = collection
        self.location = location
        self.embedder = embedder
        self.cache = cache
        self.model_key = model_key

    @classmethod
    def connect(
        cls, index_dir: Path, *, index_id: str, settings: Settings, embedder: EmbeddingClient
    ) -> QAVectorStore:
        """The store for ``index_dir``: a Qdrant server if ``KEIRI_QDRANT_URL`` is set, else local."""
        model_key = embedding_model_key(embedder)
        lock: threading.RLock | None = None
        if settings.keiri_qdrant_url:
            from qdrant_client import QdrantClient

            location = settings.keiri_qdrant_url
            with _qdrant_errors(location):
                # No version probe at construction: an unreachable server would only warn there;
                # the first real call fails with a message naming the URL instead.
                client = QdrantClient(url=location, check_compatibility=False)
        else:
            path = index_dir / QDRANT_DIR
            location = f"local:{path}"
            client, lock = _local_client(path)
        return cls(
            client,
            collection=collection_name(index_id, model_key),
            location=location,
            embedder=embedder,
            cache=EmbeddingCache(settings.keiri_cache_dir),
            model_key=model_key,
            lock=lock,
            owns_client=lock is None,
        )

    def close(self) -> None:
        """Close a server client (local clients stay open for the process: see the docstring)."""
        if self._owns_client:
            self.client.close()

    def _stored(self) -> dict[int, str]:
        """Row → text hash of every point in the collection (empty when it does not exist)."""
        if not self.client.collection_exists(self.collection):
            return {}
        stored: dict[int, str] = {}
        offset: Any = None
        while True:
            points, offset = self.client.scroll(
                self.collection,
                limit=SCROLL_PAGE,
                offset=offset,
                with_payload=True,
                with_vectors=False,
            )
            for point in points:
                payload = point.payload or {}
                stored[int(point.id)] = str(payload.get("hash", ""))
            if offset is None:
                return stored

    def sync(self, pairs: Mapping[int, QAPair]) -> int:
        """Make the collection hold exactly ``pairs``; returns how many were sent to the model."""
        from qdrant_client import models

        with self._lock, _qdrant_errors(self.location):
            stored = self._stored()
            wanted = {row: _text_hash(pair) for row, pair in pairs.items()}
            stale = sorted(row for row, digest in wanted.items() if stored.get(row) != digest)
            extra = sorted(set(stored) - set(wanted))
            if not stale and not extra:
                return 0
            vectors, sent = self._embed(pairs, stale)
            exists = self.client.collection_exists(self.collection)
            if exists and vectors and self._size() != int(vectors[0].shape[0]):
                # The model now returns another dimension: start the collection afresh.
                self.client.delete_collection(self.collection)
                exists, extra, stale = False, [], sorted(wanted)
                vectors, more = self._embed(pairs, stale)
                sent += more
            if not exists and vectors:
                self.client.create_collection(
                    self.collection,
                    vectors_config=models.VectorParams(
                        size=int(vectors[0].shape[0]), distance=models.Distance.COSINE
                    ),
                )
            if extra and exists:
                self.client.delete(
                    self.collection, points_selector=models.PointIdsList(points=list(extra))
                )
            points = [
                models.PointStruct(
                    id=row, vector=vector.tolist(), payload={"row": row, "hash": wanted[row]}
                )
                for row, vector in zip(stale, vectors, strict=True)
            ]
            for start in range(0, len(points), UPSERT_BATCH):
                self.client.upsert(self.collection, points=points[start : start + UPSERT_BATCH])
        logger.info(
            "Q/A vectors synced to %s (%s): %d upserted (%d embedded), %d deleted",
            self.collection,
            self.location,
            len(stale),
            sent,
            len(extra),
        )
        return sent

    def _embed(self, pairs: Mapping[int, QAPair], rows: list[int]) -> tuple[list[Any], int]:
        return embed_cached(
            self.embedder,
            [pairs[row].text for row in rows],
            kind="document",
            cache=self.cache,
            model_key=self.model_key,
        )

    def _size(self) -> int | None:
        info = self.client.get_collection(self.collection)
        vectors = info.config.params.vectors
        size = getattr(vectors, "size", None)
        return int(size) if size is not None else None

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest Q/A rows by cosine similarity: ``(row, score)``, best first."""
        (vector,), _ = embed_cached(
            self.embedder, [query], kind="query", cache=self.cache, model_key=self.model_key
        )
        with self._lock, _qdrant_errors(self.location):
            if not self.client.collection_exists(self.collection):
                return []
            result = self.client.query_points(
                self.collection, query=vector.tolist(), limit=k, with_payload=False
            )
        return [(int(point.id), float(point.score)) for point in result.points]

    def count(self) -> int:
        with self._lock, _qdrant_errors(self.location):
            if not self.client.collection_exists(self.collection):
                return 0
            return int(self.client.count(self.collection).count)
