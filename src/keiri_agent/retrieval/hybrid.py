"""Hybrid ranking: reciprocal rank fusion of several rankings, and min-max score mixing.

:func:`reciprocal_rank_fusion` combines rankings by rank alone; the help desk fuses its lexical
and dense rankings with it, so a source cannot win by the scale of its scores.

:func:`fuse` (Top-K block retrieval): BM25 and dense scores over the same documents, each
min-max normalized per query, then weighted.

BM25 scores are unbounded and depend on the query's length; cosine similarities sit in a narrow
band that depends on the model. Normalizing each list to 0..1 for the query at hand makes them
comparable, and ``dense_weight`` (0 = BM25 only, 1 = dense only) sets their mix. Every hit keeps
its raw component scores so a ranking can be explained.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.dense import DenseIndex
from keiri_agent.retrieval.hits import FloatArray, Hit

__all__ = [
    "DEFAULT_DENSE_WEIGHT",
    "RRF_K",
    "HybridHit",
    "HybridIndex",
    "fuse",
    "minmax",
    "reciprocal_rank_fusion",
]

DEFAULT_DENSE_WEIGHT = 0.5
RRF_K = 60  # the constant of Cormack et al. (2009): rank r contributes 1 / (RRF_K + r)


@dataclass(frozen=True, slots=True)
class HybridHit(Hit):
    """One ranked document: fused score (0..1) and the raw BM25 and cosine scores behind it."""

    bm25: float
    dense: float


def minmax(scores: npt.ArrayLike) -> FloatArray:
    """Scale ``scores`` to 0..1 for this query.

    When every score is equal the list carries no ranking information: the result is all ones
    if that common score is positive (every document matched equally) and all zeros otherwise.
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.size == 0:
        return np.zeros(0, dtype=np.float32)
    low = float(values.min())
    high = float(values.max())
    if high == low:
        fill = 1.0 if high > 0 else 0.0
        return np.full(values.shape, fill, dtype=np.float32)
    return ((values - low) / (high - low)).astype(np.float32)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> dict[str, float]:
    """Reciprocal rank fusion: each id's sum of ``weight / (k + rank)`` over the rankings it is
    in (every weight 1 unless ``weights`` gives one per ranking).

    Only ranks count, never raw scores, so no source wins by the scale of its scores; an id
    ranked by several sources gathers more. The result is ordered best first (ties: first seen).
    """
    if weights is not None and len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    fused: dict[str, float] = {}
    for position, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else float(weights[position])
        for rank, doc_id in enumerate(ranking, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + weight / (k + rank)
    order = sorted(fused, key=lambda doc_id: -fused[doc_id])  # sorted() is stable
    return {doc_id: fused[doc_id] for doc_id in order}


def _check_weight(dense_weight: float) -> None:
    if not 0.0 <= dense_weight <= 1.0:
        raise ValueError(f"dense_weight must be between 0 and 1, got {dense_weight}")


def fuse(
    ids: Sequence[str],
    bm25_scores: npt.ArrayLike,
    dense_scores: npt.ArrayLike,
    *,
    dense_weight: float = DEFAULT_DENSE_WEIGHT,
) -> list[HybridHit]:
    """Every document ranked by ``(1 - w) * minmax(bm25) + w * minmax(dense)``, best first.

    Ties keep the order of ``ids``.
    """
    _check_weight(dense_weight)
    bm25 = np.asarray(bm25_scores, dtype=np.float32)
    dense = np.asarray(dense_scores, dtype=np.float32)
    if not (len(ids) == bm25.shape[0] == dense.shape[0]):
        raise ValueError(
            f"score lists differ in length: {len(ids)} ids, {bm25.shape[0]} BM25,"
            f" {dense.shape[0]} dense"
        )
    fused = (1.0 - dense_weight) * minmax(bm25) + dense_weight * minmax(dense)
    order = np.argsort(-fused, kind="stable")
    return [
        HybridHit(int(i), ids[int(i)], float(fused[i]), float(bm25[i]), float(dense[i]))
        for i in order
    ]


class HybridIndex:
    """A BM25 index and a dense index over the same documents, queried together."""

    def __init__(
        self, bm25: BM25Index, dense: DenseIndex, *, dense_weight: float = DEFAULT_DENSE_WEIGHT
    ) -> None:
        if bm25.ids != dense.ids:
            raise ValueError("the BM25 and dense indexes must hold the same documents in order")
        _check_weight(dense_weight)
        self.bm25 = bm25
        self.dense = dense
        self.dense_weight = dense_weight

    def __len__(self) -> int:
        return len(self.bm25)

    def rank(self, query: str) -> list[HybridHit]:
        """Every document, best first."""
        return fuse(
            self.bm25.ids,
            self.bm25.scores(query),
            self.dense.scores(query),
            dense_weight=self.dense_weight,
        )

    def search(self, query: str, k: int = 10) -> list[HybridHit]:
        """The ``k`` best documents."""
        if k < 1:
            raise ValueError("k must be at least 1")
        return self.rank(query)[:k]
