"""A validated plan's graphs: dependency edges, a topological order, and the parsed forms.

Compiling happens once per run (and per subflow plan). It parses every ``when`` and ``while``
condition and every binding (a node's ``in``, ``call.inputs``, ``foreach.input``) once, so
executing a node, however often a loop runs it, parses nothing. The runner, rerun invalidation
and the dry run all read the same edges: a node depends on the nodes of its graph that it references
in ``in``, ``when``, a loop's ``foreach.input``/``while.condition``, anywhere in a loop's body,
or in a subflow's ``call.inputs``.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from keiri_agent.plan._dsl.bindings import Binding, compile_binding
from keiri_agent.plan._dsl.expr import Expression, compile_when
from keiri_agent.plan._dsl.models import (
    BlockNode,
    Export,
    LoopNode,
    SubflowNode,
    WhenCompare,
    WhenExpr,
    when_raw,
)
from keiri_agent.plan._dsl.refs import Reference, bare_reference, iter_references

__all__ = ["CompiledGraph", "compile_graph", "references_in", "topological_order"]

AnyNode = BlockNode | LoopNode | SubflowNode


def _when_roots(when: str | WhenExpr | WhenCompare | None) -> set[str]:
    if when is None:
        return set()
    return {r.root for r in compile_when(when_raw(when)).references}


def _value_roots(value: Any) -> set[str]:
    return {ref.root for _, ref in iter_references(value)}


def references_in(node: AnyNode) -> set[str]:
    """Every reference root used by ``node`` (including inside loop bodies)."""
    roots = _when_roots(node.when)
    if isinstance(node, BlockNode):
        roots |= _value_roots(node.inputs)
    elif isinstance(node, SubflowNode):
        roots |= _value_roots(node.call.inputs)
    else:
        if node.foreach is not None:
            roots |= _value_roots(node.foreach.input)
        if node.while_ is not None:
            roots |= _when_roots(node.while_.condition)
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
    roots: set[str] = field(default_factory=set)  # every reference root its nodes use
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


def compile_graph(graph: list[AnyNode], exports: Sequence[Export] = ()) -> CompiledGraph:
    nodes = {n.id: n for n in graph}
    bodies = {
        n.id: compile_graph(list(n.body.plan.graph), n.body.plan.exports)
        for n in graph
        if isinstance(n, LoopNode)
    }
    conditions = {n.id: compile_when(when_raw(n.when)) for n in graph if n.when is not None}
    loop_conditions = {
        n.id: compile_when(when_raw(n.while_.condition))
        for n in graph
        if isinstance(n, LoopNode) and n.while_ is not None
    }
    bindings = {n.id: compile_binding(_bound_value(n)) for n in graph}
    roots: dict[str, set[str]] = {}  # node id → every root it references (its body's included)
    for n in graph:
        found = bindings[n.id].roots()
        for parsed in (conditions.get(n.id), loop_conditions.get(n.id)):
            found |= {r.root for r in parsed.references} if parsed is not None else set()
        roots[n.id] = found | (bodies[n.id].roots if n.id in bodies else set())
    deps = {n.id: (roots[n.id] & nodes.keys()) - {n.id} for n in graph}
    dependents: dict[str, set[str]] = {n: set() for n in nodes}
    for node_id, ds in deps.items():
        for d in ds:
            dependents[d].add(node_id)
    order, stuck = topological_order(list(nodes), deps)
    if stuck:  # the validator reports cycles; never run half a graph
        from keiri_agent.errors import BlockError, ErrorCode

        raise BlockError(
            f"ノードの依存関係が循環しています: {', '.join(stuck)}",
            code=ErrorCode.PLAN_INVALID,
            hint="`keiri-agent plan validate` で循環箇所を確認してください。",
            details={"nodes": stuck},
        )
    return CompiledGraph(
        nodes=nodes,
        order=order,
        deps=deps,
        dependents=dependents,
        bodies=bodies,
        conditions=conditions,
        loop_conditions=loop_conditions,
        bindings=bindings,
        exports=[(e.as_, _export_ref(e)) for e in exports],
        roots=set().union(*roots.values()),
        starts=tuple(n for n in order if not deps[n]),
        position={n: i for i, n in enumerate(order)},
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
