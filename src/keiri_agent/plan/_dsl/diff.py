"""What changed between two versions of a plan, in terms of the plan, not of its YAML.

:func:`diff_plans` is a pure function over two :class:`~keiri_agent.plan._dsl.models.Plan`
models; the CLI (``plan diff``), the API and the app's 設計 page all show its result. Nodes are
named by their path (a loop body's nodes as ``loop/child``, as the validator names them):

- **added** / **removed**: a node on one side only (a loop's body nodes go with their loop);
- **moved**: the same node id under another parent (into or out of a loop body), or at another
  place among its siblings (the nodes that are not on the longest common order);
- **changed**: a node on both sides whose settings differ, each named with its value before and
  after: an input (``in.<port>``, nested mappings down to their keys), the ``when`` condition,
  the block or its version, the output aliases, the loop's ``foreach``/``while`` settings, the
  body's exports and what the loop collects, the subflow's plan and inputs.

Beside the nodes: ``vars`` (each name), ``exports`` (each ``as``) and the plan's own fields
(``version``, ``description``, ``policy.*``, ``ui.layout``, ``ui.vars.*``: each var's label).
What a person reads (``describe``, ``text``, ``lines``) names a var as the plans name it to
their user (``names``: ``PlanNames.var``, its ``ui.vars`` label, the newer plan's first); a
label's own change names the var as it was known before (its id where it had no label). The
fields (``field``: ``vars.closing_month``) keep the ids.
Formatting (YAML layout, comments, key order) changes nothing here; a version whose text differs
only in those has an empty diff.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from keiri_agent.plan._dsl.models import Export, LoopNode, Plan, SubflowNode, when_raw

__all__ = ["ABSENT", "FieldChange", "NodeChange", "PlanDiff", "VarNames", "diff_plans"]

MAX_VALUE_CHARS = 120  # a value shown in a change; longer ones are cut with "…"


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()  # the value of a field on the side where it does not exist


class VarNames(Protocol):
    """How a plan names its vars to a person (``PlanNames``)."""

    def var(self, name: str) -> str: ...


AnyNode = Any  # BlockNode | LoopNode | SubflowNode (a union pydantic builds from Node)
ChangeKind = Literal["added", "removed", "moved", "changed"]


def _show(value: Any) -> str:
    if value is ABSENT:
        return "（なし）"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _shown_apart(before: Any, after: Any) -> tuple[str, str]:
    """Two different values as a reviewer can tell them apart: as :func:`_show` writes them,
    or, where those differ in white space only (a final line break, spaces) or not at all
    ("500" and 500, a difference past the cut), as JSON (quotes, ``\\n``) around their first
    difference."""
    old, new = _show(before), _show(after)
    if "".join(old.split()) != "".join(new.split()):  # they differ in more than white space
        return old, new
    old, new = (json.dumps(v, ensure_ascii=False, default=str) for v in (before, after))
    at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
    start = max((min(len(old), len(new)) if at is None else at) - MAX_VALUE_CHARS // 2, 0)

    def clip(text: str) -> str:
        end = start + MAX_VALUE_CHARS
        return ("…" if start else "") + text[start:end] + ("…" if len(text) > end else "")

    return clip(old), clip(new)


_LABELS = {
    "when": "実行条件（when）",
    "block": "ブロック",
    "block.version": "ブロックの版",
    "type": "ノードの種類",
    "description": "説明",
    "foreach.input": "foreach の対象",
    "foreach.itemVar": "foreach の要素の変数名",
    "foreach.indexVar": "foreach の番号の変数名",
    "foreach.max_concurrency": "foreach の並列数",
    "while.condition": "while の条件",
    "while.max_iterations": "while の最大回数",
    "while.required": "while の上限で止めるか（required）",
    "body.exports": "ループ本体の exports",
    "out.collect": "ループが集める出力",
    "call.plan_id": "呼び出す Plan",
    "version": "Plan の版",
    "apiVersion": "apiVersion",
    "ui.layout": "画面の並び（ui.layout）",
}
_PREFIXES = (
    ("in.", "入力 "),
    ("out.exports.", "サブフローの exports "),
    ("out.", "出力の別名 "),
    ("call.inputs.", "サブフローへの入力 "),
    ("policy.", "ポリシー "),
    ("vars.", "設定値 "),
    ("ui.vars.", "設定値の表示名 "),
    ("exports.", "exports "),
)


def _label(name: str, subject: str | None = None) -> str:
    """What field ``name`` is called; ``subject`` names what its prefix is about in place of
    the rest of ``name`` (a var's label; "" for nothing, where the values name it)."""
    if name in _LABELS:
        return _LABELS[name]
    for prefix, label in _PREFIXES:
        if name.startswith(prefix):
            rest = name.removeprefix(prefix) if subject is None else subject
            return (label + rest).rstrip()
    return name


@dataclass(frozen=True)
class FieldChange:
    """One setting that differs: its name (``in.amount``, ``when``, ``vars.month``...) and
    its values before and after (:data:`ABSENT` where it does not exist)."""

    name: str
    before: Any
    after: Any
    subject: str | None = None  # how a person knows what the field is about (a var's label)

    def describe(self) -> str:
        label = _label(self.name, self.subject)
        if self.before is ABSENT:
            return f"{label} を追加: {_show(self.after)}"
        if self.after is ABSENT:
            return f"{label} を削除（元は {_show(self.before)}）"
        before, after = _shown_apart(self.before, self.after)
        return f"{label}: {before} → {after}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"field": self.name}
        if self.before is not ABSENT:
            data["before"] = self.before
        if self.after is not ABSENT:
            data["after"] = self.after
        data["text"] = self.describe()
        return data


@dataclass(frozen=True)
class NodeChange:
    """A node added, removed, moved or changed (a moved node may be changed as well)."""

    path: str  # on the new side (on the old side for a removed node)
    kind: ChangeKind
    node_type: str  # block | loop | subflow
    changes: tuple[FieldChange, ...] = ()
    old_path: str | None = None  # moved: where it was
    old_index: int | None = None  # moved: its place among its siblings (1-based), before/after
    new_index: int | None = None

    def describe(self) -> str:
        if self.kind == "added":
            return f"ノード {self.path} を追加"
        if self.kind == "removed":
            return f"ノード {self.path} を削除"
        if self.kind == "moved" and self.old_path != self.path:
            head = f"ノード {self.path} を移動（元は {self.old_path}）"
        elif self.kind == "moved":
            head = (
                f"ノード {self.path} の位置を変更（{self.old_index} 番目 → {self.new_index} 番目）"
            )
        else:
            head = f"ノード {self.path} を変更"
        return head + (f"（{len(self.changes)} 項目）" if self.changes else "")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"node": self.path, "kind": self.kind, "type": self.node_type}
        if self.kind == "moved":
            data.update(from_path=self.old_path, from_index=self.old_index)
            data.update(to_index=self.new_index)
        data["changes"] = [c.to_dict() for c in self.changes]
        data["text"] = self.describe()
        return data


