"""``KnownValues``: the values a job has learnt, found again in any text, quickly at any count.

A job learns every cell of a table's personal columns (100,000 customers are 100,000 names,
phone numbers, e-mail addresses...). One regular expression of all of them costs seconds to
compile at 10,000 values and minutes at 200,000, and it was compiled again whenever a value
was added. Here a value is found from its first two characters: every position of a text is
looked up once in a dict of those prefixes, and only where one matches are the lengths of the
values with that prefix tried, longest first. Finding is linear in the text and does not grow
with the number of values; adding a value is a few dict writes.

A value is not found inside a longer number or word (``1234567`` in ``1234567890123``), as
the placeholder rules of ``privacy.vault`` require. A 社員番号 that reads as an amount (``1024``:
no letter, no leading zero) is not looked for everywhere: it is masked where its label or
column names it, and an amount of the same figure elsewhere stays as it is.
"""

from __future__ import annotations

import re
import threading
import unicodedata

from keiri_agent.privacy.kinds import PersonalKind, Span

__all__ = ["MIN_KNOWN_CHARS", "KnownValues"]

# A learnt value shorter than this is not looked for in other text (masking every one-character
# word would destroy the text); every lookup starts from a prefix of this many characters.
MIN_KNOWN_CHARS = 2
# Kinds whose values are looked for elsewhere only when no amount can look the same: one of
# fewer than _LONG digits (社員番号 1024, 保険証の番号 474); a longer one (a licence's 12 digits)
# is that person's wherever the job meets it again.
_IN_CONTEXT_ONLY = frozenset({PersonalKind.EMPLOYEE_ID, PersonalKind.ID_CARD})
_LONG = 8
_AMOUNT_LIKE = re.compile(r"[1-9][0-9,]*(?:\.[0-9]+)?")
_ALNUM = frozenset(
    "0123456789０１２３４５６７８９"
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    "ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ"
)


class KnownValues:
    """Spellings → kind, and where they occur in a text; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kinds: dict[str, PersonalKind] = {}
        # prefix → the lengths of the values starting with it, longest first (replaced whole,
        # never changed in place, so a reader in another thread sees one version or the other)
        self._lengths: dict[str, tuple[int, ...]] = {}

    def __len__(self) -> int:
        return len(self._kinds)

    def __contains__(self, value: object) -> bool:
        return value in self._kinds

    def items(self) -> list[tuple[str, PersonalKind]]:
        with self._lock:
            return list(self._kinds.items())

    def add(self, value: str, kind: PersonalKind) -> bool:
        """Remember ``value``; False when it is known already or too short to look for."""
        if len(value) < MIN_KNOWN_CHARS:
            return False
        if kind in _IN_CONTEXT_ONLY:
            normal = unicodedata.normalize("NFKC", value)
            if len(normal) < _LONG and _AMOUNT_LIKE.fullmatch(normal):
                return False
        with self._lock:
            if value in self._kinds:
                return False
            self._kinds[value] = kind
            prefix = value[:MIN_KNOWN_CHARS]
            lengths = self._lengths.get(prefix, ())
            if len(value) not in lengths:
                self._lengths[prefix] = tuple(sorted((*lengths, len(value)), reverse=True))
            return True

    def find(self, text: str) -> list[Span]:
        """Where known values occur in ``text``: leftmost first, the longest at each place,
        never overlapping, never inside a longer number or word."""
        if not self._kinds:
            return []
        kinds, by_prefix = self._kinds, self._lengths
        spans: list[Span] = []
        end = len(text)
        at = 0
        while at <= end - MIN_KNOWN_CHARS:
            lengths = by_prefix.get(text[at : at + MIN_KNOWN_CHARS])
            if lengths is None or (at > 0 and text[at - 1] in _ALNUM):
                at += 1
                continue
            for length in lengths:
                stop = at + length
                if stop > end or (stop < end and text[stop] in _ALNUM):
                    continue
                kind = kinds.get(text[at:stop])
                if kind is not None:
                    spans.append(Span(at, stop, kind))
                    at = stop
                    break
            else:
                at += 1
        return spans
