"""One-to-one pairing of two tables' rows inside each key, greedily, computed on columns.

``table.reconcile``'s rule: inside one key every left row is a candidate partner of every right
row, and candidate pairs are taken in the order (outside the tolerances, amount difference, day
difference, left row, right row) whenever neither row is taken yet. Enumerating all ``a × b``
pairs of every key is what the rule says, not what it costs here; three facts keep the work
near the size of the tables:

* **Pairs within tolerance come first.** They are found by a band join: the right rows sorted
  by (key, amount), each left row's run of amounts within ``± tolerance`` found with
  ``searchsorted``, then its days checked (or, when that run is long, as for a monthly fee of
  one amount, the run of days within ``± tolerance_days`` and then its amounts). The rule over
  them is the rule's first part.
* **What is left pairs outside tolerance.** The rule's choice over the pairs within tolerance
  is maximal, so any pair of two rows left over is outside; only the leftovers of each key are
  paired all with all (unpaid invoices and unexplained deposits: few per key).
* **The rule is applied in rounds.** In a round every row finds its first remaining candidate,
  and each pair that is first for both of its rows is taken; then taken rows and their
  candidates are removed. Such a pair is one the rule takes: every earlier candidate at its
  rows was removed, so it shares a row with a pair the rule takes, and the rule cannot take
  both; so neither row is taken when the rule reaches the pair. A round takes at least the
  earliest pair; when rounds stop removing candidates quickly (long chains of equal
  differences), the rest is taken by the rule itself, one candidate after another.

Keys are independent, so candidates are made for a batch of keys at a time
(:data:`BATCH_PAIRS`): memory stays bounded however many pairs the keys have in all.
Amounts are exact (integers in units of ``10**-scale``, or Decimals when no scale fits:
:func:`~keiri_agent.blocks.table.column_values.exact_amounts`), days are ordinals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pandas as pd

__all__ = ["BATCH_PAIRS", "Pairing", "Side", "pair_rows"]

# Candidate pairs made at a time (plus one key's own, at most MAX_PAIRS_PER_KEY of
# table.reconcile): about 60 bytes each while they are sorted and chosen.
BATCH_PAIRS = 1 << 20
# A round that keeps more than this share of the candidates ends the rounds: the rest is taken
# sequentially (each round costs a pass over all remaining candidates).
SLOW_ROUND = 0.75
# Candidates per left row in the amount band above which the day band is measured too (a
# customer billed the same amount every month has a wide amount band and a narrow day band).
WIDE_BAND = 2


@dataclass(frozen=True)
class Side:
    """One table's rows as the rule reads them."""

    keys: np.ndarray  # int64 key code per row, -1 where the key is blank (never paired)
    amounts: np.ndarray  # exact amounts: int64 units or Decimal objects
    days: np.ndarray | None  # int64 ordinal days, None when dates are not compared


@dataclass(frozen=True)
class Pairing:
    """The pairs chosen: ``left[i]`` with ``right[i]``, in left-row order."""

    left: np.ndarray
    right: np.ndarray
    amount_diff: np.ndarray  # right minus left, exact (as the amounts)
    day_diff: np.ndarray  # right minus left, in days (0 without dates)
    amount_off: np.ndarray  # bool: the amounts differ by more than the tolerance
    day_off: np.ndarray  # bool: the days differ by more than tolerance_days

    @property
    def outside(self) -> np.ndarray:
        """Pairs outside a tolerance (differences); the others are matched."""
        outside: np.ndarray = self.amount_off | self.day_off
        return outside


def pair_rows(
    left: Side,
    right: Side,
    tolerance: int | Decimal,
    tolerance_days: int,
    *,
    check: Callable[[], None] = lambda: None,
    batch: int = BATCH_PAIRS,
) -> Pairing:
    """The rule's pairs of ``left`` and ``right`` rows. ``tolerance`` is the largest amount
    difference within tolerance in the amounts' units; ``check`` runs between batches (a
    cancelled run stops there)."""
    used = (np.zeros(len(left.keys), dtype=bool), np.zeros(len(right.keys), dtype=bool))
    chosen: list[tuple[np.ndarray, np.ndarray]] = []
    for rows in _within(left, right, tolerance, tolerance_days, batch):
        check()
        chosen.append(_take(rows, left, right, used))
    for rows in _all_with_all(left, right, used, batch):
        check()
        chosen.append(_take(rows, left, right, used))
    lrows = np.concatenate([np.zeros(0, np.int64), *(c[0] for c in chosen)])
    rrows = np.concatenate([np.zeros(0, np.int64), *(c[1] for c in chosen)])
    order = np.argsort(lrows, kind="stable")
    lrows, rrows = lrows[order], rrows[order]
    amount_diff = right.amounts[rrows] - left.amounts[lrows]
    day_diff = (
        right.days[rrows] - left.days[lrows]
        if left.days is not None and right.days is not None
        else np.zeros(len(lrows), dtype=np.int64)
    )
    amount_off = np.asarray(np.abs(amount_diff) > tolerance, dtype=bool)
    day_off = np.abs(day_diff) > tolerance_days
    return Pairing(lrows, rrows, amount_diff, day_diff, amount_off, day_off)


