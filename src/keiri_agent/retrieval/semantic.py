"""Semantic search over pieces of documents, and a question's distance from unrelated text.

A manual chunk holds several sections; a question usually matches one sentence of it, and the
embedding of the whole chunk dilutes that sentence. Each document is therefore embedded as
pieces (:func:`split_pieces`: lines and sentences, at most :data:`MAX_PIECE_CHARS` characters,
short ones joined) and a document's similarity to a question is that of its best piece. On the
help desk's evaluation sets this found the answering page in the top 3 for 93% of paraphrased
questions against 80% for whole chunks (benchmarks/README.md, helpdesk_floor.py).

Each piece is embedded twice: as a passage (what a search query is matched against) and as a
question (e5's ``query:`` form). The second is what a question about the documents looks like:
a question compared with the documents in the same form as with the background is a sharper
measure of whether they are about the same thing (:meth:`SemanticIndex.best_as_question`,
:meth:`Background.best_as_question`).

Embedding models put every text of a language in a narrow band of cosine similarity
(multilingual-e5: 0.80–0.95), so an absolute similarity does not say whether a question is
about the documents. :class:`Background` is a fixed set of unrelated text (everyday and
workplace questions about other things: the canteen, leave, meeting rooms, the weather…,
``background_ja.txt``): how much closer a question is to the documents than to that background
is a margin that does (see the help desk's ``knowledge.ranking``).

Vectors come through :func:`~keiri_agent.retrieval.dense.embed_cached`, so a text already
embedded by the same model is read from the cache; an index is saved as one ``.npz`` file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt

from keiri_agent.errors import ErrorCode, FileProcessingError, cause_of, reason_of
from keiri_agent.retrieval.dense import (
    EmbeddingCache,
    EmbedKind,
    FloatMatrix,
    TextEmbedder,
    embed_cached,
    embedding_model_key,
)

__all__ = [
    "MAX_PIECE_CHARS",
    "MIN_PIECE_CHARS",
    "Background",
    "SemanticIndex",
    "background_texts",
    "embed_query",
    "split_pieces",
]

MAX_PIECE_CHARS = 160  # about one or two sentences: what a question is usually answered by
MIN_PIECE_CHARS = 40  # shorter pieces (a heading, a table cell) are joined to the next one
BACKGROUND_FILE = "background_ja.txt"
_FORMS: tuple[EmbedKind, EmbedKind] = ("document", "query")  # as a passage, as a question
_SENTENCE_END = re.compile(r"(?<=[。！？!?])")


def split_pieces(text: str) -> list[str]:
    """``text`` as pieces of at most :data:`MAX_PIECE_CHARS` characters (longer sentences whole),
    cut at line ends and sentence ends; a piece shorter than :data:`MIN_PIECE_CHARS` is joined to
    the next. A text with no words gives no piece."""
    pieces: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        current = ""
        for sentence in _SENTENCE_END.split(line):
            if current and len(current) + len(sentence) > MAX_PIECE_CHARS:
                pieces.append(current)
                current = ""
            current += sentence
        if current:
            pieces.append(current)
    joined: list[str] = []
    for piece in pieces:
        if joined and len(joined[-1]) < MIN_PIECE_CHARS:
            joined[-1] = f"{joined[-1]} {piece}"
        else:
            joined.append(piece)
    return joined


def _normalized(matrix: FloatMatrix) -> FloatMatrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0.0, 1.0, norms)).astype(np.float32)


def _stacked(vectors: Sequence[FloatMatrix]) -> FloatMatrix:
    return _normalized(np.vstack(vectors)) if vectors else np.zeros((0, 0), np.float32)


class SemanticIndex:
    """Documents (by id) as embedded pieces; build with :meth:`build`, or :meth:`load` a saved one."""

    def __init__(
        self,
        ids: Sequence[str],
        owners: npt.NDArray[np.int32],
        matrix: FloatMatrix,
        questions: FloatMatrix,
        model_key: str,
    ) -> None:
        if not matrix.shape[0] == questions.shape[0] == owners.shape[0]:
            raise ValueError(
                f"{matrix.shape[0]} and {questions.shape[0]} vectors for {owners.shape[0]} pieces"
            )
        self.ids = list(ids)
        self.owners = owners
        self.matrix = matrix  # the pieces as passages
        self.questions = questions  # the same pieces in the form of a question
        self.model_key = model_key

    @classmethod
    def build(
        cls,
        ids: Sequence[str],
        pieces: Sequence[Sequence[str]],
        *,
        embedder: TextEmbedder,
        cache: EmbeddingCache | None,
        batch_size: int = 32,
    ) -> tuple[SemanticIndex, int]:
        """Embed every document's ``pieces`` as passages and as questions; returns the index and
        how many texts the model got (the others came from ``cache``)."""
        if len(ids) != len(pieces):
            raise ValueError(f"{len(ids)} ids for {len(pieces)} documents")
        model_key = embedding_model_key(embedder)
        flat = [piece for doc in pieces for piece in doc]
        owners = np.asarray(
            [position for position, doc in enumerate(pieces) for _ in doc], dtype=np.int32
        )
        matrices = []
        sent = 0
        for kind in _FORMS:
            vectors, count = embed_cached(
                embedder, flat, kind=kind, cache=cache, model_key=model_key, batch_size=batch_size
            )
            matrices.append(_stacked(vectors))
            sent += count
        return cls(ids, owners, matrices[0], matrices[1], model_key), sent

    def __len__(self) -> int:
        return len(self.ids)

    def similarities(self, query: FloatMatrix) -> FloatMatrix:
        """Each document's similarity to the (normalized) query vector: its best piece's."""
        best = np.full(len(self.ids), -1.0, dtype=np.float32)
        if self.matrix.shape[0]:
            np.maximum.at(best, self.owners, self.matrix @ query)
        return best

    def best_as_question(self, query: FloatMatrix) -> float:
        """The query's similarity to the nearest piece in the form of a question (-1 if none)."""
        return float((self.questions @ query).max()) if self.questions.shape[0] else -1.0

    # --- persistence ------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (a ``.npz`` file), replaced whole."""
        staging = path.with_name(path.name + ".tmp.npz")
        np.savez(
            staging,
            ids=np.asarray(self.ids, dtype=np.str_),
            owners=self.owners,
            matrix=self.matrix,
            questions=self.questions,
            model_key=np.asarray(self.model_key),
        )
        staging.replace(path)

    @classmethod
    def load(cls, path: Path) -> SemanticIndex:
        try:
            with np.load(path, allow_pickle=False) as data:
                return cls(
                    [str(i) for i in data["ids"]],
                    data["owners"].astype(np.int32),
                    data["matrix"].astype(np.float32),
                    data["questions"].astype(np.float32),
                    str(data["model_key"]),
                )
        except (OSError, KeyError, ValueError) as exc:
            raise FileProcessingError(
                str(path),
                f"意味検索のインデックス {path} を読めません: {reason_of(exc)}",
                code=ErrorCode.FILE_UNREADABLE,
                hint="`keiri-agent helpdesk ingest` をもう一度実行すると作り直されます。",
                details={"cause": cause_of(exc)},
            ) from exc


