"""BM25 over Japanese text: a sparse index in NumPy fed with :mod:`keiri_agent.retrieval.tokenize`.

``BM25Index.build(texts, ids=...)`` tokenizes and indexes a corpus; ``search(query, k)`` returns
the best hits with their scores; ``scores(query)`` the score of every document (for hybrid
ranking); ``coverage(terms)`` the IDF-weighted share of the query's terms each document contains
(a 0..1 relevance that means the same for every query, unlike raw BM25). ``save(directory)``
writes the index and its metadata (ids, tokenizer signature, parameters) so a large corpus
(manuals with 10,000+ chunks) is tokenized once; ``load`` refuses an index written with other
tokenizer rules instead of answering with skewed scores.

Scoring is Lucene's BM25 (the variant bm25s and Elasticsearch use): ``idf = ln(1 + (N - df +
0.5) / (df + 0.5))`` and ``tf / (tf + k1 * (1 - b + b * dl / avgdl))`` per term, precomputed
per (term, document) at build time, so a query is one ``bincount`` over the postings of its
terms. The index is plain NumPy arrays (no SciPy): opening it is fast enough for a command
line tool that starts a fresh process per search.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from keiri_agent.errors import ErrorCode, FileProcessingError, cause_of, reason_of
from keiri_agent.retrieval.hits import FloatArray, Hit
from keiri_agent.retrieval.postings import Postings
from keiri_agent.retrieval.tokenize import JapaneseTokenizer, get_tokenizer

__all__ = [
    "DEFAULT_B",
    "DEFAULT_K1",
    "INDEX_FORMAT",
    "BM25Hit",
    "BM25Index",
    "Postings",
    "write_directory",
]

DEFAULT_K1 = 1.5
DEFAULT_B = 0.75
INDEX_FORMAT = 2  # version of the on-disk layout written by save() (1: bm25s's files)
META_FILE = "keiri_index.json"
ARRAYS_FILE = "postings.npz"


@dataclass(frozen=True, slots=True)
class BM25Hit(Hit):
    """One search result whose ``score`` is the document's BM25 score."""


