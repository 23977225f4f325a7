"""The validator's walk over a plan: scopes, references, loops, subflows and cycles.

Reference checks live in ``references``, block-specific rules and UI checks in ``rules``, loop
and subflow rules in ``control_rules``; the entry point is ``validator.validate_source``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from keiri_agent.blocks.schema import descend
from keiri_agent.errors import BlockError
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.issues import Loc, format_path
from keiri_agent.plan._dsl.models import (
    BlockNode,
    Export,
    LoopNode,
)
from keiri_agent.plan._dsl.refs import bare_reference
from keiri_agent.plan._graph.compiled import topological_order
from keiri_agent.plan._graph.scope import AnyNode, NodeInfo, Scope, StaticScope, block_outputs
from keiri_agent.plan._validate import control_rules, rules
from keiri_agent.plan._validate.references import ReferenceChecker
from keiri_agent.plan._validate.state import Deps
from keiri_agent.plan._validate.state import close_matches as _close

__all__ = ["Checker"]


class Checker(ReferenceChecker):
    """The walk: scopes built, each node checked, cycles, policy and unused outputs."""

    # --- building scopes ---------------------------------------------------------------------

    def check(self, dropped: set[str]) -> None:
        locs = [("graph", i) for i in self.index_map]
        self.dropped = dropped
        self.top = self.build_scope(self.plan.graph, locs, None, "")
        self.check_vars()
        self.check_scope(self.top, None)
        for export in self.plan.exports:
            control_rules.check_export(
                self, export, self.top, ("exports",), IssueCode.PLAN_UNKNOWN_EXPORT
            )
        self.check_policy()
        self.warn_unused(self.top)

    def build_scope(
        self,
        nodes: Iterable[AnyNode],
        locs: Iterable[Loc],
        parent: StaticScope | None,
        prefix: str,
    ) -> StaticScope:
        scope: StaticScope = Scope(vars=None, parent=parent, prefix=prefix)
        for node, loc in zip(nodes, locs, strict=True):
            if node.id in self.seen_ids:
                first = self.seen_ids[node.id]
                self.issue(
                    IssueCode.DUPLICATE_NODE_ID,
                    f"ノード ID '{node.id}' が重複しています（最初の定義: {format_path(first)}）。",
                    (*loc, "id"),
                    node=prefix + node.id,
                    hint="ノード ID は Plan 全体（ループ本体を含む）で一意にしてください。",
                )
                continue
            self.seen_ids[node.id] = loc
            info = NodeInfo(node=node, loc=loc, qual=prefix + node.id)
            scope.nodes[node.id] = info
            if isinstance(node, BlockNode):
                info.spec = self.registry.find(node.block)
                if info.spec is None:
                    info.open = True
                else:
                    info.outputs = block_outputs(node, info.spec)
                    info.aliases = {alias: port for port, alias in node.out.items()}
            elif isinstance(node, LoopNode):
                body_locs = [
                    (*loc, "body", "plan", "graph", j) for j in range(len(node.body.plan.graph))
                ]
                info.body = self.build_scope(
                    node.body.plan.graph, body_locs, scope, f"{info.qual}/"
                )
                for inner in _all_ids(info.body):
                    scope.hidden[inner] = node.id
                exports = {e.as_: self.export_schema(e, info.body) for e in node.body.plan.exports}
                for name in node.out.names(node.body.plan.exports):
                    item = exports.get(name)
                    info.outputs[name] = (
                        {"type": "array", "items": item} if item else {"type": "array"}
                    )
            else:
                sub = self.subflows.load(node.call.plan_id).plan
                for export in node.out.exports:
                    info.outputs[export.as_] = None
                    info.aliases[export.as_] = export.as_
                if sub is None:
                    info.open = not node.out.exports
        return scope

    def export_schema(self, export: Export, scope: StaticScope) -> dict[str, Any] | None:
        try:
            ref = bare_reference(export.from_)
        except BlockError:
            return None
        found = scope.nodes.get(ref.root) if ref else None
        if ref is None or found is None or not ref.path:
            return None
        return descend(found.outputs.get(str(ref.path[0])), ref.path[1:])

    # --- checking scopes ---------------------------------------------------------------------

    def check_scope(self, scope: StaticScope, outer: Deps | None) -> None:
        edges: dict[str, set[str]] = {}
        for node_id, info in scope.nodes.items():
            deps: Deps = []
            self.check_node(info, scope, deps)
            edges[node_id] = {n for s, n in deps if s is scope}
            if outer is not None:
                ancestors = scope.chain()[1:]
                outer.extend((s, n) for s, n in deps if any(s is a for a in ancestors))
        self.check_cycles(scope, edges)

    def check_node(self, info: NodeInfo, scope: StaticScope, deps: Deps) -> None:
        node = info.node
        if node.when is not None:
            self.check_when(node.when, (*info.loc, "when"), scope, info, deps)
        if isinstance(node, BlockNode):
            rules.check_block_node(self, info, scope, deps)
        elif isinstance(node, LoopNode):
            control_rules.check_loop(self, node, info, scope, deps)
        else:
            control_rules.check_subflow(self, node, info, scope, deps)

    # --- graph-wide checks -------------------------------------------------------------------

    def check_cycles(self, scope: StaticScope, edges: dict[str, set[str]]) -> None:
        _, remaining = topological_order(list(edges), edges)
        if not remaining:
            return
        cycle = _find_cycle(remaining, edges)
        first = scope.nodes[cycle[0]]
        self.issue(
            IssueCode.CYCLE,
            f"ノードの依存関係が循環しています: {' → '.join(cycle)}",
            first.loc,
            node=first.qual,
            hint="どこかの参照を外して、データが一方向に流れるようにしてください。",
        )

    def check_policy(self) -> None:
        for key in self.plan.policy.concurrency.per_node:
            if key not in self.seen_ids:
                self.issue(
                    IssueCode.UNKNOWN_POLICY_NODE,
                    f"policy.concurrency.per_node の '{key}' はノード ID ではありません。",
                    ("policy", "concurrency", "per_node", key),
                    hint=_close(key, self.seen_ids) or "ノード ID を指定してください。",
                )

    def warn_unused(self, scope: StaticScope) -> None:
        for node_id, info in scope.nodes.items():
            for alias, port in info.aliases.items():
                if (id(scope), node_id, alias) not in self.used:
                    self.issue(
                        IssueCode.UNUSED_OUTPUT,
                        f"ノード '{info.qual}' の出力 '{alias}' はどこからも参照されていません。",
                        (*info.loc, "out", port)
                        if isinstance(info.node, BlockNode)
                        else (*info.loc, "out"),
                        node=info.qual,
                        severity="warning",
                        hint="不要なら out から外してください。",
                    )
            if info.body is not None:
                self.warn_unused(info.body)


def _all_ids(scope: StaticScope) -> list[str]:
    out = list(scope.nodes)
    for info in scope.nodes.values():
        if info.body is not None:
            out.extend(_all_ids(info.body))
    return out


def _find_cycle(nodes: list[str], edges: dict[str, set[str]]) -> list[str]:
    """One cycle among ``nodes`` (each has an unfinished dependency), closed: [a, b, a]."""
    start = nodes[0]
    path = [start]
    seen = {start: 0}
    current = start
    allowed = set(nodes)
    while True:
        nxt = sorted(edges[current] & allowed)[0]
        if nxt in seen:
            return [*path[seen[nxt] :], nxt]
        seen[nxt] = len(path)
        path.append(nxt)
        current = nxt