@dataclass(frozen=True)
class PlanDiff:
    """Everything that differs between two plans (empty when they mean the same)."""

    nodes: tuple[NodeChange, ...] = ()
    vars: tuple[FieldChange, ...] = ()
    exports: tuple[FieldChange, ...] = ()
    plan: tuple[FieldChange, ...] = ()  # version, description, policy.*, ui.layout...

    @property
    def empty(self) -> bool:
        return not (self.nodes or self.vars or self.exports or self.plan)

    def node(self, path: str) -> NodeChange | None:
        return next((n for n in self.nodes if n.path == path), None)

    def touched(self, side: Literal["old", "new"] = "new") -> dict[str, ChangeKind]:
        """Node path → how it changed, for drawing one side's graph (``new``: added, moved,
        changed; ``old``: removed, and where moved nodes were)."""
        if side == "new":
            return {n.path: n.kind for n in self.nodes if n.kind != "removed"}
        found: dict[str, ChangeKind] = {
            n.path: n.kind for n in self.nodes if n.kind in ("removed", "changed")
        }
        found.update({n.old_path: n.kind for n in self.nodes if n.old_path})
        return found

    def lines(self) -> list[str]:
        """The diff in Japanese, one line per node or setting (field changes indented)."""
        out = [f"Plan の設定 {c.describe()}" for c in self.plan]
        out += [c.describe() for c in (*self.vars, *self.exports)]
        for node in self.nodes:
            out.append(node.describe())
            out += [f"  - {c.describe()}" for c in node.changes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "empty": self.empty,
            "nodes": [n.to_dict() for n in self.nodes],
            "vars": [c.to_dict() for c in self.vars],
            "exports": [c.to_dict() for c in self.exports],
            "plan": [c.to_dict() for c in self.plan],
        }


