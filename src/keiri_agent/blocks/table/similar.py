"""Which texts of a block are alike: fuzzy matching of names at scale (``table.dedupe``).

Each row comes with a block (rows match only inside their block: the exact keys) and a
normalized text. The identical texts of a block are one *unit*, and only units are compared,
with rapidfuzz, and only pairs whose lengths allow the threshold (Indel similarity is at most
200·short/(short + long), so ratio ≥ t needs ``long ≤ short·(200 − t)/t``). Blocks of a few
texts (the common case when keys block, such as a date and an amount) are scored together pair
by pair in batches (``process.cpdist``); a large block as a matrix, in chunks of queries
(``process.cdist``). Units joined by a chain of similar pairs share one label (union-find over
the similar pairs, which are few beside the rows).

Complexity: O(n) over the rows; inside a block of u distinct texts O(u²) comparisons in the
worst case, far fewer for real names and keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

from keiri_agent.blocks.table.key_codes import combine, first_rows

__all__ = [
    "CHECK_EVERY",
    "CHUNK",
    "PAIR_BATCH",
    "SCORERS",
    "SMALL_BLOCK",
    "Texts",
    "similar_labels",
    "similarities",
]

SCORERS: dict[str, Callable[..., float]] = {
    "ratio": fuzz.ratio,
    "token_sort_ratio": fuzz.token_sort_ratio,
}
CHUNK = 256  # texts compared at once in a large block (a CHUNK × candidates float32 matrix)
# Blocks of up to this many distinct texts are scored pair by pair in shared batches (cpdist,
# ~0.5 µs a pair), larger ones by a cdist call each (~30 ns a pair, ~20 µs a call with its
# slicing). Measured on benchmarks/ledger_join_dedupe.py's 1,000,000 rows (770,000 texts in
# blocks of a date and an amount): 0.77 s of CPU at 16, 1.0-1.4 s at 8, no gain above 16.
SMALL_BLOCK = 16
CHECK_EVERY = 1024  # large blocks scored between two looks at a cancellation
PAIR_BATCH = 1 << 20  # candidate pairs scored in one cpdist call (~40 MB of indexes and texts)


@dataclass(frozen=True)
class Texts:
    """The normalized text of each row: ``codes`` into ``values`` (-1: blank), and how two
    texts are scored."""

    codes: np.ndarray
    values: np.ndarray  # object array of str, one per distinct text
    scorer: str
    threshold: float


def similar_labels(blocks: np.ndarray, texts: Texts, check: Callable[[], None]) -> np.ndarray:
    """Each row's duplicate label (-1: not compared): rows of one block whose texts are
    identical or, through a chain of similar texts, alike share a label."""
    (units,), count = combine([[blocks], [texts.codes]])  # a unit: one text in one block
    if not count:
        return units
    firsts = first_rows(units, count)
    pairs = _similar_units(blocks[firsts], texts.codes[firsts], texts, check)
    labels = _components(count, pairs)
    return np.where(units >= 0, labels[np.maximum(units, 0)], -1)


def _similar_units(
    unit_block: np.ndarray, unit_text: np.ndarray, texts: Texts, check: Callable[[], None]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs of units of one block whose texts are similar enough, as (a, b) index arrays.

    Units are compared in order of length within their block, each with the longer ones its
    length allows (Indel similarity ≤ 200·short/(short + long), so ratio ≥ t needs
    ``long ≤ short·(200 − t)/t``): small blocks all together, pair by pair, large ones each
    as a matrix."""
    lengths = np.fromiter((len(v) for v in texts.values), np.int64, len(texts.values))[unit_text]
    sizes = np.bincount(unit_block)[unit_block]
    order = np.lexsort((lengths, unit_block))  # by block, then length
    order = order[sizes[order] >= 2]
    small = sizes[order] <= SMALL_BLOCK
    of = _Units(unit_block, unit_text, lengths, texts, check)
    return _pairs_of_small_blocks(order[small], of) + _pairs_of_large_blocks(order[~small], of)


@dataclass(frozen=True)
class _Units:
    """What both ways of scoring know of every unit: its block, text and text length, how
    texts are scored, and the look at a cancellation."""

    block: np.ndarray
    text: np.ndarray
    lengths: np.ndarray
    texts: Texts
    check: Callable[[], None]

    def scores(
        self, pairwise: Callable[..., Any], queries: np.ndarray, candidates: np.ndarray
    ) -> np.ndarray:
        """``pairwise`` (rapidfuzz's cdist or cpdist) over the texts, below threshold as 0."""
        return np.asarray(
            pairwise(
                queries,
                candidates,
                scorer=SCORERS[self.texts.scorer],
                score_cutoff=self.texts.threshold,
                dtype=np.float32,
                workers=1,
            )
        )


