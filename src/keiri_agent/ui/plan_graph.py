"""A plan's graph as Graphviz DOT text, for ``st.graphviz_chart`` (rendered in the browser, so
no Graphviz binary is needed on the server).

Nodes are the plan's nodes; a loop is a cluster holding its own node (the loop's header) and its
body, whose nodes are named ``loop/child`` like the validator and the dry run name them. An edge
``a → b`` means that ``b`` references ``a`` (``${a.alias}``), found with the plan package's own
reference helpers (``references_in``, ``iter_references``, ``compile_when``) so the picture shows
the same dependencies the runner uses. A reference resolves in the innermost scope first (a
loop's ``while`` condition may name its body's nodes). Body nodes that depend on nothing inside
the body get a dashed edge from their loop's header. Nodes named in ``highlight`` (validation
errors) are drawn in red; nodes named in ``changes`` (a version diff: ``PlanDiff.touched``) are
drawn by how they changed: added green, changed or moved orange, removed grey, each with a
thick border and the change named in the label.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import (
    AnyNode,
    BlockNode,
    LoopNode,
    Plan,
    When,
    compile_when,
    iter_references,
    references_in,
    when_raw,
)

__all__ = ["MAX_LABEL_CHARS", "plan_dot"]

MAX_LABEL_CHARS = 40
_FONT = "sans-serif"
_FILL = {"block": "#eef4ff", "loop": "#fff4dd", "subflow": "#eefbea"}
_ERROR_FILL = "#ffe0e0"
_ERROR_LINE = "#d62728"
# How a node changed between two versions: (fill, border, label note).
_CHANGE_STYLES = {
    "added": ("#ddf6dd", "#2ca02c", "追加"),
    "changed": ("#ffe9c7", "#ff7f0e", "変更"),
    "moved": ("#ffe9c7", "#ff7f0e", "移動"),
    "removed": ("#e6e6e6", "#7f7f7f", "削除"),
}

Scope = dict[str, str]  # node id → its DOT name, one per graph level


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_LABEL_CHARS else flat[: MAX_LABEL_CHARS - 1] + "…"


def _when_text(when: When) -> str:
    raw = when_raw(when)
    if isinstance(raw, str):
        return raw
    if "expr" in raw:
        return str(raw["expr"])
    return f"{raw.get('left')} {raw.get('op')} {raw.get('right')}"


def _label(node: AnyNode) -> str:
    lines = [node.id]
    if isinstance(node, BlockNode):
        lines.append(node.block)
    elif isinstance(node, LoopNode):
        if node.foreach is not None:
            lines.append(f"foreach（{node.foreach.itemVar}）")
        if node.while_ is not None:
            lines.append(f"while（最大 {node.while_.max_iterations} 回）")
    else:
        lines.append(f"subflow: {node.call.plan_id}")
    if node.when is not None:
        lines.append("when: " + _short(_when_text(node.when)))
    return "\n".join(lines)


def _roots_of_when(when: When | None) -> set[str]:
    if when is None:
        return set()
    return {ref.root for ref in compile_when(when_raw(when)).references}


def _header_roots(loop: LoopNode) -> set[str]:
    """What the loop itself references (``when``, ``foreach.input``, ``while.condition``)."""
    roots = _roots_of_when(loop.when) | _roots_of_when(
        loop.while_.condition if loop.while_ is not None else None
    )
    if loop.foreach is not None:
        roots |= {ref.root for _, ref in iter_references(loop.foreach.input)}
    return roots


class _Writer:
    def __init__(self, highlight: Collection[str], changes: Mapping[str, str]) -> None:
        self.highlight = set(highlight)
        self.changes = dict(changes)
        self.lines: list[str] = []
        self.edges: list[tuple[str, str, bool]] = []  # (from, to, dashed)

    def _node(self, name: str, node: AnyNode, indent: str) -> None:
        kind = "block" if isinstance(node, BlockNode) else node.type
        bare = name.rsplit("/", 1)[-1]
        failed = name in self.highlight or bare in self.highlight
        change = _CHANGE_STYLES.get(self.changes.get(name, ""))
        label = _label(node) + (f"\n（{change[2]}）" if change else "")
        fill = _ERROR_FILL if failed else change[0] if change else _FILL[kind]
        attrs = [f"label={_quote(label)}", f"fillcolor={_quote(fill)}"]
        if kind == "loop":
            attrs.append("shape=hexagon")
        elif kind == "subflow":
            attrs.append("shape=component")
        if failed:
            attrs += [f"color={_quote(_ERROR_LINE)}", "penwidth=2"]
        elif change:
            attrs += [f"color={_quote(change[1])}", "penwidth=3"]
        if node.when is not None:
            attrs.append('style="rounded,filled,dashed"')
        self.lines.append(f"{indent}{_quote(name)} [{', '.join(attrs)}];")

    def _edge_from(self, root: str, scopes: Sequence[Scope], target: str) -> None:
        for scope in reversed(scopes):  # innermost first
            source = scope.get(root)
            if source is not None:
                if source != target:
                    self.edges.append((source, target, False))
                return

    def graph(
        self, nodes: Iterable[AnyNode], scopes: Sequence[Scope], prefix: str, indent: str
    ) -> Scope:
        nodes = list(nodes)
        scope: Scope = {node.id: prefix + node.id for node in nodes}
        chain = [*scopes, scope]
        for node in nodes:
            name = scope[node.id]
            if isinstance(node, LoopNode):
                self._loop(node, name, chain, indent)
                continue
            self._node(name, node, indent)
            for root in sorted(references_in(node)):
                self._edge_from(root, chain, name)
        return scope

    def _loop(self, loop: LoopNode, name: str, chain: list[Scope], indent: str) -> None:
        self.lines.append(f"{indent}subgraph {_quote('cluster_' + name)} {{")
        inner = indent + "  "
        kind = "foreach" if loop.foreach is not None else "while"
        self.lines.append(f"{inner}label={_quote(f'{loop.id}（{kind} の本体）')};")
        self.lines.append(f'{inner}style="rounded,dashed"; color="#c9a227";')
        self._node(name, loop, inner)
        body = list(loop.body.plan.graph)
        body_scope = self.graph(body, chain, f"{name}/", inner)
        self.lines.append(f"{indent}}}")
        for root in sorted(_header_roots(loop)):
            self._edge_from(root, [*chain, body_scope], name)
        for child in body:
            if not references_in(child) & body_scope.keys() - {child.id}:
                self.edges.append((name, body_scope[child.id], True))


def plan_dot(
    plan: Mapping[str, Any],
    *,
    highlight: Collection[str] = (),
    changes: Mapping[str, str] | None = None,
) -> str:
    """The DOT text of ``plan`` (a plan as loaded from YAML); see the module docstring.

    Raises ``BlockError`` (``PLAN_INVALID``) when ``plan`` is not shaped like a plan, and the
    reference errors of the plan package when a ``${...}`` or a condition cannot be parsed.
    """
    try:
        parsed = Plan.model_validate(plan)
    except ValidationError as exc:
        raise BlockError(
            "Plan の形になっていないため、グラフを描けません。",
            code=ErrorCode.PLAN_INVALID,
            hint="検証を実行して、エラーの出たノードを直してください。",
            details={
                "errors": exc.errors(include_url=False, include_context=False, include_input=False)
            },
        ) from exc
    writer = _Writer(highlight, changes or {})
    writer.graph(parsed.graph, [], "", "  ")
    header = [
        "digraph plan {",
        f"  graph [rankdir=LR, label={_quote(parsed.id)}, labelloc=t, fontname={_quote(_FONT)}];",
        f'  node [shape=box, style="rounded,filled", fontname={_quote(_FONT)}];',
        f"  edge [fontname={_quote(_FONT)}];",
    ]
    seen: set[tuple[str, str]] = set()
    edges: list[str] = []
    for source, target, dashed in writer.edges:
        if (source, target) in seen:
            continue
        seen.add((source, target))
        style = " [style=dashed]" if dashed else ""
        edges.append(f"  {_quote(source)} -> {_quote(target)}{style};")
    return "\n".join([*header, *writer.lines, *edges, "}"]) + "\n"
