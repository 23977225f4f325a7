"""Retrieval quality metrics shared by the tests and ``benchmarks/``: recall@K and MRR.

A ranking is a list of document ids, best first; the gold set holds the ids a correct answer
uses. Recall@K is the share of gold ids within the first K; the reciprocal rank is 1 / the rank
of the first gold id (0 when none is ranked). Means are taken over queries (macro averages).
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "EvalCase",
    "EvalSummary",
    "mean_recall_at_k",
    "mean_reciprocal_rank",
    "recall_at_k",
    "reciprocal_rank",
    "summarize",
]


@dataclass(frozen=True, slots=True)
class EvalCase:
    """One query of an evaluation set and the ids a correct answer uses."""

    id: str
    query: str
    gold: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EvalSummary:
    """Mean recall@K for each K asked for, MRR, and the number of queries."""

    recall: Mapping[int, float]
    mrr: float
    queries: int


def _check_gold(gold: Collection[str]) -> None:
    if not gold:
        raise ValueError("a query needs at least one gold id")


def recall_at_k(ranking: Sequence[str], gold: Collection[str], k: int) -> float:
    """Share of ``gold`` found among the first ``k`` of ``ranking``."""
    _check_gold(gold)
    if k < 1:
        raise ValueError("k must be at least 1")
    wanted = set(gold)
    return len(wanted.intersection(ranking[:k])) / len(wanted)


def reciprocal_rank(ranking: Sequence[str], gold: Collection[str]) -> float:
    """1 / (1-based rank of the first gold id in ``ranking``); 0 when none appears."""
    _check_gold(gold)
    wanted = set(gold)
    for position, doc_id in enumerate(ranking, start=1):
        if doc_id in wanted:
            return 1.0 / position
    return 0.0


def mean_recall_at_k(
    rankings: Sequence[Sequence[str]], golds: Sequence[Collection[str]], k: int
) -> float:
    """Mean of :func:`recall_at_k` over queries."""
    _check_lengths(rankings, golds)
    return statistics.fmean(recall_at_k(r, g, k) for r, g in zip(rankings, golds, strict=True))


def mean_reciprocal_rank(
    rankings: Sequence[Sequence[str]], golds: Sequence[Collection[str]]
) -> float:
    """MRR: mean of :func:`reciprocal_rank` over queries."""
    _check_lengths(rankings, golds)
    return statistics.fmean(reciprocal_rank(r, g) for r, g in zip(rankings, golds, strict=True))


def summarize(
    rankings: Sequence[Sequence[str]],
    golds: Sequence[Collection[str]],
    *,
    ks: Sequence[int] = (5, 8),
) -> EvalSummary:
    """Recall@K for each of ``ks`` and MRR over the same queries."""
    return EvalSummary(
        recall={k: mean_recall_at_k(rankings, golds, k) for k in ks},
        mrr=mean_reciprocal_rank(rankings, golds),
        queries=len(rankings),
    )


def _check_lengths(rankings: Sequence[Sequence[str]], golds: Sequence[Collection[str]]) -> None:
    if not rankings:
        raise ValueError("no queries to evaluate")
    if len(rankings) != len(golds):
        raise ValueError(f"{len(rankings)} rankings for {len(golds)} gold sets")