def _pairs_of_large_blocks(units: np.ndarray, of: _Units) -> list[tuple[np.ndarray, np.ndarray]]:
    """The similar pairs among ``units`` (sorted by block, then length; blocks of more than
    SMALL_BLOCK units), each block scored as a matrix, CHUNK queries at a time."""
    if not units.size:
        return []
    t = of.texts.threshold
    values = of.texts.values[of.text[units]]
    lengths = of.lengths[units]
    edges = np.flatnonzero(np.diff(of.block[units])) + 1
    queries: list[np.ndarray] = []
    candidates: list[np.ndarray] = []
    bounds = zip([0, *edges.tolist()], [*edges.tolist(), len(units)], strict=True)
    for number, (first, last) in enumerate(bounds):
        if number % CHECK_EVERY == 0:
            of.check()
        for start in range(first, last, CHUNK):
            if start > first:  # a block of thousands of texts: look between its chunks too
                of.check()
            stop = min(start + CHUNK, last)
            end = last
            if t > 0 and stop < last:  # the longest query of the chunk reaches furthest
                limit = int(lengths[stop - 1]) * (200 - t) / t + 1e-9
                end = first + int(np.searchsorted(lengths[first:last], limit, side="right"))
            scores = of.scores(process.cdist, values[start:stop], values[start:end])
            query, candidate = np.nonzero(scores >= t)
            later = candidate > query  # both count from ``start``
            if later.any():
                queries.append(start + query[later])
                candidates.append(start + candidate[later])
    if not queries:
        return []
    return [(units[np.concatenate(queries)], units[np.concatenate(candidates)])]


def _pairs_of_small_blocks(units: np.ndarray, of: _Units) -> list[tuple[np.ndarray, np.ndarray]]:
    """The similar pairs among ``units`` (sorted by block, then length; blocks of at most
    SMALL_BLOCK units), scored in batches of candidate pairs."""
    found: list[tuple[np.ndarray, np.ndarray]] = []
    if not units.size:
        return found
    t = of.texts.threshold
    block, length = of.block[units], of.lengths[units]
    # Candidates of unit i: the later units of its block up to the length it can reach.
    span = int(length.max()) + 1
    composite = block * span + length
    if t > 0:
        reach = np.minimum(np.floor(length * (200 - t) / t + 1e-9), span - 1).astype(np.int64)
    else:
        reach = np.full(len(units), span - 1, dtype=np.int64)
    ends = np.searchsorted(composite, block * span + reach, side="right")
    counts = np.maximum(ends - np.arange(len(units)) - 1, 0)
    values = of.texts.values[of.text[units]]
    for start in range(0, len(units), PAIR_BATCH // SMALL_BLOCK):
        of.check()
        stop = min(start + PAIR_BATCH // SMALL_BLOCK, len(units))
        n = counts[start:stop]
        query = np.repeat(np.arange(start, stop), n)
        candidate = query + 1 + np.arange(len(query)) - np.repeat(np.cumsum(n) - n, n)
        if not query.size:
            continue
        scores = of.scores(process.cpdist, values[query], values[candidate])
        hit = scores >= t
        found.append((units[query[hit]], units[candidate[hit]]))
    return found


def _components(count: int, pairs: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """A label for each of ``count`` units: units joined by a chain of pairs share one
    (union-find over the similar pairs only, which are few beside the rows)."""
    parent: dict[int, int] = {}

    def find(item: int) -> int:
        root = item
        while parent.get(root, root) != root:
            root = parent[root]
        while item != root:  # path compression
            parent[item], item = root, parent[item]
        return root

    for a, b in pairs:
        for x, y in zip(a.tolist(), b.tolist(), strict=True):
            root_x, root_y = find(x), find(y)
            if root_x != root_y:
                parent[max(root_x, root_y)] = min(root_x, root_y)
    labels = np.arange(count, dtype=np.int64)
    for item in parent:
        labels[item] = find(item)
    return labels


def similarities(texts: Texts | None, rows: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The similarity (0–100, one decimal) of each dropped row's text to its kept row's."""
    out = np.full(len(rows), 100.0)
    if texts is None:
        return out
    a, b = texts.codes[rows], texts.codes[kept]
    differ = a != b
    if differ.any():
        scores = process.cpdist(
            texts.values[a[differ]],
            texts.values[b[differ]],
            scorer=SCORERS[texts.scorer],
            dtype=np.float64,
            workers=1,
        )
        out[differ] = [round(float(score), 1) for score in scores]
    return out
