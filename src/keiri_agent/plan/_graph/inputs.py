"""What a plan asks a person before it runs: the requests of its input nodes, known statically.

A top-level ``ui.*`` node whose inputs are all literal (no ``${...}``) asks the same thing in
every run; its request (mode, message, requirements: what ``UIBlock.describe_request`` makes)
can be shown before the run starts, so a page collects the answers up front (the app's 実行
page, the progress page). A node whose inputs are computed asks when the run reaches it.
"""

from __future__ import annotations

import json
from typing import Any

from keiri_agent.blocks.base import UIBlock
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan._dsl.models import BlockNode, Plan

__all__ = ["input_requests"]


def input_requests(plan: Plan, registry: BlockRegistry) -> list[dict[str, Any]]:
    """``[{"node_id", "request"}]`` for each top-level input node with literal inputs, in
    plan order."""
    found = []
    for node in plan.graph:
        if not isinstance(node, BlockNode):
            continue
        spec = registry.get(node.block)
        if not spec.is_ui or "${" in json.dumps(node.inputs, ensure_ascii=False, default=str):
            continue
        block = registry.load(node.block)
        if isinstance(block, UIBlock):
            found.append({"node_id": node.id, "request": block.describe_request(dict(node.inputs))})
    return found
