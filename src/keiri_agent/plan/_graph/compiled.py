"""A plan's graphs: their shape (nodes, edges, order, cycles) and, once valid, the parsed forms.

:func:`graph_shape` computes the shape of any plan without raising: the validator reports its
cycles, the app draws it (``ui.plan_graph``) and :func:`compile_graph` runs in its order.

Compiling happens once per run (and per subflow plan). It parses every ``when`` and ``while``
condition and every binding (a node's ``in``, ``call.inputs``, ``foreach.input``) once, so
executing a node, however often a loop runs it, parses nothing. The runner, rerun invalidation
and the dry run all read the same edges: a node depends on the nodes of its graph that it references
in ``in``, ``when``, a loop's ``foreach.input``/``while.condition``, anywhere in a loop's body,
or in a subflow's ``call.inputs``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Literal

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan._dsl.bindings import Binding, compile_binding
from keiri_agent.plan._dsl.expr import Expression, compile_when
from keiri_agent.plan._dsl.models import (
    RESERVED_ROOTS,
    BlockNode,
    Export,
    LoopNode,
    SubflowNode,
    WhenCompare,
    WhenExpr,
    when_raw,
)
from keiri_agent.plan._dsl.refs import Reference, bare_reference, iter_references

__all__ = [
    "CompiledGraph",
    "GraphShape",
    "NodeReads",
    "compile_graph",
    "find_cycle",
    "graph_shape",
    "node_reads",
    "references_in",
    "topological_order",
]

AnyNode = BlockNode | LoopNode | SubflowNode


def _when_roots(when: str | WhenExpr | WhenCompare | None) -> frozenset[str]:
    """The roots a condition reads; one that does not parse reads none (the validator says why)."""
    if when is None:
        return frozenset()
    try:
        return frozenset(r.root for r in compile_when(when_raw(when)).references)
    except BlockError:
        return frozenset()


def _value_roots(value: Any) -> frozenset[str]:
    """The roots a value reads; one whose ``${...}`` does not parse reads none."""
    try:
        return frozenset(ref.root for _, ref in iter_references(value))
    except BlockError:
        return frozenset()


@dataclass(frozen=True)
class NodeReads:
    """The reference roots a node reads itself (its loop body's nodes read their own):
    ``here`` in its graph's scope (``when``, ``in``, ``call.inputs``, ``foreach.input``),
    ``body`` in its loop body's scope (``while.condition``, which may read the body's nodes)."""

    here: frozenset[str]
    body: frozenset[str] = frozenset()


ReadsOf = Callable[[AnyNode], NodeReads]


def node_reads(node: AnyNode) -> NodeReads:
    """What ``node`` reads, parsing its texts (each input value on its own, as the validator
    checks them); the compiled graph reads the same from its parsed forms."""
    here = _when_roots(node.when)
    if isinstance(node, BlockNode):
        return NodeReads(here.union(*map(_value_roots, node.inputs.values())))
    if isinstance(node, SubflowNode):
        return NodeReads(here.union(*map(_value_roots, node.call.inputs.values())))
    if node.foreach is not None:
        here |= _value_roots(node.foreach.input)
    return NodeReads(here, _when_roots(node.while_.condition if node.while_ else None))


def references_in(node: AnyNode) -> set[str]:
    """Every reference root used by ``node`` (including inside loop bodies)."""
    reads = node_reads(node)
    roots = set(reads.here | reads.body)
    if isinstance(node, LoopNode):
        for inner in node.body.plan.graph:
            roots |= references_in(inner)
    return roots


@dataclass
class CompiledGraph:
    nodes: dict[str, AnyNode]
    order: list[str]  # topological, stable with respect to the file's order
    deps: dict[str, set[str]]
    dependents: dict[str, set[str]] = field(default_factory=dict)
    bodies: dict[str, CompiledGraph] = field(default_factory=dict)  # loop id → body graph
    conditions: dict[str, Expression] = field(default_factory=dict)  # node id → parsed when
    loop_conditions: dict[str, Expression] = field(default_factory=dict)  # loop id → while
    bindings: dict[str, Binding] = field(default_factory=dict)  # node id → in / inputs / foreach
    exports: list[tuple[str, Reference]] = field(default_factory=list)  # (as, from) of a body
    starts: tuple[str, ...] = ()  # the nodes without dependencies, in order
    position: dict[str, int] = field(default_factory=dict)  # node id → its index in order

    def downstream(self, node_id: str) -> set[str]:
        """``node_id`` and everything that depends on it, transitively."""
        out = {node_id}
        stack = [node_id]
        while stack:
            for user in self.dependents.get(stack.pop(), ()):
                if user not in out:
                    out.add(user)
                    stack.append(user)
        return out


def topological_order(
    ids: Sequence[str], deps: Mapping[str, AbstractSet[str]]
) -> tuple[list[str], list[str]]:
    """Kahn's algorithm over ``ids`` (in file order) with each one's dependencies ``deps``.

    Returns (order, stuck): the topological order, taking the first ready node in file order so
    runs are reproducible, and the nodes on or behind a cycle, in file order (empty for a DAG).
    Dependencies outside ``ids`` are ignored. The compiled graph and the validator's cycle
    check both use it.
    """
    position = {n: i for i, n in enumerate(ids)}
    users: dict[str, list[str]] = {n: [] for n in ids}
    pending = dict.fromkeys(ids, 0)
    for node_id in ids:
        for dep in deps.get(node_id, ()):
            if dep in position:
                users[dep].append(node_id)
                pending[node_id] += 1
    ready = [position[n] for n, c in pending.items() if c == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        current = ids[heapq.heappop(ready)]
        order.append(current)
        for user in users[current]:
            pending[user] -= 1
            if pending[user] == 0:
                heapq.heappush(ready, position[user])
    done = set(order)
    return order, [n for n in ids if n not in done]


def find_cycle(stuck: Sequence[str], deps: Mapping[str, AbstractSet[str]]) -> tuple[str, ...]:
    """One cycle among ``stuck`` (each has a dependency among them), closed: (a, b, a); from
    the first in file order, taking the first dependency by name, so the report is stable."""
    if not stuck:
        return ()
    allowed = set(stuck)
    path = [stuck[0]]
    seen = {stuck[0]: 0}
    while True:
        nxt = sorted(deps[path[-1]] & allowed)[0]
        if nxt in seen:
            return (*path[seen[nxt] :], nxt)
        seen[nxt] = len(path)
        path.append(nxt)


@dataclass(frozen=True)
class GraphShape:
    """A graph's nodes and dependencies as every phase sees them, for any plan, valid or not.

    A reference reaches the innermost visible name (a loop variable before a node, then the
    enclosing graphs); a node depends on the nodes of its graph that it, or anything in its
    loop body, reaches (for a node id defined twice see :func:`graph_shape`). ``sources``: the
    qualified names (``loop/child``) of the nodes a node's own references reach, at any level,
    in the order of their root names.
    """

    nodes: dict[str, AnyNode]
    deps: dict[str, frozenset[str]]
    sources: dict[str, tuple[str, ...]]
    order: tuple[str, ...]  # topological, stable with respect to the file's order
    stuck: tuple[str, ...]  # the nodes on or behind a cycle, in file order
    cycle: tuple[str, ...]  # one cycle among them, closed (a, b, a); () for a DAG
    bodies: dict[str, GraphShape]  # loop id → its body's shape
    prefix: str = ""  # "loop/" for a loop body's nodes


@dataclass
class _Level:
    """One graph's names while the shape is built: its nodes and the loop variables it binds."""

    prefix: str
    loop_vars: frozenset[str]
    nodes: dict[str, AnyNode] = field(default_factory=dict)
    bodies: dict[str, _Level] = field(default_factory=dict)


