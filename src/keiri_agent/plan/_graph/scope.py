"""Static scopes for the validator and dry-run: which names a ``${...}`` can reach from a node.

A scope is one graph (the plan's, a loop body's); it sees its own nodes, its loop variables and,
through its parent, the enclosing scopes. Nodes inside a loop body are not visible from outside:
their results leave the loop through ``exports`` and ``out.collect``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from keiri_agent.blocks.schema import json_types, resolve_port
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.plan._dsl.issues import Loc
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, SubflowNode

__all__ = ["UNRESOLVED", "NodeInfo", "Scope", "block_outputs", "types_label"]

UNRESOLVED: Any = object()  # the validator's answer for a reference that does not resolve


def types_label(schema: Mapping[str, Any] | None) -> str:
    """``integer/number`` for messages; ``任意`` when the schema does not say."""
    types = json_types(schema)
    return "/".join(sorted(types)) if types else "任意"


AnyNode = BlockNode | LoopNode | SubflowNode


@dataclass
class NodeInfo:
    node: AnyNode
    loc: Loc
    qual: str  # "loop/child" for nodes in loop bodies
    spec: BlockSpec | None = None
    # Referenceable names → JSON Schema (None: type unknown). ``open`` accepts any name
    # (the node's block is unknown; its error is reported once, not at every reference).
    outputs: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # alias declared in out → port
    open: bool = False
    body: Scope | None = None


@dataclass
class Scope:
    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    parent: Scope | None = None
    loop_vars: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    prefix: str = ""
    # ids of nodes nested in loop bodies of this scope → the loop's id (for a precise hint)
    hidden: dict[str, str] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)  # nodes whose own schema was invalid

    def chain(self) -> list[Scope]:
        out: list[Scope] = []
        current: Scope | None = self
        while current is not None:
            out.append(current)
            current = current.parent
        return out

    def lookup(self, root: str) -> tuple[Scope, NodeInfo | None] | None:
        """Where ``root`` is defined: (scope, node) for nodes, (scope, None) for loop vars."""
        for scope in self.chain():
            if root in scope.loop_vars:
                return scope, None
            if root in scope.nodes:
                return scope, scope.nodes[root]
        return None

    def is_dropped(self, root: str) -> bool:
        return any(root in s.dropped for s in self.chain())

    def hidden_in(self, root: str) -> str | None:
        for scope in self.chain():
            if root in scope.hidden:
                return scope.hidden[root]
        return None


def block_outputs(node: BlockNode, spec: BlockSpec) -> dict[str, dict[str, Any] | None]:
    """Names a block node exposes: each port under its ``out`` alias, unaliased ports as is."""
    names: dict[str, dict[str, Any] | None] = {}
    for port, schema in spec.outputs.items():
        try:
            resolved: dict[str, Any] | None = resolve_port(schema)
        except Exception:  # an unresolvable $ref is reported by the validator's type step
            resolved = None
        names[node.out.get(port, port)] = resolved
    return names
