"""``${...}`` references of the Plan DSL (seed 002 §5): their syntax and parsing (their values,
walking a path and rendering, are :mod:`.ref_values`).

A reference names a value by a dotted path: ``${vars.instruction}``, ``${env.KEY}``,
``${config.task.output}``, ``${node_id.key.0.name}`` or a loop variable ``${file}``. Purely
numeric segments are list indices and a trailing ``.length`` asks for the size of the value.
``$${`` is an escape for a literal ``${``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from keiri_agent.errors import BlockError, ErrorCode

__all__ = [
    "Reference",
    "ReferencePathError",
    "ReferenceSyntaxError",
    "ReferenceValueError",
    "bare_reference",
    "caret_excerpt",
    "find_references",
    "iter_references",
    "parse_reference_at",
    "single_reference",
    "split_template",
]

_SEGMENT = re.compile(r"[\w-]+")
_INDEX = re.compile(r"[0-9]+")  # ASCII only: "１２" or "²" stay keys
_EXCERPT_WIDTH: Final = 60
# A run reads each ``${...}`` string several times (validation, compiling the graph, the dry
# run, the design tools): strings up to this length are split once and the parts kept (a
# bounded LRU; Reference is immutable and callers get a new list).
_CACHED_CHARS: Final = 256
_CACHED_STRINGS: Final = 4096

Segment = str | int
Location = tuple[Segment, ...]


@dataclass(frozen=True)
class Reference:
    """One ``${...}`` occurrence; ``start``/``end`` are offsets in the string it was found in."""

    root: str
    path: tuple[Segment, ...]
    length: bool
    text: str
    start: int
    end: int

    @property
    def dotted(self) -> str:
        """``root.a.0.b`` (without a trailing ``.length``)."""
        return ".".join([self.root, *(str(s) for s in self.path)])

    def __str__(self) -> str:
        return self.text


class ReferenceSyntaxError(BlockError):
    """A ``${...}`` is malformed; ``details`` holds the whole string and the offset."""

    def __init__(self, text: str, position: int, reason: str) -> None:
        super().__init__(
            f"参照式の {position + 1} 文字目が不正です: {reason}\n{caret_excerpt(text, position)}",
            code=ErrorCode.INVALID_REFERENCE,
            hint="参照は ${ノードID.キー} や ${vars.名前} の形で書きます。"
            " 区切りは「.」、名前に使えるのは文字・数字・「_」「-」です。"
            " 「${」をそのまま書くときは「$${」とします。",
            details={"text": text, "position": position, "reason": reason},
        )
        self.reason = reason
        self.position = position


class ReferencePathError(BlockError):
    """A reference's path leads nowhere in the actual data."""

    default_code = ErrorCode.DEPENDENCY_NOT_FOUND


class ReferenceValueError(BlockError):
    """A resolved value cannot be embedded into text (binary data, a DataFrame, ...)."""

    default_code = ErrorCode.INPUT_VALIDATION_FAILED


