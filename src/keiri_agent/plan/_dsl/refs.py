"""``${...}`` references of the Plan DSL (seed 002 §5): their syntax, parsing and values.

A reference names a value by a dotted path: ``${vars.instruction}``, ``${env.KEY}``,
``${config.task.output}``, ``${node_id.key.0.name}`` or a loop variable ``${file}``. Purely
numeric segments are list indices and a trailing ``.length`` asks for the size of the value.
``$${`` is an escape for a literal ``${``.

Values: walking a path only looks keys up in mappings and indices up in lists: user data is
never reached through ``getattr`` or any other call, so a plan cannot read attributes of the
Python objects that blocks return. The only call made on user data is ``len()`` for
``.length``. :func:`render` puts references' values into inputs and text.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sized
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from itertools import islice
from typing import Any, Final, NoReturn

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events.models import is_table, type_label

__all__ = [
    "Reference",
    "ReferencePathError",
    "ReferenceSyntaxError",
    "ReferenceValueError",
    "bare_reference",
    "caret_excerpt",
    "find_references",
    "format_interpolated",
    "iter_references",
    "parse_reference_at",
    "render",
    "resolve_env_config",
    "resolve_path",
    "single_reference",
    "split_template",
]

_SEGMENT = re.compile(r"[\w-]+")
_INDEX = re.compile(r"[0-9]+")  # ASCII only: "１２" or "²" stay keys
_EXCERPT_WIDTH: Final = 60
_MAX_KEYS_IN_HINT: Final = 20
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


# --- values: walking a path in the data, rendering references into inputs and text ----------


def _path_error(ref: Reference, at: str, message: str, hint: str, **extra: Any) -> NoReturn:
    raise ReferencePathError(
        f"参照 {ref.text} を解決できません: {message}",
        hint=hint,
        details={"reference": ref.text, "at": at, **extra},
    )


def resolve_path(value: Any, ref: Reference) -> Any:
    """Walk ``ref.path`` (and ``.length``) starting from ``value``, the root's value."""
    current = value
    for depth, segment in enumerate(ref.path):
        # The common case first: a key of a mapping (``at``, for messages, only on the way out).
        if type(current) is dict and type(segment) is str and segment in current:
            current = current[segment]
            continue
        at = ".".join([ref.root, *(str(s) for s in ref.path[:depth])])
        if current is None:
            _path_error(
                ref,
                at,
                f"{at} が null のため「{segment}」をたどれません",
                "前のノードがスキップされたか、値が空の可能性があります。"
                " when に exists(...) を使って先に確かめてください。",
                segment=segment,
            )
        if isinstance(current, Mapping):
            # YAML turns `1: x` into an int key, so an index-like segment may name either.
            key: Any = str(segment)
            if key not in current and isinstance(segment, int) and segment in current:
                key = segment
            if key not in current:
                keys = [str(k) for k in islice(current.keys(), _MAX_KEYS_IN_HINT)]
                more = len(current) - len(keys)
                hint = f"{at} にあるキー: {', '.join(keys)}" if keys else f"{at} は空の辞書です。"
                if more > 0:
                    hint += f" ほか {more} 件"
                _path_error(
                    ref,
                    at,
                    f"{at} にキー「{segment}」がありません",
                    hint,
                    segment=segment,
                    available_keys=keys,
                )
            current = current[key]
        elif isinstance(current, list | tuple) or is_table(current):
            size = len(current)
            if not isinstance(segment, int):
                _path_error(
                    ref,
                    at,
                    f"{at} はリストなので「{segment}」では参照できません",
                    f"リストの要素は番号（例: {at}.0）で、件数は {at}.length で参照します。",
                    segment=segment,
                )
            elif segment >= size:
                _path_error(
                    ref,
                    at,
                    f"{at} は {size} 件のリストで、{segment} 番目の要素はありません",
                    f"番号は 0 から {size - 1} までです。" if size else f"{at} は空のリストです。",
                    segment=segment,
                    size=size,
                )
            current = current[segment]
        else:
            _path_error(
                ref,
                at,
                f"{at} は{type_label(current)}なので「{segment}」をたどれません",
                "たどれるのは辞書のキーとリストの番号だけです。",
                segment=segment,
            )
    if ref.length:
        # Sized is checked on the type (__len__ in the MRO), so no user code runs before len().
        if current is None or not isinstance(current, Sized):
            _path_error(
                ref,
                ref.dotted,
                f"{ref.dotted} は{type_label(current)}なので length を求められません",
                "length が使えるのは文字列・リスト・辞書・表です。",
                segment="length",
            )
        return len(current)
    return current


def format_interpolated(value: Any, ref: Reference) -> str:
    """How a resolved value reads inside a longer string (JSON for null/bools/containers)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool | dict | list | tuple):
        # default=str keeps dates and Decimals found in extracted data readable.
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, int | float | Decimal | dt.date | dt.time):
        return str(value)
    raise ReferenceValueError(
        f"参照 {ref.text} の値（{type_label(value)}）は文字列の中に埋め込めません",
        hint=f"{ref.text} を前後に文字を付けずに単独で指定すると、値をそのまま渡せます。",
        details={"reference": ref.text, "type": type(value).__name__},
    )


def render(value: Any, resolve: Callable[[Reference], Any]) -> Any:
    """Replace the references in ``value`` (recursively through dicts and lists).

    A string that is exactly one reference becomes the referenced value itself, keeping its
    type; references inside longer strings are interpolated as text.
    """
    if isinstance(value, str):
        if "$" not in value:
            return value
        single = single_reference(value)
        if single is not None:
            return resolve(single)
        return "".join(
            p if isinstance(p, str) else format_interpolated(resolve(p), p)
            for p in split_template(value)
        )
    if isinstance(value, dict):
        return {key: render(item, resolve) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, resolve) for item in value]
    return value


def resolve_env_config(ref: Reference, env: Mapping[str, str], config: Mapping[str, Any]) -> Any:
    """``${env.X}`` or ``${config.a.b}`` (ReferencePathError when it is not there).

    A missing environment variable is named on its own: the generic path error would list the
    other variables as "available keys", putting the environment's names into logs and the UI.
    """
    if ref.root == "config":
        return resolve_path(config, ref)
    name = str(ref.path[0]) if ref.path else ""
    if name not in env:
        raise ReferencePathError(
            f"参照 {ref.text} を解決できません: 環境変数 {name} が設定されていません。",
            hint=f"ドライラン・実行の前に環境変数 {name} を設定してください。",
            details={"reference": ref.text},
        )
    return resolve_path({name: env[name]}, ref)
