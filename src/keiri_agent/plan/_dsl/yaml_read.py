"""YAML a person or an LLM wrote → data and a source map (line/column per YAML path), in one pass.

Every YAML read for plans (plans, answers files, ``--var`` values, the config) goes through
:func:`read_yaml`. Its size is measured on the parser's events before anything expands: aliases
add the size of their anchor, so an alias bomb ("billion laughs") costs its text size, and its
expanded size is refused (:data:`MAX_YAML_ALIASES`, :data:`MAX_YAML_ALIAS_NODES`,
:data:`MAX_YAML_DEPTH`, :data:`MAX_YAML_NODES`) before anything expands it.

Plain YAML (what plans are: mappings, sequences and scalars without anchors, aliases, merge keys
or explicit tags) is built straight from those events, the same events that are measured: no
node tree is kept, so the memory a parse holds is the data and its source map, and the text is
read once (issue 25: the node tree was 70% of a parse's memory, peaking at 2.5x the result, and a
3,000-node plan took that memory from the OS again on every parse: 24x the page faults of 1,000
nodes). YAML with any of those features is composed and constructed by PyYAML as before; both
ways give the same data, source map and errors (tests/plan/test_yaml_read.py compares them).
"""

from __future__ import annotations

import gc
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import yaml
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    MappingStartEvent,
    ScalarEvent,
)

from keiri_agent.errors import KeiriError
from keiri_agent.plan._dsl.issues import Loc

__all__ = [
    "LIMIT_HINT",
    "MAX_YAML_ALIASES",
    "MAX_YAML_ALIAS_NODES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "YamlLimitError",
    "load_yaml",
    "read_yaml",
]

MAX_YAML_ALIASES = 1_000  # alias uses (``*name``, merge keys ``<<: *name`` included)
MAX_YAML_ALIAS_NODES = 100_000  # nodes the aliases would add once expanded
MAX_YAML_NODES = 200_000  # scalars, mappings and sequences, aliases expanded
MAX_YAML_DEPTH = 100  # nesting of mappings and sequences
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BOOL_TAG = "tag:yaml.org,2002:bool"
Positions = dict[Loc, tuple[int, int]]


class _Loader(_BaseLoader):  # type: ignore[misc]
    """Safe YAML with YAML 1.2 booleans: only true/false are booleans.

    YAML 1.1 also reads yes/no/on/off as booleans, so a column named ``No`` in an output
    schema or the ``on:`` of a join would silently become ``False``/``True`` keys. Plans are
    written by people and by LLMs who expect ``No`` to stay ``No``.
    """

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL_TAG]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }


_Loader.add_implicit_resolver(
    _BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


class YamlLimitError(KeiriError, yaml.YAMLError):
    """YAML over one of the size limits (a ``yaml.YAMLError``, so readers report it as such)."""

    def __init__(self, problem: str, mark: Any = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark

    def __str__(self) -> str:
        return self.problem


LIMIT_HINT = (
    "アンカー（&名前）とエイリアス（*名前）の入れ子をやめ、必要な値をそのまま書いてください。"
    f" 上限: エイリアス {MAX_YAML_ALIASES:,} 回・その展開 {MAX_YAML_ALIAS_NODES:,} 要素、"
    f"全体 {MAX_YAML_NODES:,} 要素、入れ子 {MAX_YAML_DEPTH} 段（docs/limits.md）。"
    " 大きなデータは YAML に書かずファイルで渡してください。"
)


class _Limits:
    """The size of the YAML so far, one parser event at a time (raises :class:`YamlLimitError`).

    Keeps only the open collections and the anchors' sizes: an alias adds the expanded size of
    its anchor (known once the anchor's node has ended), so an alias bomb is measured, never
    expanded. Syntax errors are the parser's.
    """

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}  # anchor → expanded size of its node
        self.stack: list[tuple[int, str | None]] = []  # open collections: (total at start, anchor)
        self.total = self.aliases = self.aliased = 0

    def see(self, event: Any) -> None:
        if isinstance(event, AliasEvent):
            self._alias(event)
        elif isinstance(event, ScalarEvent):
            self.total += 1
            if event.anchor is not None:
                self.sizes[event.anchor] = 1
        elif isinstance(event, CollectionStartEvent):
            self.stack.append((self.total, event.anchor))
            self.total += 1
            if len(self.stack) > MAX_YAML_DEPTH:
                raise YamlLimitError(
                    f"入れ子が {MAX_YAML_DEPTH} 段を超えています。", event.start_mark
                )
        elif isinstance(event, CollectionEndEvent):
            begun, anchor = self.stack.pop()
            if anchor is not None:
                self.sizes[anchor] = self.total - begun
        if self.total > MAX_YAML_NODES:
            raise YamlLimitError(
                f"YAML の要素数（エイリアスの展開後）が {MAX_YAML_NODES:,} を超えています。",
                event.start_mark,
            )

    def _alias(self, event: Any) -> None:
        if event.anchor not in self.sizes:
            if any(anchor == event.anchor for _, anchor in self.stack):
                raise YamlLimitError(
                    f"エイリアス *{event.anchor} が自分を含むアンカーを指しています（再帰的なエイリアス）。",
                    event.start_mark,
                )
            return  # undefined: the composer reports it
        self.aliases += 1
        self.aliased += self.sizes[event.anchor]
        self.total += self.sizes[event.anchor]
        if self.aliases > MAX_YAML_ALIASES:
            raise YamlLimitError(
                f"エイリアス（*名前）の使用が {MAX_YAML_ALIASES:,} 回を超えています。",
                event.start_mark,
            )
        if self.aliased > MAX_YAML_ALIAS_NODES:
            raise YamlLimitError(
                f"エイリアスで展開される内容が {MAX_YAML_ALIAS_NODES:,} 要素を超えています"
                "（アンカーとエイリアスの入れ子で大きくなる YAML です）。",
                event.start_mark,
            )


class _CycleCollectorPause:
    """No cycle collection while YAML is parsed; what a parse builds holds no reference cycle.

    A parse allocates a few dozen objects per node, and every ~25% growth of the heap makes
    Python's cycle collector walk the whole heap (the parse's objects and everything else the
    process holds). A plan three times as long paid for more and larger walks: parsing was
    4.8x slower for 3x the nodes. Paused, the parse's own work is linear; reference counting
    still frees what it drops. Nested and concurrent parses share one pause (the collector is
    turned back on, if it was on, when the last one ends).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parses = 0
        self._resume = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._parses == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._parses += 1
        try:
            yield
        finally:
            with self._lock:
                self._parses -= 1
                if self._parses == 0 and self._resume:
                    gc.enable()


_no_cycle_collection = _CycleCollectorPause()


def read_yaml(text: str, positions: Positions | None = None) -> Any:
    """The data of one YAML document (None for an empty text), filling ``positions`` if given.

    ``positions`` gets the line and column (1-based) of every YAML path: of the key for a
    mapping entry (where a reader looks for ``graph[2].in.prompt``), of the value otherwise.
    Raises ``yaml.YAMLError`` on bad syntax, as ``yaml.safe_load`` does, and
    :class:`YamlLimitError` (a ``yaml.YAMLError``) on YAML over the limits.
    """
    with _no_cycle_collection():
        loader = _Loader(text)
        try:
            return _build(loader, _Limits(), positions)
        except _NotPlainError:
            pass
        finally:
            loader.dispose()
        if positions is not None:
            positions.clear()
        return _compose(text, positions)


def load_yaml(text: str) -> Any:
    """YAML a person wrote for plans (answers, vars, config) read like plans: YAML 1.2 booleans."""
    return read_yaml(text)


class _NotPlainError(Exception):
    """The YAML uses anchors, aliases, merge keys, explicit tags or complex keys."""


_NO_KEY: Any = object()  # in a mapping, before its next key


def _build(loader: Any, limits: _Limits, positions: Positions | None) -> Any:
    """Plain YAML's data from its events, measured as they come (raises :class:`_NotPlainError`).

    The data and source map are what ``SafeConstructor`` and :func:`_walk` make of the composed
    nodes: a mapping's value is at its key's position, the key of the source map is the key as
    written. A constructor that fails (a date that does not exist) leaves the error to PyYAML.
    """
    resolve, constructors = loader.resolve, loader.yaml_constructors
    stack: list[tuple[Any, Loc, bool]] = []  # the enclosing collections: (data, loc, is_map)
    container: Any = None  # the innermost open collection
    loc: Loc = ()
    in_map = False
    key: Any = _NO_KEY  # in a mapping: the key whose value comes next
    key_loc: Loc = ()
    root: Any = None
    documents = 0
    while (event := loader.get_event()) is not None:
        limits.see(event)
        kind = type(event)
        if kind is ScalarEvent or isinstance(event, CollectionStartEvent):
            if event.anchor is not None or event.tag not in (None, "!"):
                raise _NotPlainError
            mark = event.start_mark
            if kind is ScalarEvent:
                tag = resolve(yaml.ScalarNode, event.value, event.implicit)
                constructor = constructors.get(tag)
                if constructor is None:  # merge keys and "=" have none: PyYAML's own rules
                    raise _NotPlainError
                node = yaml.ScalarNode(tag, event.value, mark, event.end_mark, event.style)
                try:
                    value = constructor(loader, node)
                except Exception as exc:
                    raise _NotPlainError from exc
                if in_map and key is _NO_KEY:  # a key: its value comes next
                    key, key_loc = value, (*loc, event.value)
                    if positions is not None:
                        positions[key_loc] = (mark.line + 1, mark.column + 1)
                    continue
            elif in_map and key is _NO_KEY:
                raise _NotPlainError  # a mapping or a sequence as a key
            else:
                value = {} if kind is MappingStartEvent else []
            here = key_loc if in_map else (*loc, len(container)) if stack else ()
            if positions is not None:
                positions.setdefault(here, (mark.line + 1, mark.column + 1))
            if not stack:
                root = value
            elif in_map:
                container[key] = value
                key = _NO_KEY
            else:
                container.append(value)
            if kind is not ScalarEvent:
                stack.append((container, loc, in_map))
                container, loc, in_map = value, here, kind is MappingStartEvent
        elif isinstance(event, CollectionEndEvent):
            container, loc, in_map = stack.pop()
        elif kind is AliasEvent:
            raise _NotPlainError
        elif kind is DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise _NotPlainError  # PyYAML's composer reports "expected a single document"
    return root


def _compose(text: str, positions: Positions | None) -> Any:
    """YAML with anchors, aliases, merge keys or tags: measured, then composed by PyYAML."""
    limits = _Limits()
    for event in yaml.parse(text, Loader=_Loader):
        limits.see(event)
    loader = _Loader(text)
    try:
        composed = loader.get_single_node()
        if composed is None:
            return None
        data = loader.construct_document(composed)
    finally:
        loader.dispose()
    if positions is not None:
        _walk(composed, (), positions)  # after construction: merge keys flattened
    return data


def _walk(node: yaml.Node, loc: Loc, out: Positions) -> None:
    out.setdefault(loc, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            child = (*loc, key)
            out[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            _walk(value_node, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), out)