# --- candidates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Band:
    """One compared column (amounts or days) for the band join: the right rows sorted by
    (key, value, row), and for each left row the run of them within the tolerance of its
    value (``order[starts[i] : starts[i] + counts[i]]``)."""

    order: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(
        cls,
        rows: tuple[np.ndarray, np.ndarray],
        keys: tuple[np.ndarray, np.ndarray],
        values: tuple[np.ndarray, np.ndarray],
        tolerance: int | Decimal,
    ) -> _Band:
        lrows, rrows = rows
        distinct, rank = np.unique(np.concatenate(values), return_inverse=True)
        width = len(distinct) + 1  # key * width + rank: one sortable int64 (both below 2**31)
        rplace = keys[1][rrows] * width + rank[len(values[0]) :][rrows].astype(np.int64)
        order = np.argsort(rplace, kind="stable")
        rplace = rplace[order]
        base = keys[0][lrows] * width
        low = np.searchsorted(distinct, values[0][lrows] - tolerance, side="left")
        high = np.searchsorted(distinct, values[0][lrows] + tolerance, side="right")
        starts = np.searchsorted(rplace, base + low, side="left")
        counts = np.searchsorted(rplace, base + high, side="left") - starts
        return cls(rrows[order], starts, counts)


def _within(
    left: Side,
    right: Side,
    tolerance: int | Decimal,
    tolerance_days: int,
    batch: int,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of candidate pairs within both tolerances, ``(left rows, right rows)``. Each
    left row's candidates come from the narrower of its two bands (the amounts within the
    tolerance, or the days within tolerance_days: a monthly fee of the same amount is found by
    its date) and are then checked against the other."""
    lrows = np.flatnonzero(left.keys >= 0)
    lrows = lrows[np.argsort(left.keys[lrows], kind="stable")]  # by key, then row
    rows = (lrows, np.flatnonzero(right.keys >= 0))
    keys = (left.keys, right.keys)
    band = _Band.of(rows, keys, (left.amounts, right.amounts), tolerance)
    order, starts, counts = band.order, band.starts, band.counts
    by_day = np.zeros(len(lrows), dtype=bool)
    days = (left.days, right.days) if left.days is not None and right.days is not None else None
    if days is not None and counts.sum() > WIDE_BAND * len(lrows):
        dated = _Band.of(rows, keys, days, tolerance_days)
        by_day = dated.counts < counts
        starts = np.where(by_day, dated.starts + len(order), starts)
        counts = np.where(by_day, dated.counts, counts)
        order = np.concatenate([order, dated.order])
    for part in _batches(left.keys[lrows], counts, batch):
        lrow = np.repeat(lrows[part], counts[part])
        rrow = order[_runs(starts[part], counts[part])]
        if days is not None:
            near = np.abs(days[1][rrow] - days[0][lrow]) <= tolerance_days
            dated_rows = np.repeat(by_day[part], counts[part])
            if dated_rows.any():
                amounts = np.abs(right.amounts[rrow[dated_rows]] - left.amounts[lrow[dated_rows]])
                near[dated_rows] &= np.asarray(amounts <= tolerance, dtype=bool)
            lrow, rrow = lrow[near], rrow[near]
        yield lrow, rrow


def _all_with_all(
    left: Side, right: Side, used: tuple[np.ndarray, np.ndarray], batch: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of every pair of the rows left over in each key, ``(left rows, right rows)``."""
    size = int(max(left.keys.max(initial=-1), right.keys.max(initial=-1))) + 1
    lrows = np.flatnonzero((left.keys >= 0) & ~used[0])
    rrows = np.flatnonzero((right.keys >= 0) & ~used[1])
    rcount = np.bincount(right.keys[rrows], minlength=size)
    lrows = lrows[rcount[left.keys[lrows]] > 0]
    lrows = lrows[np.argsort(left.keys[lrows], kind="stable")]
    rrows = rrows[np.argsort(right.keys[rrows], kind="stable")]
    rstart = np.cumsum(rcount) - rcount
    lkeys = left.keys[lrows]
    counts = rcount[lkeys]
    for part in _batches(lkeys, counts, batch):
        yield np.repeat(lrows[part], counts[part]), rrows[_runs(rstart[lkeys[part]], counts[part])]


