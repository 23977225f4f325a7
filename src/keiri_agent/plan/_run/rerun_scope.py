"""What a rerun from one node runs again: that node, everything downstream of it, and, for a
node inside loops or subflows, the enclosing nodes that re-collect their results. A node the
plan rerun does not have (a fixed plan given with ``--plan`` that renamed or removed it) is a
refusal, never a rerun that starts nowhere and reuses what the names happen to match."""

from __future__ import annotations

from collections.abc import Callable

from keiri_agent.errors import input_error
from keiri_agent.plan._dsl.models import LoopNode, Plan, SubflowNode
from keiri_agent.plan._graph.compiled import CompiledGraph
from keiri_agent.plan._graph.subflows import SubflowLoader

__all__ = ["invalidated"]


def invalidated(
    plan: Plan, graph: CompiledGraph, path: str, subflows: SubflowLoader
) -> Callable[[str], bool]:
    """A predicate: does the node at a path have to run again when rerunning from ``path``?"""
    exact: set[str] = set()
    subtree: set[str] = set()  # these paths and everything nested under them
    prefix = ""
    parts = path.split("/")
    current: CompiledGraph | None = graph
    for depth, part in enumerate(parts):
        if current is None:
            break
        node_id, _, index = part.partition("[")
        if node_id not in current.nodes:
            raise input_error(
                f"再実行する Plan にノード {'/'.join(parts[: depth + 1])} がありません。",
                "この Plan のノード: "
                + ", ".join(sorted(current.nodes)[:30])
                + "。--plan で渡した Plan が元の実行と同じノード ID を使っているか確かめてください。",
                node=path,
            )
        last = depth == len(parts) - 1
        for affected in current.downstream(node_id):
            if affected == node_id and not last:
                exact.add(prefix + affected)  # the enclosing loop/subflow re-collects
            else:
                subtree.add(prefix + affected)
        node = current.nodes.get(node_id)
        if isinstance(node, LoopNode):
            current = current.bodies.get(node_id)
            prefix += f"{node_id}[{index}/" if index else f"{node_id}/"
        elif isinstance(node, SubflowNode):
            current = subflows.plan(node.call.plan_id)[1]
            prefix += f"{node_id}/"
        else:
            current = None

    def dropped(candidate: str) -> bool:
        if candidate in exact or candidate in subtree:
            return True
        return any(candidate.startswith((s + "/", s + "[")) for s in subtree)

    return dropped
