"""The one scope of every phase (validate, dry run, run): which names a ``${...}`` reaches.

A scope is one graph (the plan's, a loop body's, a subflow's); it sees its own nodes, its loop
variables and, through its parent, the enclosing scopes. Nodes inside a loop body are not visible
from outside: their results leave the loop through ``exports`` and ``out.collect``. The phases
share the lookup (:meth:`Scope.read`, one :class:`Lookup` answer) and the null rule
(:func:`reads_as_null`); each supplies only what a node or a loop variable is to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from keiri_agent.blocks.schema import json_types, resolve_port
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.plan._dsl.issues import Loc
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, SubflowNode
from keiri_agent.plan._dsl.refs import Reference

__all__ = [
    "UNRESOLVED",
    "Lookup",
    "NodeInfo",
    "Scope",
    "StaticScope",
    "block_outputs",
    "reads_as_null",
    "types_label",
]

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
    body: StaticScope | None = None


N = TypeVar("N")  # what a node is to the phase: NodeInfo, dry-run outputs, run outputs
V = TypeVar("V")  # what the plan's vars are to the phase
Answer = Literal["found", "null", "skipped", "missing"]


@dataclass(frozen=True)
class Lookup(Generic[N, V]):
    """What a reference's root reached, for every phase alike.

    ``found``: a node (``value`` is the phase's entry for it) or a loop variable (``loop``);
    ``null``: a node without outputs (skipped, failed and continued past, a ``while`` body before
    its first pass) read no further than its output name, which reads as null; ``skipped``: such
    a node read past its output name; ``missing``: nothing of that name is visible.
    """

    answer: Answer
    value: Any = None
    scope: Scope[N, V] | None = None
    loop: bool = False


def reads_as_null(ref: Reference) -> bool:
    """The null rule: a node without outputs reads as null up to its output name."""
    return len(ref.path) <= 1 and not ref.length


@dataclass(eq=False)
class Scope(Generic[N, V]):
    """What references see from one graph (the plan's, a loop body's, a subflow's).

    Each phase supplies only what a value is: the validator a :class:`NodeInfo` per node and
    schemas for loop variables, the dry run samples (or unknown), the runner runtime values. A
    node entry of None means the node has no outputs (see :func:`reads_as_null`).
    """

    vars: V
    parent: Scope[N, V] | None = None
    nodes: dict[str, N] = field(default_factory=dict)
    loop_vars: dict[str, Any] = field(default_factory=dict)
    prefix: str = ""
    # ids of nodes nested in loop bodies of this scope → the loop's id (for a precise hint)
    hidden: dict[str, str] = field(default_factory=dict)

    def chain(self) -> list[Scope[N, V]]:
        out: list[Scope[N, V]] = []
        current: Scope[N, V] | None = self
        while current is not None:
            out.append(current)
            current = current.parent
        return out

    def lookup(self, root: str) -> Lookup[N, V]:
        """Where ``root`` is defined, searching outwards (a loop variable before a node)."""
        for scope in self.chain():
            if root in scope.loop_vars:
                return Lookup("found", scope.loop_vars[root], scope, loop=True)
            if root in scope.nodes:
                return Lookup("found", scope.nodes[root], scope)
        return Lookup("missing")

    def read(self, ref: Reference) -> Lookup[N, V]:
        """:meth:`lookup` of ``ref``'s root with the null rule applied to nodes without outputs."""
        found = self.lookup(ref.root)
        if found.answer == "found" and not found.loop and found.value is None:
            answer: Answer = "null" if reads_as_null(ref) else "skipped"
            return Lookup(answer, None, found.scope)
        return found

    def hidden_in(self, root: str) -> str | None:
        for scope in self.chain():
            if root in scope.hidden:
                return scope.hidden[root]
        return None


StaticScope = Scope[NodeInfo, None]  # the validator's: schemas, not values


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