def _levels(
    graph: Iterable[AnyNode],
    prefix: str,
    loop_vars: frozenset[str],
    seen: set[str],
    plan_wide: bool,
) -> _Level:
    """``seen``: the ids defined so far (in the whole plan when ``plan_wide``, else here)."""
    level = _Level(prefix, loop_vars)
    for node in graph:
        if node.id in seen:
            continue
        seen.add(node.id)
        level.nodes[node.id] = node
        if isinstance(node, LoopNode):
            each = node.foreach
            names = frozenset(filter(None, (each.itemVar, each.indexVar))) if each else frozenset()
            inner = seen if plan_wide else set()
            body = node.body.plan.graph
            level.bodies[node.id] = _levels(body, f"{prefix}{node.id}/", names, inner, plan_wide)
    return level


def _reach(root: str, chain: Sequence[_Level]) -> tuple[int, str] | None:
    """(depth, node id) of the node ``root`` names from the innermost of ``chain``."""
    if root in RESERVED_ROOTS:
        return None
    for depth in range(len(chain) - 1, -1, -1):
        if root in chain[depth].loop_vars:
            return None
        if root in chain[depth].nodes:
            return depth, root
    return None


def _shape(
    level: _Level, outer: list[_Level], reads_of: ReadsOf
) -> tuple[GraphShape, list[tuple[int, str]]]:
    """``level``'s shape and the reads of its nodes that reach enclosing graphs."""
    chain = [*outer, level]
    depth = len(outer)
    deps: dict[str, frozenset[str]] = {}
    sources: dict[str, tuple[str, ...]] = {}
    bodies: dict[str, GraphShape] = {}
    escaping: list[tuple[int, str]] = []
    for node_id, node in level.nodes.items():
        reads = reads_of(node)
        named = [(root, _reach(root, chain)) for root in reads.here]
        reached = [found for _, found in named if found is not None]
        body = level.bodies.get(node_id)
        if body is not None:
            inner = [(root, _reach(root, [*chain, body])) for root in reads.body]
            named += inner
            reached += [f for _, f in inner if f is not None and f[0] <= depth]
            bodies[node_id], from_body = _shape(body, chain, reads_of)
            reached += from_body
        deps[node_id] = frozenset(n for d, n in reached if d == depth)
        escaping += [(d, n) for d, n in reached if d < depth]
        levels = [*chain, body] if body is not None else chain
        found = sorted((root, levels[f[0]].prefix + f[1]) for root, f in named if f is not None)
        sources[node_id] = tuple(dict.fromkeys(qual for _, qual in found))
    order, stuck = topological_order(list(level.nodes), deps)
    shape = GraphShape(
        nodes=dict(level.nodes),
        deps=deps,
        sources=sources,
        order=tuple(order),
        stuck=tuple(stuck),
        cycle=find_cycle(stuck, deps),
        bodies=bodies,
        prefix=level.prefix,
    )
    return shape, escaping


