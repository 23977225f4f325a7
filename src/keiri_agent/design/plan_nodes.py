"""Walking the nodes of a plan that is still YAML data (mappings), loop bodies included.

Design works on plans before they are valid: generated, repaired, given answers, counted for
the retrieval prior. This is its one walk over such a plan's ``graph``; anything that is not a
node mapping is passed over, never an error. (A parsed ``Plan`` is walked by the plan engine.)
It imports nothing from design/, so every design module can use it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["iter_nodes", "node_blocks"]


def iter_nodes(graph: Any) -> Iterator[dict[str, Any]]:
    """Every node mapping of a graph, loop bodies included, in document order."""
    if not isinstance(graph, list):
        return
    for node in graph:
        if not isinstance(node, dict):
            continue
        yield node
        body = node.get("body")
        if isinstance(body, dict) and isinstance(body.get("plan"), dict):
            yield from iter_nodes(body["plan"].get("graph"))


def node_blocks(graph: Any) -> Iterator[str]:
    """The ``block`` of every node of a graph that names one, loop bodies included, in
    document order (a block used twice is given twice)."""
    for node in iter_nodes(graph):
        if isinstance(node.get("block"), str):
            yield node["block"]
