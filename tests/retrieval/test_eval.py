"""recall@K and MRR."""

from __future__ import annotations

import pytest

from keiri_agent.retrieval.eval import (
    mean_reciprocal_rank,
    recall_at_k,
    reciprocal_rank,
    summarize,
)


def test_recall_at_k_is_the_share_of_gold_within_the_first_k() -> None:
    ranking = ["a", "b", "c", "d"]
    assert recall_at_k(ranking, {"a", "c"}, 1) == 0.5
    assert recall_at_k(ranking, {"a", "c"}, 3) == 1.0
    assert recall_at_k(ranking, {"x"}, 4) == 0.0


def test_reciprocal_rank_uses_the_first_gold_hit() -> None:
    assert reciprocal_rank(["a", "b", "c"], {"c", "b"}) == 0.5
    assert reciprocal_rank(["a"], {"z"}) == 0.0
    assert mean_reciprocal_rank([["a", "b"], ["b", "a"]], [{"a"}, {"a"}]) == 0.75


def test_summary_averages_over_queries() -> None:
    summary = summarize([["a", "b"], ["b", "a"]], [{"a"}, {"a", "b"}], ks=(1, 2))
    assert summary.recall == {1: 0.75, 2: 1.0}  # (1 + 0.5) / 2 at K=1
    assert summary.mrr == 1.0
    assert summary.queries == 2


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="gold"):
        recall_at_k(["a"], set(), 1)
    with pytest.raises(ValueError, match="k must"):
        recall_at_k(["a"], {"a"}, 0)
    with pytest.raises(ValueError, match="no queries"):
        summarize([], [])
    with pytest.raises(ValueError, match="rankings"):
        mean_reciprocal_rank([["a"]], [{"a"}, {"b"}])
