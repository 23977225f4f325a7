"""Plan files: YAML text → raw mapping with a source map (line/column per YAML path) → Plan.

Every value's position is kept so the validator can point at the line a user must fix.
Subflow ``plan_id`` values resolve to ``<designs>/<plan_id>.yaml``.

Every YAML a person or an LLM gives (plans, answers files, ``--var`` values, the config) is
composed first and its node graph measured before anything is constructed or walked: aliases
are shared nodes there, so an alias bomb ("billion laughs") costs its text size, and its
expanded size is refused (:data:`MAX_YAML_ALIASES`, :data:`MAX_YAML_ALIAS_NODES`,
:data:`MAX_YAML_DEPTH`) before anything expands it.
"""

from __future__ import annotations

import gc
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import yaml

from keiri_agent.errors import BlockError, ErrorCode, KeiriError, UserFile
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.issues import Loc, PlanIssue

__all__ = [
    "MAX_PLAN_BYTES",
    "MAX_YAML_ALIASES",
    "MAX_YAML_ALIAS_NODES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "PlanSource",
    "YamlLimitError",
    "load_source",
    "load_yaml",
    "parse_source",
    "resolve_plan_file",
]

MAX_PLAN_BYTES = 2 * 1024 * 1024
PLAN_FILE = UserFile(
    "Plan ファイル {file} が見つかりません。",
    hint="パスを確認してください。designs/ 配下の Plan は `ls designs` で一覧できます。",
    unreadable="Plan ファイル {file} を読めません",
)
MAX_YAML_ALIASES = 1_000  # alias uses (``*name``, merge keys ``<<: *name`` included)
MAX_YAML_ALIAS_NODES = 100_000  # nodes the aliases would add once expanded
MAX_YAML_NODES = 200_000  # scalars, mappings and sequences, aliases expanded
MAX_YAML_DEPTH = 100  # nesting of mappings and sequences
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BOOL_TAG = "tag:yaml.org,2002:bool"


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


