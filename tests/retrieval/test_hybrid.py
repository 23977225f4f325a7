"""Per-query min-max normalization and the weighted mix of BM25 and dense scores."""

from __future__ import annotations

import pytest

from keiri_agent.retrieval.hybrid import fuse, minmax


def test_minmax_scales_each_list_to_zero_one() -> None:
    assert minmax([2.0, 4.0, 3.0]).tolist() == [0.0, 1.0, 0.5]
    assert minmax([-0.2, 0.3]).tolist() == pytest.approx([0.0, 1.0])
    assert minmax([]).tolist() == []


def test_minmax_of_a_list_without_ranking_information() -> None:
    assert minmax([0.0, 0.0]).tolist() == [0.0, 0.0]  # nothing matched
    assert minmax([0.7, 0.7]).tolist() == [1.0, 1.0]  # everything matched equally


def test_the_weight_moves_the_ranking_between_bm25_and_dense() -> None:
    ids = ["a", "b", "c"]
    bm25 = [10.0, 0.0, 6.0]  # prefers a
    dense = [0.1, 0.9, 0.6]  # prefers b
    assert [h.id for h in fuse(ids, bm25, dense, dense_weight=0.0)] == ["a", "c", "b"]
    assert [h.id for h in fuse(ids, bm25, dense, dense_weight=1.0)] == ["b", "c", "a"]
    mixed = fuse(ids, bm25, dense, dense_weight=0.5)
    assert [h.id for h in mixed] == ["c", "a", "b"]  # c is good on both; a and b tie, kept in order
    by_id = {h.id: h for h in mixed}
    assert by_id["c"].score == pytest.approx(0.5 * 0.6 + 0.5 * 0.625)
    assert by_id["a"].score == pytest.approx(0.5)
    # Raw component scores are kept for explanation.
    assert (by_id["a"].bm25, by_id["a"].dense) == (10.0, pytest.approx(0.1))


def test_bm25_scale_does_not_swamp_the_dense_scores() -> None:
    ids = ["a", "b"]
    hits = fuse(ids, [1000.0, 999.0], [0.10, 0.12], dense_weight=0.5)
    assert {h.id: h.score for h in hits} == {"a": pytest.approx(0.5), "b": pytest.approx(0.5)}


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        fuse(["a"], [1.0, 2.0], [0.1])
    with pytest.raises(ValueError, match="between 0 and 1"):
        fuse(["a"], [1.0], [0.1], dense_weight=1.5)
