"""The 実行 page's input nodes: the ``ui.interactive_input`` nodes a person answers, and the
answers handed to the runner.

Answers follow the Session State contract (seed 002 §8.2): each node's fields are drawn by
:func:`keiri_agent.ui.fields.render_fields` under ``plan:{plan_id}::node:{node_id}::v{version}``,
and the answers handed to the runner are built from those values when a run starts (the run
itself, in a worker thread, never touches Session State). Approval and free-text replies of
confirm/inquire/mixed nodes sit beside them under ``reply:{key}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import streamlit as st

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.ui.answer_state import SessionStateStore, session_key
from keiri_agent.blocks.ui.field_types import normalize_requirements
from keiri_agent.plan import (
    BlockNode,
    Plan,
)
from keiri_agent.ui.fields import WIDGET_PREFIX, render_fields, session_mapping

__all__ = [
    "INPUT_BLOCK",
    "UINode",
    "collect_answers",
    "render_ui_node",
    "reset_inputs",
    "ui_nodes",
    "use_answers",
    "waiting_nodes",
]

INPUT_BLOCK: Final = "ui.interactive_input"
REPLY_PREFIX: Final = "reply:"
APPROVAL_OPTIONS: Final = [
    {"value": True, "label": "承認する"},
    {"value": False, "label": "却下する"},
]


@dataclass(frozen=True)
class UINode:
    """One ``ui.interactive_input`` node a person answers on the page."""

    plan_id: str
    node_id: str  # the node path (``loop[2]/approve`` inside loops)
    version: str
    mode: str
    message: str
    requirements: list[dict[str, Any]]

    @property
    def store_key(self) -> str:
        return session_key(self.plan_id, self.node_id, self.version)


def ui_nodes(plan: Plan, registry: BlockRegistry) -> list[UINode]:
    """The plan's top-level input nodes whose inputs are literal, so they can be shown before
    the run; the others (inputs built from ``${...}``) are asked for when the run reaches them."""
    found = []
    for node in plan.graph:
        if not isinstance(node, BlockNode) or registry.get(node.block).id != INPUT_BLOCK:
            continue
        if "${" in json.dumps(node.inputs, ensure_ascii=False, default=str):
            continue
        found.append(
            UINode(
                plan.id,
                node.id,
                registry.get(node.block).version,
                str(node.inputs.get("mode") or "collect"),
                str(node.inputs.get("message") or ""),
                normalize_requirements(node.inputs.get("requirements")),
            )
        )
    return found


def waiting_nodes(
    plan_id: str,
    waiting: Sequence[Mapping[str, Any]],
    blocks: Mapping[str, str],
    registry: BlockRegistry,
) -> list[UINode]:
    """The nodes a paused run waits for, with the requirements the run rendered (``blocks``:
    the block of each waiting node, from its node_start)."""
    nodes = []
    for item in waiting:
        node_id = str(item["node_id"])
        request = item.get("request") or {}
        ref = blocks.get(node_id) or INPUT_BLOCK
        version = ref.partition("@")[2] or registry.get(ref).version
        nodes.append(
            UINode(
                plan_id,
                node_id,
                version,
                str(request.get("mode") or "collect"),
                str(request.get("message") or ""),
                normalize_requirements(request.get("requirements")),
            )
        )
    return nodes


def _reply_requirements(mode: str) -> list[dict[str, Any]]:
    """The approval and free-text reply a mode asks for besides the fields."""
    reqs: list[dict[str, Any]] = []
    if mode in ("confirm", "mixed"):
        reqs.append(
            {"id": "approval", "type": "select", "label": "承認", "options": APPROVAL_OPTIONS}
        )
    if mode == "inquire":
        reqs.append({"id": "reply", "type": "chat", "label": "回答"})
    elif mode in ("confirm", "mixed"):
        reqs.append({"id": "reply", "type": "chat", "label": "コメント", "required": False})
    return reqs


def render_ui_node(
    node: UINode,
    *,
    upload_dir: Path | None = None,
    disabled: bool = False,
    name: str | None = None,
) -> None:
    """One node's message (its ``name`` when it has none), fields and (by mode) approval or
    reply. The node's id is not shown: the page lists ids in its details."""
    st.markdown(f"**{node.message or name or node.node_id}**")
    if node.requirements:
        render_fields(
            node.requirements, store_key=node.store_key, upload_dir=upload_dir, disabled=disabled
        )
    reply = _reply_requirements(node.mode)
    if reply:
        render_fields(reply, store_key=REPLY_PREFIX + node.store_key, disabled=disabled)


def collect_answers(plan_id: str) -> dict[str, dict[str, Any]]:
    """Answers for every input node of ``plan_id`` shown on the page (node path → values)."""
    store = SessionStateStore(session_mapping())
    answers: dict[str, dict[str, Any]] = {}
    for key in store.keys_for_plan(plan_id):
        node_path = key.removeprefix(f"plan:{plan_id}::node:").rpartition("::v")[0]
        values = store.collected_at(key)
        if REPLY_PREFIX + key in st.session_state:
            reply = store.collected_at(REPLY_PREFIX + key)
            if reply.get("approval") is not None:
                values["approved"] = reply["approval"]
            if reply.get("reply") is not None:
                values["response"] = reply["reply"]
        answers[node_path] = values
    return answers


def use_answers(nodes: Sequence[UINode], answers: Mapping[str, Mapping[str, Any]]) -> None:
    """Fill the nodes' fields with ``answers`` (node id → field id → value: a bundled example's
    sample data), as if typed; fields ``answers`` does not name keep their values."""
    store = SessionStateStore(session_mapping())
    for node in nodes:
        given = answers.get(node.node_id) or {}
        if not given:
            continue
        store.get_at(node.store_key, node.requirements)
        known = {str(r["id"]) for r in node.requirements}
        for field_id, value in given.items():
            if field_id in known:
                store.update_at(node.store_key, field_id, value)
        prefix = f"{WIDGET_PREFIX}{node.store_key}::"  # widgets reseed from the new values
        for key in [k for k in map(str, st.session_state.keys()) if k.startswith(prefix)]:
            del st.session_state[key]


def reset_inputs(plan_id: str) -> list[str]:
    """Clear every answer of ``plan_id`` and its widgets (the page's explicit リセット)."""
    prefixes = tuple(
        f"{head}plan:{plan_id}::node:"
        for head in ("", REPLY_PREFIX, WIDGET_PREFIX, WIDGET_PREFIX + REPLY_PREFIX)
    )
    doomed = [k for k in map(str, st.session_state.keys()) if k.startswith(prefixes)]
    for key in doomed:
        del st.session_state[key]
    return doomed