def check_limits(text: str) -> None:
    """Refuse YAML whose expansion would be too large or too deep, before composing it.

    One pass over the parser's events, keeping only the open collections and the anchors'
    sizes: an alias adds the expanded size of its anchor (known once the anchor's node has
    ended), so an alias bomb is measured, never expanded. Raises :class:`YamlLimitError`;
    syntax errors are left to the composer that follows.
    """
    sizes: dict[str, int] = {}  # anchor → expanded size of its node
    stack: list[tuple[int, str | None]] = []  # open collections: (total at start, anchor)
    total = aliases = aliased = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                if any(anchor == event.anchor for _, anchor in stack):
                    raise YamlLimitError(
                        f"エイリアス *{event.anchor} が自分を含むアンカーを指しています（再帰的なエイリアス）。",
                        event.start_mark,
                    )
                continue  # undefined: the composer reports it
            aliases += 1
            aliased += sizes[event.anchor]
            total += sizes[event.anchor]
            if aliases > MAX_YAML_ALIASES:
                raise YamlLimitError(
                    f"エイリアス（*名前）の使用が {MAX_YAML_ALIASES:,} 回を超えています。",
                    event.start_mark,
                )
            if aliased > MAX_YAML_ALIAS_NODES:
                raise YamlLimitError(
                    f"エイリアスで展開される内容が {MAX_YAML_ALIAS_NODES:,} 要素を超えています"
                    "（アンカーとエイリアスの入れ子で大きくなる YAML です）。",
                    event.start_mark,
                )
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            stack.append((total, event.anchor))
            total += 1
            if len(stack) > MAX_YAML_DEPTH:
                raise YamlLimitError(
                    f"入れ子が {MAX_YAML_DEPTH} 段を超えています。", event.start_mark
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            begun, anchor = stack.pop()
            if anchor is not None:
                sizes[anchor] = total - begun
        if total > MAX_YAML_NODES:
            raise YamlLimitError(
                f"YAML の要素数（エイリアスの展開後）が {MAX_YAML_NODES:,} を超えています。",
                event.start_mark,
            )


LIMIT_HINT = (
    "アンカー（&名前）とエイリアス（*名前）の入れ子をやめ、必要な値をそのまま書いてください。"
    f" 上限: エイリアス {MAX_YAML_ALIASES:,} 回・その展開 {MAX_YAML_ALIAS_NODES:,} 要素、"
    f"全体 {MAX_YAML_NODES:,} 要素、入れ子 {MAX_YAML_DEPTH} 段（docs/limits.md）。"
    " 大きなデータは YAML に書かずファイルで渡してください。"
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


def _compose(text: str) -> tuple[yaml.Node | None, Any]:
    """One parse (libyaml when available): the checked node graph and the data built from it."""
    with _no_cycle_collection():
        return _compose_now(text)


def _compose_now(text: str) -> tuple[yaml.Node | None, Any]:
    check_limits(text)
    loader = _Loader(text)
    try:
        composed = loader.get_single_node()
        if composed is None:
            return None, None
        return composed, loader.construct_document(composed)
    finally:
        loader.dispose()


def load_yaml(text: str) -> Any:
    """YAML a person wrote for plans (answers, vars, config) read like plans: YAML 1.2 booleans.

    Raises ``yaml.YAMLError`` on bad syntax, as ``yaml.safe_load`` does, and
    :class:`YamlLimitError` (a ``yaml.YAMLError``) on YAML over the limits.
    """
    return _compose(text)[1]


PLAN_SUFFIXES = (".yaml", ".yml")


@dataclass
class PlanSource:
    """A plan as written: the raw mapping, its text and where each YAML path starts."""

    raw: Any
    text: str
    file: str | None = None
    positions: dict[Loc, tuple[int, int]] = field(default_factory=dict)
    syntax_error: PlanIssue | None = None

    def position(self, loc: Loc) -> tuple[int | None, int | None]:
        """Line and column (1-based) of ``loc``, or of its nearest located ancestor."""
        current = tuple(loc)
        while True:
            found = self.positions.get(current)
            if found is not None:
                return found
            if not current:
                return None, None
            current = current[:-1]


def _walk(node: yaml.Node, loc: Loc, out: dict[Loc, tuple[int, int]]) -> None:
    out.setdefault(loc, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            child = (*loc, key)
            # Point at the key: that is where a reader looks for "graph[2].in.prompt".
            out[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            _walk(value_node, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), out)


def parse_source(text: str, *, file: str | None = None) -> PlanSource:
    """Parse plan YAML; a syntax error becomes ``syntax_error`` (never an exception)."""
    with _no_cycle_collection():  # the source map too: a tuple per YAML path
        return _parse_source(text, file)


def _parse_source(text: str, file: str | None) -> PlanSource:
    try:
        composed, raw = _compose(text)
    except YamlLimitError as exc:
        mark = exc.problem_mark
        issue = PlanIssue(
            code=IssueCode.YAML_LIMIT,
            message=f"YAML を展開できません: {exc.problem}",
            line=mark.line + 1 if mark is not None else None,
            column=mark.column + 1 if mark is not None else None,
            hint=LIMIT_HINT,
            file=file,
        )
        return PlanSource(raw=None, text=text, file=file, syntax_error=issue)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        issue = PlanIssue(
            code=IssueCode.YAML_SYNTAX,
            message=f"YAML として解釈できません: {problem}",
            line=line,
            column=column,
            hint="インデント、コロンの後の空白、引用符の閉じ忘れを確認してください。"
            " `${...}` で始まる値は引用符で囲むと安全です。",
            file=file,
        )
        return PlanSource(raw=None, text=text, file=file, syntax_error=issue)
    positions: dict[Loc, tuple[int, int]] = {}
    if composed is not None:
        _walk(composed, (), positions)
    return PlanSource(raw=raw, text=text, file=file, positions=positions)


def load_source(path: Path | str) -> PlanSource:
    """Read a plan file (BlockError when it cannot be read at all)."""
    file = Path(path)
    with PLAN_FILE.reading(file):
        size = file.stat().st_size
        if size > MAX_PLAN_BYTES:
            raise BlockError(
                f"Plan ファイル {file} が大きすぎます（{size} バイト）。",
                code=ErrorCode.FILE_TOO_LARGE,
                hint=f"{MAX_PLAN_BYTES // 1024 // 1024} MB 以下にしてください。"
                " 大きなデータは Plan に埋め込まずファイルで渡してください。",
                details={"file": str(file), "size": size},
            )
        text = file.read_text(encoding="utf-8")
    return parse_source(text, file=str(file))


def resolve_plan_file(plan_id: str, designs_dir: Path) -> Path | None:
    """``common/validation_flow`` → ``designs/common/validation_flow.yaml`` (None if absent)."""
    base = designs_dir.resolve()
    for suffix in PLAN_SUFFIXES:
        candidate = (base / f"{plan_id}{suffix}").resolve()
        if candidate.is_relative_to(base) and candidate.is_file():
            return candidate
    return None
