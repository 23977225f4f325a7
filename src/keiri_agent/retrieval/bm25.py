"""BM25 over Japanese text: bm25s's sparse index fed with :mod:`keiri_agent.retrieval.tokenize`.

``BM25Index.build(texts, ids=...)`` tokenizes and indexes a corpus; ``search(query, k)`` returns
the best hits with their scores; ``scores(query)`` the score of every document (for hybrid
ranking). ``save(directory)`` writes the index and its metadata (ids, tokenizer signature,
parameters) so a large corpus (manuals with 10,000+ chunks) is tokenized once; ``load``
refuses an index written with other tokenizer rules instead of answering with skewed scores.

Edge cases are explicit: an empty corpus is a valid index that finds nothing, and a query
without any indexable term (only particles or symbols) finds nothing rather than everything.
Query terms count once each: a long query (an instruction plus pasted documents) should not
let one repeated word outweigh the rest.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from keiri_agent.errors import ErrorCode, FileProcessingError
from keiri_agent.retrieval.tokenize import JapaneseTokenizer, get_tokenizer

__all__ = [
    "DEFAULT_B",
    "DEFAULT_K1",
    "INDEX_FORMAT",
    "BM25Hit",
    "BM25Index",
]

DEFAULT_K1 = 1.5
DEFAULT_B = 0.75
INDEX_FORMAT = 1  # version of the on-disk layout written by save()
META_FILE = "keiri_index.json"
BM25S_DIR = "bm25s"

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class BM25Hit:
    """One search result: the document's position in the corpus, its id and its BM25 score."""

    index: int
    id: str
    score: float


