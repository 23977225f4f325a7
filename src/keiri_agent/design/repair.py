"""Self-repair material (seed 004 §6): what goes back to the LLM when a plan does not validate.

A repair prompt carries a readable list of the errors, excerpts of the specs of the blocks the
errors touch (input/output keys, types, required, descriptions), the node-level diff of the last
attempt against the one before it, and the contract of any template whose nodes are involved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from keiri_agent.blocks.catalog import port_type
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import port_is_required
from keiri_agent.design.models import NodeChange
from keiri_agent.design.plan_nodes import iter_nodes
from keiri_agent.plan import PlanIssue

__all__ = [
    "MAX_ERRORS_IN_PROMPT",
    "dump_plan",
    "node_diff",
    "offending_blocks",
    "spec_excerpts",
    "summarize_errors",
]

MAX_ERRORS_IN_PROMPT = 20
MAX_DESCRIPTION_CHARS = 120


def dump_plan(plan: Mapping[str, Any]) -> str:
    """Plan YAML as people write it: keys in order, Japanese kept readable."""
    return yaml.safe_dump(dict(plan), allow_unicode=True, sort_keys=False, width=100)


def summarize_errors(errors: Sequence[PlanIssue], output_error: str | None = None) -> str:
    """One line per error: where, code, message, and the validator's hint."""
    lines: list[str] = []
    if output_error:
        lines.append(f"- 出力形式エラー: {output_error}")
    for issue in errors[:MAX_ERRORS_IN_PROMPT]:
        where = f"ノード {issue.node_id}" if issue.node_id else (issue.path or "Plan 全体")
        line = f"- [{issue.code}] {where}（{issue.path}）: {issue.message}"
        if issue.hint:
            line += f" → {issue.hint}"
        lines.append(line)
    if len(errors) > MAX_ERRORS_IN_PROMPT:
        lines.append(f"- ほか {len(errors) - MAX_ERRORS_IN_PROMPT} 件")
    return "\n".join(lines) if lines else "- （エラーなし）"


def offending_blocks(plan: Mapping[str, Any] | None, errors: Sequence[PlanIssue]) -> list[str]:
    """Block ids of the nodes named in ``errors``, in the plan's order."""
    if not plan:
        return []
    named = {issue.node_id for issue in errors if issue.node_id}
    blocks: list[str] = []
    for node in iter_nodes(plan.get("graph")):
        block = node.get("block")
        if node.get("id") in named and isinstance(block, str) and block not in blocks:
            blocks.append(block)
    return blocks


def _short(text: Any) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= MAX_DESCRIPTION_CHARS else flat[: MAX_DESCRIPTION_CHARS - 1] + "…"


def spec_excerpts(registry: BlockRegistry, block_ids: Sequence[str]) -> str:
    """The contract of each block: inputs (type, required, default, description) and outputs."""
    parts: list[str] = []
    for block_id in block_ids:
        spec = registry.find(block_id)
        if spec is None:
            parts.append(
                f"### {block_id}\n（登録されていないブロックです。候補から選び直してください）"
            )
            continue
        lines = [f"### {spec.id}: {_short(spec.description)}", "入力:"]
        for name, port in spec.inputs.items():
            flags = "必須" if port_is_required(port) else "任意"
            default = f", 既定値 {port['default']!r}" if "default" in port else ""
            lines.append(
                f"  - {name} ({port_type(port)}, {flags}{default}): {_short(port.get('description'))}"
            )
        lines.append("出力:")
        for name, port in spec.outputs.items():
            lines.append(f"  - {name} ({port_type(port)}): {_short(port.get('description'))}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _index(plan: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    return {str(n.get("id")): n for n in iter_nodes((plan or {}).get("graph"))}


def node_diff(
    previous: Mapping[str, Any] | None, current: Mapping[str, Any] | None
) -> list[NodeChange]:
    """Node-level changes from ``previous`` to ``current`` (added, removed, changed keys)."""
    before, after = _index(previous), _index(current)
    changes: list[NodeChange] = []
    for node_id, node in after.items():
        old = before.get(node_id)
        if old is None:
            changes.append(NodeChange(node_id=node_id, change="added"))
            continue
        keys = sorted(k for k in set(old) | set(node) if k != "body" and old.get(k) != node.get(k))
        if keys:
            changes.append(NodeChange(node_id=node_id, change="changed", keys=keys))
    changes += [NodeChange(node_id=n, change="removed") for n in before if n not in after]
    return changes
