"""The validator's walk over a plan: scopes built, each node checked, cycles, policy, unused outputs.

Reference checks live in ``references``, block-specific rules and UI checks in ``rules``, loop
and subflow rules in ``control_rules``; all are functions over one ``state.CheckState``. The
graph's edges and cycles are not computed here: they are the plan's
``_graph.compiled.GraphShape``, the one the compiled graph runs in order and the app draws.
The entry point is ``validator.validate_source``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from keiri_agent.blocks.schema import descend
from keiri_agent.errors import BlockError
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.issues import Loc, format_path
from keiri_agent.plan._dsl.models import BlockNode, Export, LoopNode
from keiri_agent.plan._dsl.refs import bare_reference
from keiri_agent.plan._graph.compiled import GraphShape
from keiri_agent.plan._graph.scope import AnyNode, NodeInfo, Scope, StaticScope, block_outputs
from keiri_agent.plan._validate import control_rules, rules
from keiri_agent.plan._validate.references import check_vars, check_when
from keiri_agent.plan._validate.state import CheckState
from keiri_agent.plan._validate.state import close_matches as _close

__all__ = ["check_plan"]


def check_plan(state: CheckState) -> None:
    """Every check of the walk, in the order the report lists them."""
    locs = [("graph", i) for i in state.index_map]
    state.top = _build_scope(state, state.plan.graph, locs, None, "")
    check_vars(state)
    check_scope(state, state.top, state.shape)
    for export in state.plan.exports:
        control_rules.check_export(
            state, export, state.top, ("exports",), IssueCode.PLAN_UNKNOWN_EXPORT
        )
    _check_policy(state)
    _warn_unused(state, state.top)


# --- building scopes -------------------------------------------------------------------------


def _build_scope(
    state: CheckState,
    nodes: Iterable[AnyNode],
    locs: Iterable[Loc],
    parent: StaticScope | None,
    prefix: str,
) -> StaticScope:
    scope: StaticScope = Scope(vars=None, parent=parent, prefix=prefix)
    for node, loc in zip(nodes, locs, strict=True):
        if node.id in state.seen_ids:
            first = state.seen_ids[node.id]
            state.issue(
                IssueCode.DUPLICATE_NODE_ID,
                f"ノード ID '{node.id}' が重複しています（最初の定義: {format_path(first)}）。",
                (*loc, "id"),
                node=prefix + node.id,
                hint="ノード ID は Plan 全体（ループ本体を含む）で一意にしてください。",
            )
            continue
        state.seen_ids[node.id] = loc
        info = NodeInfo(node=node, loc=loc, qual=prefix + node.id)
        scope.nodes[node.id] = info
        if isinstance(node, BlockNode):
            info.spec = state.env.registry.find(node.block)
            if info.spec is None:
                info.open = True
            else:
                info.outputs = block_outputs(node, info.spec)
                info.aliases = {alias: port for port, alias in node.out.items()}
        elif isinstance(node, LoopNode):
            body_locs = [
                (*loc, "body", "plan", "graph", j) for j in range(len(node.body.plan.graph))
            ]
            info.body = _build_scope(state, node.body.plan.graph, body_locs, scope, f"{info.qual}/")
            for inner in _all_ids(info.body):
                scope.hidden[inner] = node.id
            exports = {e.as_: _export_schema(e, info.body) for e in node.body.plan.exports}
            for name in node.out.names(node.body.plan.exports):
                item = exports.get(name)
                info.outputs[name] = {"type": "array", "items": item} if item else {"type": "array"}
        else:
            sub = state.env.subflows.load(node.call.plan_id).plan
            for export in node.out.exports:
                info.outputs[export.as_] = None
                info.aliases[export.as_] = export.as_
            if sub is None:
                info.open = not node.out.exports
    return scope


def _export_schema(export: Export, scope: StaticScope) -> dict[str, Any] | None:
    try:
        ref = bare_reference(export.from_)
    except BlockError:
        return None
    found = scope.nodes.get(ref.root) if ref else None
    if ref is None or found is None or not ref.path:
        return None
    return descend(found.outputs.get(str(ref.path[0])), ref.path[1:])


# --- checking scopes -------------------------------------------------------------------------


def check_scope(state: CheckState, scope: StaticScope, shape: GraphShape) -> None:
    """Check every node of one graph (``shape`` is its shape), then report its cycle."""
    assert shape.nodes.keys() == scope.nodes.keys(), "one first-defined node per id in both"
    for info in scope.nodes.values():
        _check_node(state, info, scope, shape)
    if shape.cycle:
        first = scope.nodes[shape.cycle[0]]
        state.issue(
            IssueCode.CYCLE,
            "ノードの依存関係が循環しています: "
            + " → ".join(state.words.node(scope.nodes[n].qual) for n in shape.cycle),
            first.loc,
            node=first.qual,
            hint="どこかの参照を外して、データが一方向に流れるようにしてください。",
        )


def _check_node(state: CheckState, info: NodeInfo, scope: StaticScope, shape: GraphShape) -> None:
    node = info.node
    if node.when is not None:
        check_when(state, node.when, (*info.loc, "when"), scope, info)
    if isinstance(node, BlockNode):
        rules.check_block_node(state, info, scope)
    elif isinstance(node, LoopNode):
        body = shape.bodies[node.id]
        control_rules.check_loop(
            state, node, info, scope, lambda inner: check_scope(state, inner, body)
        )
    else:
        control_rules.check_subflow(state, node, info, scope)


# --- graph-wide checks -----------------------------------------------------------------------


def _check_policy(state: CheckState) -> None:
    for key in state.plan.policy.concurrency.per_node:
        if key not in state.seen_ids:
            state.issue(
                IssueCode.UNKNOWN_POLICY_NODE,
                f"policy.concurrency.per_node の '{key}' はノード ID ではありません。",
                ("policy", "concurrency", "per_node", key),
                hint=_close(key, state.seen_ids) or "ノード ID を指定してください。",
            )


def _warn_unused(state: CheckState, scope: StaticScope) -> None:
    for node_id, info in scope.nodes.items():
        for alias, port in info.aliases.items():
            if (id(scope), node_id, alias) not in state.used:
                block = info.node.block if isinstance(info.node, BlockNode) else None
                output = state.words.port(block, port, alias)
                state.issue(
                    IssueCode.UNUSED_OUTPUT,
                    f"{state.words.node(info.qual)} の出力 {output}"
                    " はどこからも参照されていません。",
                    (*info.loc, "out", port)
                    if isinstance(info.node, BlockNode)
                    else (*info.loc, "out"),
                    node=info.qual,
                    severity="warning",
                    hint="不要なら out から外してください。",
                )
        if info.body is not None:
            _warn_unused(state, info.body)


def _all_ids(scope: StaticScope) -> list[str]:
    out = list(scope.nodes)
    for info in scope.nodes.values():
        if info.body is not None:
            out.extend(_all_ids(info.body))
    return out