class BM25Index:
    """An immutable BM25 index over a list of documents (use :meth:`build` or :meth:`load`)."""

    def __init__(
        self,
        *,
        ids: Sequence[str],
        postings: Postings,
        tokenizer: JapaneseTokenizer,
        k1: float,
        b: float,
    ) -> None:
        self._ids = list(ids)
        self._postings = postings
        self._vocab = postings.vocab
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
        postings = Postings.build(corpus_tokens, k1=k1, b=b)
        return cls(
            ids=doc_ids, postings=postings, tokenizer=tokenizer or get_tokenizer(), k1=k1, b=b
        )

    # --- querying ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> list[str]:
        return list(self._ids)

    def query_terms(self, query: str) -> list[str]:
        """The distinct terms of ``query`` that occur in the corpus, in query order."""
        return self.known_terms(self.tokenizer.tokenize(query))

    def known_terms(self, terms: Sequence[str]) -> list[str]:
        """The distinct ``terms`` that occur in the corpus, in their order."""
        seen: dict[str, None] = {}
        for term in terms:
            if term and term in self._vocab:
                seen.setdefault(term, None)
        return list(seen)

    def scores(self, query: str) -> FloatArray:
        """The BM25 score of every document for ``query`` (zeros when no term matches)."""
        return self.scores_for_terms(self.query_terms(query))

    def scores_for_terms(self, terms: Sequence[str]) -> FloatArray:
        """Scores for already tokenized query terms (unknown terms are ignored, repeats count once)."""
        return self._postings.scores(self._term_ids(terms))

    def coverage(self, terms: Sequence[str]) -> FloatArray:
        """Per document, the IDF-weighted share (0..1) of the distinct ``terms`` it contains.

        Terms the corpus does not know count with the highest IDF: a query whose rare words are
        nowhere in the corpus is poorly covered by every document, which is the point.
        """
        distinct = [t for t in dict.fromkeys(terms) if t]
        if not distinct or not self._ids:
            return np.zeros(len(self._ids), dtype=np.float32)
        total = self.max_score(distinct)
        matched = self._postings.matched_idf(self._term_ids(distinct))
        covered: FloatArray = np.minimum(matched / np.float32(total), np.float32(1.0))
        return covered

    def unseen_idf(self) -> float:
        """The IDF of a term found in no document (the most informative term possible)."""
        return self._postings.unseen_idf() if self._ids else 1.0

    def max_score(self, terms: Sequence[str]) -> float:
        """The sum of the IDFs of the distinct ``terms``: no document can score as much.

        A term the corpus does not know counts with the IDF it would have in one document.
        """
        if not self._ids:
            return 0.0
        unseen = self._postings.unseen_idf()
        idf = self._postings.idf
        return sum(
            float(idf[self._vocab[t]]) if t in self._vocab else unseen
            for t in dict.fromkeys(terms)
            if t
        )

    def _term_ids(self, terms: Sequence[str]) -> list[int]:
        return sorted({self._vocab[t] for t in terms if t and t in self._vocab})

    def search(self, query: str, k: int = 10) -> list[BM25Hit]:
        """The ``k`` best documents with a positive score, best first (ties by corpus order)."""
        if k < 1:
            raise ValueError("k must be at least 1")
        scores = self.scores(query)
        return self.top(scores, k)

    def top(self, scores: FloatArray, k: int) -> list[BM25Hit]:
        """The ``k`` documents with the highest positive ``scores`` (ties by corpus order)."""
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0:
            return []
        # Stable sort on the negated scores keeps corpus order among equal scores.
        order = positive[np.argsort(-scores[positive], kind="stable")][:k]
        return [BM25Hit(int(i), self._ids[int(i)], float(scores[int(i)])) for i in order]

    # --- persistence ------------------------------------------------------------------------

    def save(self, directory: Path | str) -> Path:
        """Write the index to ``directory`` (replaced as a whole: never half old, half new)."""
        return write_directory(directory, self._write)

    def _write(self, staging: Path) -> None:
        postings = self._postings
        np.savez(
            staging / ARRAYS_FILE,
            indptr=postings.indptr,
            docs=postings.docs,
            weights=postings.weights,
            idf=postings.idf,
        )
        vocab = sorted(postings.vocab, key=postings.vocab.__getitem__)
        meta = {
            "format": INDEX_FORMAT,
            "kind": "bm25",
            "tokenizer": self.tokenizer.signature,
            "dictionary": self.tokenizer.dictionary_name,
            "k1": self.k1,
            "b": self.b,
            "ids": self._ids,
            "vocab": vocab,
        }
        (staging / META_FILE).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")

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
        vocab = [str(t) for t in meta["vocab"]]
        try:
            with np.load(path / ARRAYS_FILE, allow_pickle=False) as arrays:
                postings = Postings(
                    vocab={term: i for i, term in enumerate(vocab)},
                    indptr=arrays["indptr"],
                    docs=arrays["docs"],
                    weights=arrays["weights"],
                    idf=arrays["idf"],
                    num_docs=len(ids),
                )
        except (OSError, ValueError, KeyError) as exc:
            raise _damaged(path, exc) from exc
        if postings.indptr.shape != (len(vocab) + 1,) or postings.idf.shape != (len(vocab),):
            raise _damaged(path, "語彙の数と索引の大きさが合いません")
        if postings.docs.size and int(postings.docs.max()) >= len(ids):
            raise _damaged(path, "文書の数と索引が合いません")
        return cls(
            ids=ids, postings=postings, tokenizer=chosen, k1=float(meta["k1"]), b=float(meta["b"])
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
    if not isinstance(meta, dict) or meta.get("kind") != "bm25":
        raise _damaged(path, f"{META_FILE} が BM25 の検索インデックスのものではありません")
    if meta.get("format") != INDEX_FORMAT:
        raise FileProcessingError(
            str(path),
            f"検索インデックス {path} の形式（{meta.get('format')}）はこの版では読めません"
            f"（対応: {INDEX_FORMAT}）。",
            code=ErrorCode.UNSUPPORTED_FORMAT,
            hint="元の文書からインデックスを作り直してください。",
        )
    if (
        not isinstance(meta.get("ids"), list)
        or not isinstance(meta.get("vocab"), list)
        or "k1" not in meta
        or "b" not in meta
    ):
        raise _damaged(path, f"{META_FILE} に必要な項目がそろっていません")
    return meta


def _damaged(path: Path, problem: str | BaseException) -> FileProcessingError:
    """``problem``: what is wrong, in Japanese, or the exception that said so."""
    if isinstance(problem, BaseException):
        said, details = reason_of(problem), {"cause": cause_of(problem)}
    else:
        said, details = problem, {}
    return FileProcessingError(
        str(path),
        f"検索インデックス {path} が壊れているため読めません: {said}",
        code=ErrorCode.FILE_UNREADABLE,
        hint="ディレクトリを削除して、元の文書からインデックスを作り直してください。",
        details=details,
    )


def write_directory(directory: Path | str, write: Callable[[Path], None]) -> Path:
    """Have ``write`` fill a fresh folder beside ``directory``, then put it in its place as a
    whole (never half old, half new); on any failure the staging folder is removed."""
    target = Path(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        write(staging)
        staging.chmod(0o755)
        _replace_dir(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


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