def graph_shape(
    graph: Iterable[AnyNode],
    reads_of: ReadsOf = node_reads,
    *,
    unique_in: Literal["plan", "graph"] = "plan",
) -> GraphShape:
    """The shape of a plan's graph (its loop bodies nested); never raises for a bad plan.

    The validator reports its cycles, the compiled graph runs in its order, the app draws it.
    ``reads_of``: what a node reads (the compiled graph passes its parsed forms). ``unique_in``:
    a node id defined twice counts at its first definition in the whole ``plan`` (the
    validator's scopes; it reports the second) or in each ``graph`` (the app draws every loop
    body's nodes). A valid plan has one shape either way.
    """
    top = _levels(graph, "", frozenset(), set(), unique_in == "plan")
    return _shape(top, [], reads_of)[0]


@dataclass(frozen=True)
class _Parsed:
    binding: Binding
    when: Expression | None
    loop_when: Expression | None

    def reads(self) -> NodeReads:
        here = self.binding.roots() | _expression_roots(self.when)
        return NodeReads(frozenset(here), frozenset(_expression_roots(self.loop_when)))


def _expression_roots(expression: Expression | None) -> set[str]:
    return {r.root for r in expression.references} if expression is not None else set()


def _parse(graph: Iterable[AnyNode], into: dict[int, _Parsed]) -> None:
    for node in graph:
        loop_when = None
        if isinstance(node, LoopNode):
            _parse(node.body.plan.graph, into)
            if node.while_ is not None:
                loop_when = compile_when(when_raw(node.while_.condition))
        when = compile_when(when_raw(node.when)) if node.when is not None else None
        into[id(node)] = _Parsed(compile_binding(_bound_value(node)), when, loop_when)


def compile_graph(graph: list[AnyNode], exports: Sequence[Export] = ()) -> CompiledGraph:
    """A valid plan's graph compiled: every condition and binding parsed once, its shape
    (:func:`graph_shape`) from those parsed forms; a cycle raises (never run half a graph)."""
    parsed: dict[int, _Parsed] = {}
    _parse(graph, parsed)
    return _compiled(graph_shape(graph, lambda node: parsed[id(node)].reads()), exports, parsed)


def _compiled(
    shape: GraphShape, exports: Sequence[Export], parsed: dict[int, _Parsed]
) -> CompiledGraph:
    bodies = {}
    for loop_id, body in shape.bodies.items():
        loop = shape.nodes[loop_id]
        assert isinstance(loop, LoopNode)
        bodies[loop_id] = _compiled(body, loop.body.plan.exports, parsed)
    if shape.stuck:  # the validator reports cycles
        raise BlockError(
            f"ノードの依存関係が循環しています: {', '.join(shape.stuck)}",
            code=ErrorCode.PLAN_INVALID,
            hint="`keiri-agent plan validate` で循環箇所を確認してください。",
            details={"nodes": list(shape.stuck)},
        )
    forms = {node_id: parsed[id(node)] for node_id, node in shape.nodes.items()}
    deps = {node_id: set(found) for node_id, found in shape.deps.items()}
    dependents: dict[str, set[str]] = {n: set() for n in shape.nodes}
    for node_id, found in deps.items():
        for d in found:
            dependents[d].add(node_id)
    return CompiledGraph(
        nodes=dict(shape.nodes),
        order=list(shape.order),
        deps=deps,
        dependents=dependents,
        bodies=bodies,
        conditions={n: f.when for n, f in forms.items() if f.when is not None},
        loop_conditions={n: f.loop_when for n, f in forms.items() if f.loop_when is not None},
        bindings={n: f.binding for n, f in forms.items()},
        exports=[(e.as_, _export_ref(e)) for e in exports],
        starts=tuple(n for n in shape.order if not deps[n]),
        position={n: i for i, n in enumerate(shape.order)},
    )


def _export_ref(export: Export) -> Reference:
    ref = bare_reference(export.from_)
    assert ref is not None, "validated plans export node.alias paths"
    return ref


def _bound_value(node: AnyNode) -> Any:
    if isinstance(node, BlockNode):
        return node.inputs
    if isinstance(node, SubflowNode):
        return node.call.inputs
    return node.foreach.input if node.foreach is not None else None