def caret_excerpt(text: str, position: int) -> str:
    """Two indented lines: the line of ``text`` around ``position`` and a ``^`` under it.

    Long lines are cut to a window around the position; the caret is placed by display width
    so that it stays under the right character after full-width Japanese text.
    """
    position = max(0, min(position, len(text)))
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    line = text[line_start : len(text) if line_end < 0 else line_end].replace("\t", " ")
    column = position - line_start
    prefix = ""
    if len(line) > _EXCERPT_WIDTH:
        begin = max(0, min(column - _EXCERPT_WIDTH // 2, len(line) - _EXCERPT_WIDTH))
        prefix = "…" if begin else ""
        suffix = "…" if begin + _EXCERPT_WIDTH < len(line) else ""
        line = prefix + line[begin : begin + _EXCERPT_WIDTH] + suffix
        column = column - begin + len(prefix)
    pad = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line[:column])
    return f"  {line}\n  {' ' * pad}^"


def parse_reference_at(text: str, start: int) -> Reference:
    """Parse the reference whose ``${`` begins at ``text[start]``."""
    close = text.find("}", start + 2)
    if close < 0:
        raise ReferenceSyntaxError(text, start, "「${」が「}」で閉じられていません")
    pos = start + 2
    while pos < close and text[pos].isspace():
        pos += 1
    if pos == close:
        raise ReferenceSyntaxError(text, close, "「${」と「}」の間が空です")
    segments: list[str] = []
    while True:
        match = _SEGMENT.match(text, pos, close)
        if match is None:
            if pos == close or text[pos] in ".}":
                reason = "「.」の前後に名前がありません"
            else:
                reason = f"「{text[pos]}」は参照の名前に使えません"
            raise ReferenceSyntaxError(text, pos, reason)
        segments.append(match.group())
        pos = match.end()
        if pos < close and text[pos] == ".":
            pos += 1
            continue
        break
    blank = pos
    while pos < close and text[pos].isspace():
        pos += 1
    if pos != close:
        if blank != pos:
            raise ReferenceSyntaxError(text, blank, "参照の途中に空白は使えません")
        raise ReferenceSyntaxError(text, pos, f"「{text[pos]}」は参照の名前に使えません")
    length = len(segments) > 1 and segments[-1] == "length"
    if length:
        segments.pop()
    path = tuple(int(s) if _INDEX.fullmatch(s) else s for s in segments[1:])
    return Reference(segments[0], path, length, text[start : close + 1], start, close + 1)


def split_template(text: str) -> list[str | Reference]:
    """Split ``text`` into literal pieces (with ``$${`` already unescaped) and references."""
    if len(text) <= _CACHED_CHARS:
        return list(_split_cached(text))
    return _split(text)


@lru_cache(maxsize=_CACHED_STRINGS)
def _split_cached(text: str) -> tuple[str | Reference, ...]:
    return tuple(_split(text))  # a malformed string raises each time (errors are not kept)


def _split(text: str) -> list[str | Reference]:
    parts: list[str | Reference] = []
    literal: list[str] = []
    pos = 0
    while True:
        dollar = text.find("$", pos)
        if dollar < 0:
            literal.append(text[pos:])
            break
        literal.append(text[pos:dollar])
        if text.startswith("$${", dollar):
            literal.append("${")
            pos = dollar + 3
        elif text.startswith("${", dollar):
            if any(literal):
                parts.append("".join(literal))
            literal = []
            ref = parse_reference_at(text, dollar)
            parts.append(ref)
            pos = ref.end
        else:
            literal.append("$")
            pos = dollar + 1
    if any(literal):
        parts.append("".join(literal))
    return parts


def find_references(text: str) -> list[Reference]:
    """Every reference in ``text``, in order."""
    return [p for p in split_template(text) if isinstance(p, Reference)]


def bare_reference(path: str) -> Reference | None:
    """``node.alias.key`` written without ``${ }`` (an export's ``from``) as a reference.

    None when it is not exactly one reference; ReferenceSyntaxError when it is malformed.
    """
    return single_reference("${" + path + "}")


def single_reference(text: str) -> Reference | None:
    """The reference if ``text`` is exactly one reference, surrounding whitespace aside."""
    if "${" not in text:
        return None
    parts = split_template(text)
    refs = [p for p in parts if isinstance(p, Reference)]
    if len(refs) != 1:
        return None
    if any(isinstance(p, str) and p.strip() for p in parts):
        return None
    return refs[0]


def iter_references(value: Any) -> Iterator[tuple[Location, Reference]]:
    """``(location, reference)`` for every reference in the strings nested in ``value``.

    Locations are paths inside ``value`` (dict keys and list indices); dict keys themselves
    are not scanned, since keys name parameters and are never rendered.
    """
    return _references_at(value, ())


def _references_at(value: Any, at: Location) -> Iterator[tuple[Location, Reference]]:
    if isinstance(value, str):
        for ref in find_references(value):
            yield at, ref
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _references_at(item, (*at, key if isinstance(key, str | int) else str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _references_at(item, (*at, index))
