"""Answers checked against the plan before a run starts: a typo is an error, never ignored.

Answers (an ``--answers`` file, the server's answers, a resume's answers) are a mapping
``node → {field: value}``. A node key is the id of a UI node anywhere in the plan (loop bodies
and subflows included), or its qualified path (``loop[2]/approve``, ``sub/approve``); a field
key is one of the node's literal ``requirements`` ids or a reserved key (``approved``,
``response``). Anything else would be silently unused, so the run waits or a default is taken
where the user thinks they answered: :func:`check_answers` names every unknown key and the
closest known one. :func:`answer_paths` says which answers are paths (``file``, ``files``,
``folder`` fields), wherever their node is: the API server confines them before a run starts.
Both read the plan's blocks and subflows through the command's
:class:`~keiri_agent.plan._graph.env.PlanEnv` (its registry, its subflow loader): the subflow
texts checked are the ones the run reads.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.ui.field_types import PATH_FIELD_TYPES, RESERVED_IDS
from keiri_agent.errors import input_error
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, Plan, SubflowNode
from keiri_agent.plan._graph.env import PlanEnv

__all__ = ["answer_paths", "check_answers"]


@dataclass(frozen=True)
class _UINode:
    node_id: str
    path: re.Pattern[str]  # the qualified paths of its runs
    shown: str  # the path as a person writes it: loop[0]/approve
    fields: frozenset[str] | None  # None: requirements computed at run time
    paths: frozenset[str] | None  # the ids of its path fields (None: computed at run time)


def _fields(node: BlockNode) -> frozenset[str] | None:
    requirements = node.inputs.get("requirements")
    if requirements is None:
        return frozenset(RESERVED_IDS)
    if not isinstance(requirements, list):
        return None
    ids = [r.get("id") if isinstance(r, Mapping) else None for r in requirements]
    if not all(isinstance(i, str) and "${" not in i for i in ids):
        return None
    return frozenset(RESERVED_IDS | {str(i) for i in ids})


def _paths(node: BlockNode, fields: frozenset[str] | None) -> frozenset[str] | None:
    if fields is None:
        return None
    requirements = node.inputs.get("requirements") or []
    return frozenset(
        str(r["id"])
        for r in requirements
        if isinstance(r, Mapping) and str(r.get("type", "text")) in PATH_FIELD_TYPES
    )


def _ui_nodes(
    graph: Sequence[Any],
    registry: BlockRegistry,
    load: Any,
    prefix: str = "",
    shown: str = "",
    depth: int = 0,
) -> Iterator[_UINode]:
    for node in graph:
        if isinstance(node, BlockNode):
            spec = registry.find(node.block)
            if spec is not None and spec.is_ui:
                fields = _fields(node)
                yield _UINode(
                    node.id,
                    re.compile(prefix + re.escape(node.id)),
                    shown + node.id,
                    fields,
                    _paths(node, fields),
                )
        elif isinstance(node, LoopNode):
            yield from _ui_nodes(
                node.body.plan.graph,
                registry,
                load,
                f"{prefix}{re.escape(node.id)}\\[\\d+\\]/",
                f"{shown}{node.id}[0]/",
                depth,
            )
        elif isinstance(node, SubflowNode) and depth < 32:
            sub = load(node.call.plan_id)
            yield from _ui_nodes(
                sub.graph,
                registry,
                load,
                f"{prefix}{re.escape(node.id)}/",
                f"{shown}{node.id}/",
                depth + 1,
            )


def _closest(word: str, choices: Sequence[str]) -> str:
    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"（もしかして '{found[0]}'）" if found else ""


def _nodes(plan: Plan, env: PlanEnv) -> list[_UINode]:
    """The UI nodes of ``plan`` at any depth (loop bodies, subflows)."""
    return list(_ui_nodes(plan.graph, env.registry, lambda plan_id: env.subflows.plan(plan_id)[0]))


def _matching(key: str, nodes: list[_UINode]) -> list[_UINode]:
    """The nodes an answer key means: a node id, or a node's qualified path."""
    return [n for n in nodes if n.node_id == key] or [n for n in nodes if n.path.fullmatch(key)]


def answer_paths(
    answers: Mapping[str, Any], plan: Plan, env: PlanEnv
) -> dict[str, frozenset[str] | None]:
    """For each answered node of ``plan`` (at any depth): the ids of its path fields; None
    when its requirements are computed at run time (their types are unknown before the run).
    Keys that name no input node are left out (``check_answers`` refuses them)."""
    nodes = _nodes(plan, env)
    found: dict[str, frozenset[str] | None] = {}
    for key in answers:
        matches = _matching(key, nodes)
        if matches:
            known = [m.paths for m in matches if m.paths is not None]
            found[key] = frozenset().union(*known) if len(known) == len(matches) else None
    return found


def check_answers(answers: Mapping[str, Any], plan: Plan, env: PlanEnv) -> None:
    """Raise one BlockError naming every unknown node or field key of ``answers``."""
    nodes = _nodes(plan, env)
    by_id: dict[str, list[_UINode]] = {}
    for node in nodes:
        by_id.setdefault(node.node_id, []).append(node)
    known = sorted({*by_id, *(n.shown for n in nodes)})
    problems: list[str] = []
    for key, given in answers.items():
        matches = _matching(key, nodes)
        if not matches:
            problems.append(f"ノード '{key}' は入力ノードではありません{_closest(key, known)}")
            continue
        fields = [m.fields for m in matches]
        if any(f is None for f in fields) or not isinstance(given, Mapping):
            continue
        allowed = sorted(set().union(*fields))  # type: ignore[arg-type]
        for name in given:
            if str(name) not in allowed:
                problems.append(
                    f"'{key}' に入力項目 '{name}' はありません{_closest(str(name), allowed)}"
                )
    if problems:
        raise input_error(
            "回答に Plan と合わないキーがあります: " + "; ".join(problems),
            "回答はノードID → {入力ID: 値} の形です。入力ノード: "
            + (", ".join(known) or "なし")
            + "。綴りを確認してください。",
            problems=problems,
            input_nodes=known,
        )
