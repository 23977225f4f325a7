"""The customers a payer name may be, found without comparing it with every customer.

:class:`NameIndex` is built once from a customer master (every key of every customer,
:mod:`.keys`) and answers :meth:`NameIndex.lookup` for each bank line:

- exact keys from a dict (the payer's name, its code put back in front, a kanji payer's
  readings, a payer's first words, a sole proprietor's trade and owner's names, a cut payer's names before a spelled-out form): O(1) per key;
- the same names without their long marks: from the first dict, and from a second one of the
  keys written with long marks, filed without them;
- a cut payer (48, 30 or 20 characters) from the sorted keys: the keys starting with it lie in
  one range found by bisection, O(log k + r);
- only when nothing else was found, names one kana apart (proposals): every key is filed
  under itself and each of its one-character deletions (on the first such question, so a run
  whose payers all meet never builds it), and the candidates of a payer of length L are found
  with L + 1 dict lookups (two strings one edit apart share a deletion).

Each candidate is then scored with :func:`.match.name_match`, so the index and the one-to-one
comparison always agree. Building reads each customer's name once (SudachiPy, cached: about
1.3 s for 10,000 kanji names on this machine, then nothing) and files its keys; the proposal
table holds about L + 1 entries per key of L characters.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from keiri_agent.blocks.table.names.fold import LONG_MARK, unmarked
from keiri_agent.blocks.table.names.keys import CustomerName, PayerName
from keiri_agent.blocks.table.names.match import (
    MIN_NEAR_CHARS,
    MIN_PREFIX_CHARS,
    Match,
    name_match,
)

__all__ = ["NameIndex"]

_AFTER_ALL = "\U0010ffff"  # sorts after every character: the end of a prefix range


class NameIndex:
    """Customers by their name keys; :meth:`lookup` gives a payer's candidates, best first."""

    def __init__(self, customers: Iterable[CustomerName]) -> None:
        self.customers: list[CustomerName] = list(customers)
        self._exact: dict[str, list[int]] = {}
        for number, customer in enumerate(self.customers):
            for key in customer.keys:
                numbers = self._exact.setdefault(key.text, [])
                if not numbers or numbers[-1] != number:
                    numbers.append(number)
        self._sorted = sorted(self._exact)
        # The keys written with long marks, filed without them (the others are in ``_exact``).
        self._unmarked: dict[str, list[str]] = {}
        for text in self._sorted:
            if LONG_MARK in text:
                self._unmarked.setdefault(unmarked(text), []).append(text)
        self._unmarked_sorted = sorted(self._unmarked)
        self._near: dict[str, str | list[str]] | None = None  # built on the first proposal

    def __len__(self) -> int:
        return len(self.customers)

    def lookup(self, payer: PayerName) -> list[Match]:
        """The customers ``payer`` may be, surest first (:attr:`.match.Match.rank`, then score,
        then master order).

        A branch glued after a place (:attr:`.keys.PayerName.glued`) tells the name before the
        place only when no customer's name begins with the name before the branch word, place
        included (:meth:`.keys.PayerName.told`): ``ｱｵﾊﾞｻｸﾗｼﾃﾝ`` with 青葉サクラ in the master is
        its branch as likely as 青葉's.

        Several matches of the best rank (:func:`.match.best_matches`) are an ambiguity for the
        caller to show, never to settle by order. Proposals one kana apart are looked for only
        when nothing else is found.
        """
        payer = payer.told(lambda stem: bool(self._prefixed_keys(self._sorted, stem)))
        found: set[int] = set()
        spelled = (payer.name, *payer.readings)
        for text in (*spelled, *payer.heads, *payer.trade, *payer.first_words):
            found.update(self._exact.get(text, ()))
        for bare in {unmarked(t) for t in (*spelled, *payer.cut_stems, *payer.heads, *payer.trade)}:
            found.update(self._exact.get(bare, ()))
            for key in self._unmarked.get(bare, ()):
                found.update(self._exact[key])
        if payer.code:
            found.update(self._exact.get(payer.code + payer.name, ()))
        if payer.truncated and len(payer.name) >= MIN_PREFIX_CHARS:
            found.update(self._prefixed(self._sorted, payer.name[:-1]))
            bare = unmarked(payer.name)[:-1]
            found.update(self._prefixed(self._sorted, bare))
            for key in self._prefixed_keys(self._unmarked_sorted, bare):
                for text in self._unmarked[key]:
                    found.update(self._exact[text])
        if not found and payer.proposable:
            near = self._near_keys()
            for text in (payer.name, *payer.readings):
                if len(text) >= MIN_NEAR_CHARS:
                    for deleted in (text, *_deletions(text)):
                        for key in _listed(near.get(deleted)):
                            found.update(self._exact[key])
        matches = [m for n in sorted(found) if (m := name_match(payer, self.customers[n]))]
        return sorted(matches, key=lambda m: (m.rank, -m.score))

    def _near_keys(self) -> dict[str, str | list[str]]:
        """Every key long enough to be proposed, filed under itself and its deletions: the key
        itself where it is the only one (most are; a string is no object the garbage collector
        walks, a list of one is, and there are about a million), a list where several share it."""
        if self._near is None:
            near: dict[str, str | list[str]] = {}
            for key in self._sorted:
                if len(key) >= MIN_NEAR_CHARS:
                    for variant in {key, *(key[:i] + key[i + 1 :] for i in range(len(key)))}:
                        filed = near.get(variant)
                        if filed is None:
                            near[variant] = key
                        elif isinstance(filed, str):
                            near[variant] = [filed, key]
                        else:
                            filed.append(key)
            self._near = near
        return self._near

    def _prefixed(self, keys: list[str], stem: str) -> set[int]:
        """The customers of the keys in sorted ``keys`` that start with ``stem``."""
        return {n for text in self._prefixed_keys(keys, stem) for n in self._exact[text]}

    @staticmethod
    def _prefixed_keys(keys: list[str], stem: str) -> list[str]:
        start = bisect_left(keys, stem)
        return keys[start : bisect_left(keys, stem + _AFTER_ALL, lo=start)]


def _listed(filed: str | list[str] | None) -> tuple[str, ...] | list[str]:
    """The keys filed under one entry of the proposal table."""
    if filed is None:
        return ()
    return (filed,) if isinstance(filed, str) else filed


def _deletions(text: str) -> list[str]:
    """``text`` with one character left out, at each position (the same string once)."""
    return list(dict.fromkeys(text[:i] + text[i + 1 :] for i in range(len(text))))