# --- flattening ------------------------------------------------------------------------------


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """Mappings down to their leaves (``in.options.mode``); anything else is one value."""
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            _flatten(f"{prefix}.{key}", item, out)
    else:
        out[prefix] = value


def _when_text(when: Any) -> Any:
    if when is None:
        return ABSENT
    raw = when_raw(when)
    return raw if isinstance(raw, str) else dict(raw)


def _exports(exports: Sequence[Export], prefix: str) -> dict[str, Any]:
    return {f"{prefix}.{e.as_}": e.from_ for e in exports}


def _settings(node: AnyNode) -> dict[str, Any]:
    """A node's settings as ``name → value`` (a loop's body nodes are nodes of their own)."""
    flat: dict[str, Any] = {"type": node.type}
    if node.description is not None:
        flat["description"] = node.description
    if node.when is not None:
        flat["when"] = _when_text(node.when)
    if isinstance(node, LoopNode):
        if node.foreach is not None:
            spec = node.foreach.model_dump(by_alias=True)
            _flatten("foreach", spec, flat)
        if node.while_ is not None:
            flat["while.condition"] = _when_text(node.while_.condition)
            flat["while.max_iterations"] = node.while_.max_iterations
            flat["while.required"] = node.while_.required
        flat.update(_exports(node.body.plan.exports, "body.exports"))
        if node.out.collect is not None:
            flat["out.collect"] = node.out.collect
    elif isinstance(node, SubflowNode):
        flat["call.plan_id"] = node.call.plan_id
        for key, item in node.call.inputs.items():
            _flatten(f"call.inputs.{key}", item, flat)
        flat.update(_exports(node.out.exports, "out.exports"))
    else:
        block, _, version = node.block.partition("@")
        flat["block"] = block
        if version:
            flat["block.version"] = version
        for key, item in node.inputs.items():
            _flatten(f"in.{key}", item, flat)
        for port, alias in node.out.items():
            flat[f"out.{port}"] = alias
    return flat


