"""Which of a plan's ``vars`` reach a block as a file path, known before the run.

A block spec marks the input ports that hold a path (``path: read`` / ``path: write``). Where
such a port is given exactly ``${vars.x}`` (or a list of such references), the value of ``x``
is a path the block will read or write: the API server checks it against the task's
``FileAccess`` before the task starts (an early 403 naming ``vars.x``). Loop bodies share the
plan's vars and are looked into; a subflow has vars of its own and is not (its blocks check
their paths themselves, as every block does). Each use carries the file types the port reads
(its ``accept``), for the app's upload field of that var.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, Plan
from keiri_agent.plan._dsl.refs import ReferenceSyntaxError, single_reference

__all__ = ["VarPath", "var_paths"]


@dataclass(frozen=True)
class VarPath:
    """A var given to a path port: the node, its port, whether the block reads or writes, the
    port's Japanese name and the file types it reads (its ``accept``: ".csv,.xlsx"; empty when
    the spec names none). The last two are for people, not part of what the use is."""

    node_id: str
    port: str
    mode: str  # "read" | "write"
    label: str = field(default="", compare=False)
    accept: str = field(default="", compare=False)


def _var_names(value: Any) -> Iterator[str]:
    """The var names ``value`` is exactly a reference to (itself, or each item of a list)."""
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, str):
            continue
        try:
            ref = single_reference(item)
        except ReferenceSyntaxError:  # the validator reports it; the run never starts
            continue
        if ref is not None and ref.root == "vars" and len(ref.path) == 1 and not ref.length:
            yield str(ref.path[0])


def _nodes(graph: Sequence[Any]) -> Iterator[BlockNode]:
    for node in graph:
        if isinstance(node, BlockNode):
            yield node
        elif isinstance(node, LoopNode):
            yield from _nodes(node.body.plan.graph)


def var_paths(plan: Plan, registry: BlockRegistry) -> dict[str, list[VarPath]]:
    """Var name → every path port of ``plan`` (loop bodies included) given exactly that var."""
    found: dict[str, list[VarPath]] = {}
    for node in _nodes(plan.graph):
        spec = registry.find(node.block)
        if spec is None:
            continue
        for port, mode in spec.path_inputs().items():
            for name in _var_names(node.inputs.get(port)):
                found.setdefault(name, []).append(
                    VarPath(
                        node.id,
                        port,
                        mode,
                        spec.port_label(port),
                        str(spec.inputs[port].get("accept") or ""),
                    )
                )
    return found