def embed_query(embedder: TextEmbedder, query: str, cache: EmbeddingCache | None) -> FloatMatrix:
    """The normalized vector of a search query."""
    (vector,), _ = embed_cached(embedder, [query], kind="query", cache=cache)
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm else vector).astype(np.float32)


@cache
def background_texts() -> tuple[str, ...]:
    """The unrelated text a question is compared with (one per line of ``background_ja.txt``)."""
    text = resources.files("keiri_agent.retrieval").joinpath(BACKGROUND_FILE).read_text("utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and line[0] != "#")


class Background:
    """The background texts embedded by one model (through the cache), as passages and as
    questions (as the documents' pieces are: :class:`SemanticIndex`)."""

    def __init__(self, embedder: TextEmbedder, cache: EmbeddingCache | None) -> None:
        texts = list(background_texts())
        self.matrix, self.questions = (
            _stacked(embed_cached(embedder, texts, kind=kind, cache=cache, batch_size=32)[0])
            for kind in _FORMS
        )

    def best(self, query: FloatMatrix) -> float:
        """The query's similarity to its nearest background text."""
        return float((self.matrix @ query).max())

    def best_as_question(self, query: FloatMatrix) -> float:
        """The query's similarity to its nearest background text in the form of a question."""
        return float((self.questions @ query).max())