def _compare(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[FieldChange, ...]:
    names = [*before, *(n for n in after if n not in before)]
    return tuple(
        FieldChange(n, before.get(n, ABSENT), after.get(n, ABSENT))
        for n in names
        if before.get(n, ABSENT) != after.get(n, ABSENT)
    )


@dataclass
class _Place:
    node: AnyNode
    parent: str  # "" at the top, else the loop's path
    index: int  # 1-based among its siblings

    @property
    def path(self) -> str:
        return f"{self.parent}/{self.node.id}" if self.parent else self.node.id


def _places(graph: Sequence[AnyNode], parent: str = "") -> Iterator[_Place]:
    for index, node in enumerate(graph, start=1):
        place = _Place(node, parent, index)
        yield place
        if isinstance(node, LoopNode):
            yield from _places(node.body.plan.graph, place.path)


def _common_order(old: Sequence[str], new: Sequence[str]) -> set[str]:
    """The ids on the longest common subsequence of two orders (the ones that did not move)."""
    lengths = [[0] * (len(new) + 1) for _ in range(len(old) + 1)]
    for i, a in enumerate(old):
        for j, b in enumerate(new):
            lengths[i + 1][j + 1] = (
                lengths[i][j] + 1 if a == b else max(lengths[i][j + 1], lengths[i + 1][j])
            )
    kept: set[str] = set()
    i, j = len(old), len(new)
    while i and j:
        if old[i - 1] == new[j - 1]:
            kept.add(old[i - 1])
            i, j = i - 1, j - 1
        elif lengths[i - 1][j] >= lengths[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return kept


@dataclass
class _Matching:
    pairs: list[tuple[_Place, _Place]] = field(default_factory=list)
    removed: list[_Place] = field(default_factory=list)
    added: list[_Place] = field(default_factory=list)


def _match(old: list[_Place], new: list[_Place]) -> _Matching:
    """Pairs by path, then the rest by node id where the id is unique on both sides."""
    result = _Matching()
    new_by_path = {p.path: p for p in new}
    paired: set[str] = set()
    rest_old: list[_Place] = []
    for place in old:
        other = new_by_path.get(place.path)
        if other is not None:
            result.pairs.append((place, other))
            paired.add(other.path)
        else:
            rest_old.append(place)
    rest_new = [p for p in new if p.path not in paired]
    ids_old = [p.node.id for p in rest_old]
    ids_new = {p.node.id: p for p in rest_new}
    counts_new = [p.node.id for p in rest_new]
    for place in rest_old:
        node_id = place.node.id
        if ids_old.count(node_id) == 1 and counts_new.count(node_id) == 1:
            other = ids_new[node_id]
            result.pairs.append((place, other))
            paired.add(other.path)
        else:
            result.removed.append(place)
    result.added = [p for p in rest_new if p.path not in paired]
    return result


def _moved_in_order(pairs: list[tuple[_Place, _Place]]) -> set[str]:
    """New paths of nodes that stayed under their parent but left the common order."""
    by_parent: dict[tuple[str, str], list[tuple[_Place, _Place]]] = {}
    for before, after in pairs:
        by_parent.setdefault((before.parent, after.parent), []).append((before, after))
    moved: set[str] = set()
    for (old_parent, new_parent), group in by_parent.items():
        if old_parent != new_parent:
            continue
        old_order = [b.node.id for b, _ in sorted(group, key=lambda pair: pair[0].index)]
        new_order = [a.node.id for _, a in sorted(group, key=lambda pair: pair[1].index)]
        kept = _common_order(old_order, new_order)
        moved |= {a.path for _, a in group if a.node.id not in kept}
    return moved


def _nodes(old: Plan, new: Plan) -> tuple[NodeChange, ...]:
    matching = _match(list(_places(old.graph)), list(_places(new.graph)))
    reordered = _moved_in_order(matching.pairs)
    gone = {p.path for p in matching.removed}
    came = {p.path for p in matching.added}
    changes: list[NodeChange] = []
    for place in matching.removed:
        if place.parent not in gone:  # a loop's body goes with the loop
            changes.append(NodeChange(place.path, "removed", place.node.type))
    for before, after in sorted(matching.pairs, key=lambda pair: pair[1].path):
        fields = _compare(_settings(before.node), _settings(after.node))
        if before.path != after.path or after.path in reordered:
            changes.append(
                NodeChange(
                    after.path,
                    "moved",
                    after.node.type,
                    fields,
                    old_path=before.path,
                    old_index=before.index,
                    new_index=after.index,
                )
            )
        elif fields:
            changes.append(NodeChange(after.path, "changed", after.node.type, fields))
    for place in matching.added:
        if place.parent not in came:
            changes.append(NodeChange(place.path, "added", place.node.type))
    order = {kind: n for n, kind in enumerate(("removed", "added", "moved", "changed"))}
    return tuple(sorted(changes, key=lambda c: (order[c.kind], c.path)))


def _plan_fields(plan: Plan) -> dict[str, Any]:
    flat: dict[str, Any] = {"apiVersion": plan.apiVersion, "version": plan.version}
    if plan.description is not None:
        flat["description"] = plan.description
    _flatten("policy", plan.policy.model_dump(), flat)
    flat["ui.layout"] = list(plan.ui.layout)
    flat.update({f"ui.vars.{name}": label for name, label in plan.ui.vars.items()})
    return flat


def _var_said(change: FieldChange, old: VarNames, new: VarNames) -> FieldChange:
    """``change`` with the var it is about named as a person knows it: a var's value by the
    newer plan's label (the older one's, where only that one has a label); a var's label by
    the name it had before (nothing where that is the label the change shows before)."""
    if change.name.startswith("ui.vars."):
        known = old.var(change.name.removeprefix("ui.vars."))
        return replace(change, subject="" if known == change.before else known)
    if change.name.startswith("vars."):
        name = change.name.removeprefix("vars.")
        newer = new.var(name)
        return replace(change, subject=old.var(name) if newer == name else newer)
    return change


def diff_plans(old: Plan, new: Plan, names: tuple[VarNames, VarNames] | None = None) -> PlanDiff:
    """What changed from ``old`` to ``new`` (see the module docstring); ``names``: how each
    side names its vars to a person (``PlanNames`` of ``old`` and of ``new``; without it, vars
    are named by their ids)."""
    vars_ = _compare(
        {f"vars.{k}": v for k, v in old.vars.items()},
        {f"vars.{k}": v for k, v in new.vars.items()},
    )
    plan = _compare(_plan_fields(old), _plan_fields(new))
    if names is not None:
        vars_ = tuple(_var_said(change, *names) for change in vars_)
        plan = tuple(_var_said(change, *names) for change in plan)
    return PlanDiff(
        nodes=_nodes(old, new),
        vars=vars_,
        exports=_compare(_exports(old.exports, "exports"), _exports(new.exports, "exports")),
        plan=plan,
    )
