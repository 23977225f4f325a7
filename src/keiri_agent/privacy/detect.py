"""All personal data in a text: identifiers by form, values by their label or column header,
names by Sudachi; overlapping finds resolved to one span each.

Where finds overlap, the longer one wins (a postal code with its address over the postal code
alone), and of two equally long the structured identifier wins over a name. A number inside a
table cell under a header that names something else (金額, 注文番号, 法人番号) is not taken for
an identifier.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from keiri_agent.privacy.headers import labelled_spans, table_spans
from keiri_agent.privacy.kinds import PersonalKind, Span
from keiri_agent.privacy.names import find_names
from keiri_agent.privacy.patterns import find_identifiers

__all__ = ["find_personal", "resolve"]

_PRIORITY = {kind: rank for rank, kind in enumerate(PersonalKind)}  # earlier = stronger


def resolve(spans: Iterable[Span]) -> list[Span]:
    """Non-overlapping spans in text order: longer first, then the stronger kind."""
    ordered = sorted(spans, key=lambda s: (-(s.end - s.start), _PRIORITY[s.kind], s.start))
    starts: list[int] = []  # the taken spans, kept in text order
    taken: list[Span] = []
    for span in ordered:
        if span.end <= span.start:
            continue
        at = bisect.bisect_left(starts, span.start)
        if at > 0 and taken[at - 1].end > span.start:
            continue
        if at < len(taken) and taken[at].start < span.end:
            continue
        starts.insert(at, span.start)
        taken.insert(at, span)
    return taken


def _inside(span: Span, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= span.start and span.end <= end for start, end in ranges)


def find_personal(text: str, *, names: bool = True) -> list[Span]:
    """The personal data in ``text``; ``names=False`` skips Sudachi (labelled and tabled names
    are still found)."""
    if not text:
        return []
    tables = table_spans(text)
    found = [s for s in find_identifiers(text) if not _inside(s, tables.neutral)]
    found.extend(labelled_spans(text))
    found.extend(tables.personal)
    if names:
        found.extend(s for s in find_names(text) if not _inside(s, tables.neutral))
    return resolve(found)
