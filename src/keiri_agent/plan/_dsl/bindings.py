"""Bindings: a node's ``in`` (or ``call.inputs``, ``foreach.input``) with its ``${...}`` parsed once.

:func:`compile_binding` turns a raw value into a tree whose strings are already split into text
and references; :meth:`Binding.render` only resolves and joins. The compiled graph holds one per
node, so a loop of a thousand iterations parses nothing (``refs.render`` parses on every call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from keiri_agent.plan._dsl.refs import (
    Reference,
    format_interpolated,
    single_reference,
    split_template,
)

__all__ = ["Binding", "compile_binding"]

Resolver = Callable[[Reference], Any]


@dataclass(frozen=True)
class Binding:
    """One value of a plan with its references parsed: render it against a resolver."""

    kind: str  # "literal", "ref", "text", "dict", "list"
    value: Any = None  # literal value / Reference / text parts / {key: Binding} / [Binding]

    def render(self, resolve: Resolver) -> Any:
        """The same result as ``refs.render`` on the raw value, without parsing it again."""
        if self.kind == "literal":
            return self.value
        if self.kind == "ref":
            return resolve(self.value)
        if self.kind == "text":
            return "".join(
                p if isinstance(p, str) else format_interpolated(resolve(p), p) for p in self.value
            )
        if self.kind == "dict":
            return {key: item.render(resolve) for key, item in self.value.items()}
        return [item.render(resolve) for item in self.value]

    def roots(self) -> set[str]:
        """The root of every reference in the value (``n1`` of ``${n1.value}``, ``vars``...)."""
        if self.kind == "ref":
            return {self.value.root}
        if self.kind == "text":
            return {p.root for p in self.value if isinstance(p, Reference)}
        if self.kind == "dict":
            return set().union(*(item.roots() for item in self.value.values()))
        if self.kind == "list":
            return set().union(*(item.roots() for item in self.value))
        return set()


def compile_binding(value: Any) -> Binding:
    """Parse every ``${...}`` in ``value`` (raises the reference's BlockError when malformed)."""
    if isinstance(value, str):
        if "$" not in value:
            return Binding("literal", value)
        single = single_reference(value)
        if single is not None:
            return Binding("ref", single)
        return Binding("text", tuple(split_template(value)))
    if isinstance(value, dict):
        return Binding("dict", {key: compile_binding(item) for key, item in value.items()})
    if isinstance(value, list):
        return Binding("list", [compile_binding(item) for item in value])
    return Binding("literal", value)
