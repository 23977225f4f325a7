"""A plan's graph as Graphviz DOT text, for ``st.graphviz_chart`` (rendered in the browser, so
no Graphviz binary is needed on the server).

Nodes are the plan's nodes; a loop is a cluster holding its own node (the loop's header) and its
body, whose nodes are named ``loop/child`` like the validator and the dry run name them. An edge
``a → b`` means that ``b`` references ``a`` (``${a.alias}``), taken from the plan's
``graph_shape``, the shape the validator checks for cycles and the runner runs in order, so the
picture shows the same dependencies (a reference reaches the innermost visible name; a loop's
``while`` condition may name its body's nodes; a ``${...}`` that does not parse draws no edge,
the validator reports it). Body nodes that depend on nothing inside the body get a dashed edge
from their loop's header. Nodes named in ``highlight`` (validation
errors) are drawn in red; nodes named in ``changes`` (a version diff: ``PlanDiff.touched``) are
drawn by how they changed: added green, changed or moved orange, removed grey, each with a
thick border and the change named in the label.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import (
    AnyNode,
    BlockNode,
    GraphShape,
    LoopNode,
    Plan,
    When,
    graph_shape,
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

    def graph(self, shape: GraphShape, indent: str) -> None:
        for node_id, node in shape.nodes.items():
            name = shape.prefix + node_id
            if isinstance(node, LoopNode):
                self._loop(node, shape, name, indent)
                continue
            self._node(name, node, indent)
            self._edges_to(name, shape.sources[node_id])

    def _edges_to(self, target: str, sources: Iterable[str]) -> None:
        self.edges.extend((source, target, False) for source in sources if source != target)

    def _loop(self, loop: LoopNode, shape: GraphShape, name: str, indent: str) -> None:
        self.lines.append(f"{indent}subgraph {_quote('cluster_' + name)} {{")
        inner = indent + "  "
        kind = "foreach" if loop.foreach is not None else "while"
        self.lines.append(f"{inner}label={_quote(f'{loop.id}（{kind} の本体）')};")
        self.lines.append(f'{inner}style="rounded,dashed"; color="#c9a227";')
        self._node(name, loop, inner)
        body = shape.bodies[loop.id]
        self.graph(body, inner)
        self.lines.append(f"{indent}}}")
        self._edges_to(name, shape.sources[loop.id])
        for child, deps in body.deps.items():
            if not deps - {child}:
                self.edges.append((name, body.prefix + child, True))


def plan_dot(
    plan: Mapping[str, Any],
    *,
    highlight: Collection[str] = (),
    changes: Mapping[str, str] | None = None,
) -> str:
    """The DOT text of ``plan`` (a plan as loaded from YAML); see the module docstring.

    Raises ``BlockError`` (``PLAN_INVALID``) when ``plan`` is not shaped like a plan.
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
    writer.graph(graph_shape(parsed.graph, unique_in="graph"), "  ")
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