class BM25Index:
    """An immutable BM25 index over a list of documents (use :meth:`build` or :meth:`load`)."""

    def __init__(
        self,
        *,
        ids: Sequence[str],
        engine: Any,
        tokenizer: JapaneseTokenizer,
        k1: float,
        b: float,
    ) -> None:
        self._ids = list(ids)
        self._engine = engine  # a bm25s.BM25, or None for an empty corpus
        self._vocab: dict[str, int] = dict(engine.vocab_dict) if engine is not None else {}
        self.tokenizer = tokenizer
        self.k1 = k1
        self.b = b

    # --- building ---------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        texts: Sequence[str],
        *,
        ids: Sequence[str] | None = None,
        tokenizer: JapaneseTokenizer | None = None,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
    ) -> BM25Index:
        """Tokenize and index ``texts``; ``ids`` name them (default: their positions)."""
        chosen = tokenizer or get_tokenizer()
        return cls.from_tokens(chosen.tokenize_many(texts), ids=ids, tokenizer=chosen, k1=k1, b=b)

    @classmethod
    def from_tokens(
        cls,
        corpus_tokens: Sequence[Sequence[str]],
        *,
        ids: Sequence[str] | None = None,
        tokenizer: JapaneseTokenizer | None = None,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
    ) -> BM25Index:
        """Index documents already tokenized with ``tokenizer`` (its signature is saved)."""
        doc_ids = [str(i) for i in range(len(corpus_tokens))] if ids is None else list(ids)
        if len(doc_ids) != len(corpus_tokens):
            raise ValueError(f"{len(doc_ids)} ids for {len(corpus_tokens)} documents")
        if len(set(doc_ids)) != len(doc_ids):
            raise ValueError("document ids must be unique")
        engine = None
        if corpus_tokens:
            import bm25s

            engine = bm25s.BM25(k1=k1, b=b)
            engine.index([list(tokens) for tokens in corpus_tokens], show_progress=False)
        return cls(ids=doc_ids, engine=engine, tokenizer=tokenizer or get_tokenizer(), k1=k1, b=b)

    # --- querying ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> list[str]:
        return list(self._ids)

    def query_terms(self, query: str) -> list[str]:
        """The distinct terms of ``query`` that occur in the corpus, in query order."""
        seen: dict[str, None] = {}
        for term in self.tokenizer.tokenize(query):
            if term in self._vocab and term:
                seen.setdefault(term, None)
        return list(seen)

    def scores(self, query: str) -> FloatArray:
        """The BM25 score of every document for ``query`` (zeros when no term matches)."""
        return self.scores_for_terms(self.query_terms(query))

    def scores_for_terms(self, terms: Sequence[str]) -> FloatArray:
        """Scores for already tokenized query terms (unknown terms are ignored)."""
        if self._engine is None:
            return np.zeros(0, dtype=np.float32)
        token_ids = sorted({self._vocab[t] for t in terms if t and t in self._vocab})
        if not token_ids:
            return np.zeros(len(self._ids), dtype=np.float32)
        scores = self._engine.get_scores_from_ids(token_ids)
        return np.asarray(scores, dtype=np.float32)

    def search(self, query: str, k: int = 10) -> list[BM25Hit]:
        """The ``k`` best documents with a positive score, best first (ties by corpus order)."""
        if k < 1:
            raise ValueError("k must be at least 1")
        scores = self.scores(query)
        return self._top(scores, k)

    def _top(self, scores: FloatArray, k: int) -> list[BM25Hit]:
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0:
            return []
        # Stable sort on the negated scores keeps corpus order among equal scores.
        order = positive[np.argsort(-scores[positive], kind="stable")][:k]
        return [BM25Hit(int(i), self._ids[int(i)], float(scores[int(i)])) for i in order]

    # --- persistence ------------------------------------------------------------------------

    def save(self, directory: Path | str) -> Path:
        """Write the index to ``directory`` (replaced as a whole: never half old, half new)."""
        target = Path(directory)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
        try:
            if self._engine is not None:
                self._engine.save(str(staging / BM25S_DIR), show_progress=False)
            meta = {
                "format": INDEX_FORMAT,
                "kind": "bm25",
                "tokenizer": self.tokenizer.signature,
                "dictionary": self.tokenizer.dictionary_name,
                "k1": self.k1,
                "b": self.b,
                "ids": self._ids,
            }
            (staging / META_FILE).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
            staging.chmod(0o755)
            _replace_dir(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return target

    @classmethod
    def load(
        cls, directory: Path | str, *, tokenizer: JapaneseTokenizer | None = None
    ) -> BM25Index:
        """Read an index written by :meth:`save`; a stale or damaged one is a clear error."""
        path = Path(directory)
        meta = _read_meta(path)
        chosen = tokenizer or get_tokenizer(str(meta.get("dictionary", "core")))
        if meta.get("tokenizer") != chosen.signature:
            raise FileProcessingError(
                str(path),
                f"検索インデックス {path} は別の形態素解析の設定（{meta.get('tokenizer')}）で"
                f"作られています（現在: {chosen.signature}）。",
                code=ErrorCode.FILE_UNREADABLE,
                hint="元の文書からインデックスを作り直してください（辞書や keiri-agent の"
                "更新後は作り直しが必要です）。",
                details={"built_with": meta.get("tokenizer"), "current": chosen.signature},
            )
        ids = [str(i) for i in meta["ids"]]
        engine = None
        if ids:
            import bm25s

            try:
                engine = bm25s.BM25.load(str(path / BM25S_DIR))
            except (OSError, ValueError, KeyError) as exc:
                raise _damaged(path, exc) from exc
            if int(engine.scores.get("num_docs") or 0) != len(ids):
                raise _damaged(path, ValueError("document count does not match the ids"))
        return cls(
            ids=ids, engine=engine, tokenizer=chosen, k1=float(meta["k1"]), b=float(meta["b"])
        )


def _read_meta(path: Path) -> dict[str, Any]:
    meta_path = path / META_FILE
    if not meta_path.is_file():
        raise FileProcessingError(
            str(path),
            f"{path} に検索インデックスがありません（{META_FILE} が見つかりません）。",
            code=ErrorCode.FILE_UNREADABLE,
            hint="BM25Index.save() で保存したディレクトリを指定してください。",
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _damaged(path, exc) from exc
    if (
        not isinstance(meta, dict)
        or meta.get("kind") != "bm25"
        or not isinstance(meta.get("ids"), list)
        or "k1" not in meta
        or "b" not in meta
    ):
        raise _damaged(path, ValueError(f"unexpected {META_FILE}"))
    if meta.get("format") != INDEX_FORMAT:
        raise FileProcessingError(
            str(path),
            f"検索インデックス {path} の形式（{meta.get('format')}）はこの版では読めません"
            f"（対応: {INDEX_FORMAT}）。",
            code=ErrorCode.UNSUPPORTED_FORMAT,
            hint="元の文書からインデックスを作り直してください。",
        )
    return meta


def _damaged(path: Path, exc: BaseException) -> FileProcessingError:
    return FileProcessingError(
        str(path),
        f"検索インデックス {path} が壊れているため読めません: {exc}",
        code=ErrorCode.FILE_UNREADABLE,
        hint="ディレクトリを削除して、元の文書からインデックスを作り直してください。",
    )


def _replace_dir(staging: Path, target: Path) -> None:
    """Move ``staging`` to ``target``; an existing ``target`` is swapped out, then removed."""
    if not target.exists():
        os.replace(staging, target)
        return
    old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old."))
    old.rmdir()
    os.replace(target, old)
    try:
        os.replace(staging, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
