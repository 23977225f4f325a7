"""The product's own texts in a request: where they are, so that masking leaves them alone.

A request mixes two kinds of text: what the product wrote (its prompt templates, the block
catalog and spec excerpts of plan generation, a schema) and what came from the user or the data
(an instruction, documents, cells, a model's earlier output). Only the second can hold personal
data; the name detector reading the first finds words that look like names to it (命令文 as 命 +
令文, 重複元行, a reason list after 名義:) and would send the model a catalog with holes.

Which part is which is known where the request is written, not at the wire, so the writer says
it: :func:`compose` joins pieces, :class:`Ours` marking the product's, and :func:`fill` fills a
``str.format`` template whose literal text is the product's and whose fields are named ours or
theirs. The result is an ordinary ``str``; the places of its own pieces are remembered for that
exact text (by a digest of it, in a bounded table: no text is kept). At the wire,
:func:`split_ours` gives the pieces of a text back, and only the user's are masked, each as a
text of its own. The marking is by place, never by words: a user's piece that holds a catalog
word, or the whole catalog, is masked like any other; a text no writer composed (or composed and
then changed) is all the user's. A piece composed earlier keeps its marks inside a later one.
"""

from __future__ import annotations

import hashlib
import string
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = ["MAX_REMEMBERED", "Ours", "compose", "fill", "join", "mask_theirs", "split_ours"]

MAX_REMEMBERED = 4096  # composed texts whose own pieces are remembered (oldest forgotten)

Ranges = tuple[tuple[int, int], ...]

_LOCK = threading.Lock()
_OURS: OrderedDict[bytes, Ranges] = OrderedDict()  # digest of a composed text → its own ranges


@dataclass(frozen=True)
class Ours:
    """A piece of a request the product wrote (a template's text, the block catalog)."""

    text: str


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _ranges_of(text: str) -> Ranges:
    with _LOCK:
        ranges = _OURS.get(_digest(text))
    return ranges or ()


def _remember(text: str, ranges: list[tuple[int, int]]) -> None:
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if end <= start:
            continue
        if merged and merged[-1][1] >= start:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    if not merged:
        return
    key = _digest(text)
    with _LOCK:
        _OURS[key] = tuple(merged)
        _OURS.move_to_end(key)
        while len(_OURS) > MAX_REMEMBERED:
            _OURS.popitem(last=False)


def compose(*pieces: str | Ours) -> str:
    """The pieces joined; an :class:`Ours` piece is the product's, a ``str`` the user's (with
    the product's pieces it was composed with, if it was)."""
    parts: list[str] = []
    ranges: list[tuple[int, int]] = []
    at = 0
    for piece in pieces:
        if isinstance(piece, Ours):
            text = piece.text
            ranges.append((at, at + len(text)))
        else:
            text = piece
            ranges.extend((at + start, at + end) for start, end in _ranges_of(text))
        parts.append(text)
        at += len(text)
    joined = "".join(parts)
    _remember(joined, ranges)
    return joined


def fill(
    template: str,
    *,
    ours: Mapping[str, str] | None = None,
    theirs: Mapping[str, object] | None = None,
) -> str:
    """``template.format(**ours, **theirs)``, the template's text and the ``ours`` fields marked
    the product's. A field in neither mapping is a ``KeyError``, as in ``str.format``."""
    ours, theirs = ours or {}, theirs or {}
    pieces: list[str | Ours] = []
    for literal, field, spec, conversion in string.Formatter().parse(template):
        if literal:
            pieces.append(Ours(literal))
        if field is None:
            continue
        if field in ours:
            value: object = ours[field]
        elif field in theirs:
            value = theirs[field]
        else:
            raise KeyError(field)
        if conversion == "r":
            value = repr(value)
        elif conversion == "s":
            value = str(value)
        text = format(value, spec or "")
        pieces.append(Ours(text) if field in ours else text)
    return compose(*pieces)


def join(separator: str, pieces: Iterable[str | Ours]) -> str:
    """``separator.join(pieces)`` with the separator the product's (a ``str`` piece keeps the
    marks it was composed with: ``"\\n\\n".join`` would lose them)."""
    parts: list[str | Ours] = []
    for piece in pieces:
        if parts and separator:
            parts.append(Ours(separator))
        parts.append(piece)
    return compose(*parts)


def split_ours(text: str) -> list[tuple[str, bool]]:
    """``text`` in pieces, each with whether the product wrote it; all the user's unless the
    text was composed."""
    ranges = _ranges_of(text)
    if not ranges:
        return [(text, False)] if text else []
    pieces: list[tuple[str, bool]] = []
    at = 0
    for start, end in ranges:
        if start > at:
            pieces.append((text[at:start], False))
        pieces.append((text[start:end], True))
        at = end
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def mask_theirs(text: str, mask: Callable[[str], str]) -> str:
    """``text`` with ``mask`` applied to each of the user's pieces, the product's left as they are."""
    pieces = split_ours(text)
    if len(pieces) == 1 and not pieces[0][1]:
        return mask(text)
    return "".join(piece if own else mask(piece) for piece, own in pieces)