def _batches(keys: np.ndarray, counts: np.ndarray, batch: int) -> Iterator[slice]:
    """Slices of rows sorted by key, cut between keys, each with about ``batch`` pairs."""
    if not len(keys):
        return
    edges = np.flatnonzero(np.diff(keys)) + 1  # where a key starts (after the first)
    ends = np.append(edges, len(keys))
    total = np.cumsum(counts)
    start = 0
    while start < len(keys):
        before = int(total[start - 1]) if start else 0
        # The last key end whose pairs fit the batch; at least the next key.
        fit = int(np.searchsorted(total[ends - 1], before + batch, side="right"))
        first = int(np.searchsorted(ends, start, side="right"))
        stop = int(ends[max(fit, first + 1) - 1])
        yield slice(start, stop)
        start = stop


def _runs(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``starts[i], starts[i] + 1, ..., starts[i] + counts[i] - 1`` for each i, in order."""
    total = int(counts.sum())
    offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    runs: np.ndarray = np.repeat(starts, counts) + offsets
    return runs


# --- choosing --------------------------------------------------------------------------------


def _take(
    rows: tuple[np.ndarray, np.ndarray],
    left: Side,
    right: Side,
    used: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs the rule takes among the candidates ``rows`` (one batch of keys); marks their
    rows used."""
    lrow, rrow = rows
    if not len(lrow):
        return lrow, rrow
    amount = np.abs(right.amounts[rrow] - left.amounts[lrow])
    if amount.dtype == object:  # Decimals: their order as integers
        amount = np.unique(amount, return_inverse=True)[1]
    day = (
        np.abs(right.days[rrow] - left.days[lrow])
        if left.days is not None and right.days is not None
        else np.zeros(len(lrow), dtype=np.int64)
    )
    order = np.lexsort((rrow, lrow, day, amount))
    lrow, rrow = lrow[order], rrow[order]
    picked = _greedy(lrow, rrow, used)
    return lrow[picked], rrow[picked]


def _greedy(lrow: np.ndarray, rrow: np.ndarray, used: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Which of the candidate pairs (in the rule's order, none of their rows used) the rule
    takes, as a mask; marks the rows of those pairs used."""
    picked = np.zeros(len(lrow), dtype=bool)
    alive = np.arange(len(lrow))
    while alive.size:
        lalive, ralive = lrow[alive], rrow[alive]
        first = ~_seen_before(lalive) & ~_seen_before(ralive)
        picked[alive[first]] = True
        used[0][lalive[first]] = True
        used[1][ralive[first]] = True
        keep = ~used[0][lalive] & ~used[1][ralive]
        slow = np.count_nonzero(keep) > SLOW_ROUND * alive.size
        alive = alive[keep]
        if slow:
            _sequential(lrow, rrow, alive, picked, used)
            break
    return picked


def _seen_before(rows: np.ndarray) -> np.ndarray:
    """Whether each row already appeared earlier in ``rows`` (hashing, no sort)."""
    seen: np.ndarray = pd.Series(rows).duplicated().to_numpy()
    return seen


def _sequential(
    lrow: np.ndarray,
    rrow: np.ndarray,
    alive: np.ndarray,
    picked: np.ndarray,
    used: tuple[np.ndarray, np.ndarray],
) -> None:
    """The rule itself over the candidates ``alive`` (in order; none of their rows used)."""
    taken_l: set[int] = set()
    taken_r: set[int] = set()
    chosen: list[int] = []
    pairs = zip(alive.tolist(), lrow[alive].tolist(), rrow[alive].tolist(), strict=True)
    for index, lr, rr in pairs:
        if lr not in taken_l and rr not in taken_r:
            taken_l.add(lr)
            taken_r.add(rr)
            chosen.append(index)
    chosen_rows = np.asarray(chosen, dtype=np.int64)
    picked[chosen_rows] = True
    used[0][lrow[chosen_rows]] = True
    used[1][rrow[chosen_rows]] = True
