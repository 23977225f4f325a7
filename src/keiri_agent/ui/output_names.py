"""Japanese names for a run's result tables, taken from the plan and the block specs.

A table is named where the plan writes it out: a mapping of a node's inputs that holds exactly
the reference to the table and a literal ``name`` or ``sheet`` (its own, or that of a mapping it
holds) is the table's sheet in a workbook, so ``{name: 照合結果, rows: ${reconcile.matched}}``
(excel.write_report) names ``reconcile.matched`` 照合結果, and ``{data: ${reconcile.differences},
output_config: {sheet: 差異一覧}}`` (excel.write) names it 差異一覧. The result tabs then carry
the names of the workbook's sheets. A table the plan does not write out is named by the first
phrase of its block spec's description of that output and the node id, which tells two nodes of
the same block apart (``許容範囲内で一致した組 — reconcile``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.plan import BlockNode, LoopNode, Node, Plan, SubflowNode, single_reference

__all__ = ["NAME_KEYS", "OutputNames", "output_names"]

NAME_KEYS: Final = ("name", "sheet")
_PHRASE_END: Final = re.compile(r"[。（(]")

# (node id, output name) → the table's name in the plan, or its spec's description phrase
OutputNames = Mapping[tuple[str, str], str]


def _literal(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and "${" not in value:
        return value.strip()
    return None


def _name_of(mapping: Mapping[str, Any]) -> str | None:
    """The literal ``name``/``sheet`` of a mapping, or of a mapping directly inside it."""
    for candidate in (mapping, *(v for v in mapping.values() if isinstance(v, Mapping))):
        for key in NAME_KEYS:
            name = _literal(candidate.get(key))
            if name is not None:
                return name
    return None


def _written_names(value: Any, found: dict[tuple[str, str], str]) -> None:
    if isinstance(value, Mapping):
        name = _name_of(value)
        for item in value.values():
            ref = single_reference(item) if name is not None and isinstance(item, str) else None
            if name is not None and ref is not None and len(ref.path) == 1 and not ref.length:
                found.setdefault((ref.root, str(ref.path[0])), name)
            _written_names(item, found)
    elif isinstance(value, list):
        for item in value:
            _written_names(item, found)


def _walk(nodes: Iterable[Node]) -> Iterable[Node]:
    for node in nodes:
        yield node
        if isinstance(node, LoopNode):
            yield from _walk(node.body.plan.graph)


def _described(node: BlockNode, registry: BlockRegistry) -> dict[tuple[str, str], str]:
    try:
        spec = registry.get(node.block)
    except BlockError:  # a plan that no longer validates still shows its tables
        return {}
    names = {}
    for port, schema in spec.outputs.items():
        text = str(schema.get("description") or "") if isinstance(schema, Mapping) else ""
        phrase = _PHRASE_END.split(text, maxsplit=1)[0].strip()
        if phrase:
            names[(node.id, node.out.get(port, port))] = f"{phrase} — {node.id}"
    return names


def output_names(plan: Plan, registry: BlockRegistry) -> dict[tuple[str, str], str]:
    """(node id, output name) → the Japanese name of that output (see the module docstring)."""
    written: dict[tuple[str, str], str] = {}
    described: dict[tuple[str, str], str] = {}
    for node in _walk(plan.graph):
        if isinstance(node, BlockNode):
            _written_names(node.inputs, written)
            described.update(_described(node, registry))
        elif isinstance(node, SubflowNode):
            _written_names(node.call.inputs, written)
    return {**described, **written}
