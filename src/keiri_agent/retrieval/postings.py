"""The BM25 index proper: postings lists with precomputed Lucene term weights, in NumPy.

Used by :class:`keiri_agent.retrieval.bm25.BM25Index` (see its module docstring for the formula).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from keiri_agent.retrieval.hits import FloatArray

__all__ = ["Postings"]


@dataclass(frozen=True, slots=True)
class Postings:
    """The index proper: for term ``t``, ``docs[indptr[t]:indptr[t+1]]`` are the documents
    holding it and ``weights[...]`` their BM25 term weights (idf already multiplied in)."""

    vocab: dict[str, int]
    indptr: npt.NDArray[np.int64]
    docs: npt.NDArray[np.int32]
    weights: FloatArray
    idf: FloatArray
    num_docs: int

    @classmethod
    def build(cls, corpus: Sequence[Sequence[str]], *, k1: float, b: float) -> Postings:
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        counts: list[int] = []
        lengths = np.array([len(tokens) for tokens in corpus], dtype=np.float64)
        for doc, tokens in enumerate(corpus):
            for term, count in Counter(tokens).items():
                rows.append(vocab.setdefault(term, len(vocab)))
                cols.append(doc)
                counts.append(count)
        term_ids = np.asarray(rows, dtype=np.int64)
        doc_ids = np.asarray(cols, dtype=np.int32)
        tf = np.asarray(counts, dtype=np.float64)
        num_docs = len(corpus)
        df = np.bincount(term_ids, minlength=len(vocab)).astype(np.float64)
        idf = np.log1p((num_docs - df + 0.5) / (df + 0.5))
        average = float(lengths.mean()) if num_docs and lengths.sum() else 1.0
        norm = k1 * ((1.0 - b) + b * lengths[doc_ids] / average)
        weights = idf[term_ids] * tf / (tf + norm)
        order = np.argsort(term_ids, kind="stable")
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(df.astype(np.int64), out=indptr[1:])
        return cls(
            vocab=vocab,
            indptr=indptr,
            docs=doc_ids[order],
            weights=weights[order].astype(np.float32),
            idf=idf.astype(np.float32),
            num_docs=num_docs,
        )

    def unseen_idf(self) -> float:
        """The IDF a term found in no document would have (the most informative possible)."""
        return math.log1p((self.num_docs + 0.5) / 0.5)

    def _gather(
        self, term_ids: Sequence[int]
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        spans = [(int(self.indptr[t]), int(self.indptr[t + 1])) for t in term_ids]
        docs = np.concatenate([self.docs[a:z] for a, z in spans]) if spans else self.docs[:0]
        sizes = np.asarray([z - a for a, z in spans], dtype=np.int64)
        return docs, sizes

    def scores(self, term_ids: Sequence[int]) -> FloatArray:
        if not term_ids:
            return np.zeros(self.num_docs, dtype=np.float32)
        docs, _ = self._gather(term_ids)
        weights = np.concatenate(
            [self.weights[self.indptr[t] : self.indptr[t + 1]] for t in term_ids]
        )
        return np.bincount(docs, weights=weights, minlength=self.num_docs).astype(np.float32)

    def matched_idf(self, term_ids: Sequence[int]) -> FloatArray:
        """Per document, the sum of the IDFs of the given terms it contains."""
        if not term_ids:
            return np.zeros(self.num_docs, dtype=np.float32)
        docs, sizes = self._gather(term_ids)
        weights = np.repeat(self.idf[list(term_ids)].astype(np.float64), sizes)
        return np.bincount(docs, weights=weights, minlength=self.num_docs).astype(np.float32)
