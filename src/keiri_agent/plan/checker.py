"""The validator's walk over a plan: scopes, references, loops, subflows and cycles.

Block-specific rules and UI checks live in ``plan.rules``; the entry point is
``plan.validator.validate_source``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.schema import check_value, compatible, descend, type_of_value
from keiri_agent.errors import BlockError
from keiri_agent.plan import control_rules, rules
from keiri_agent.plan.expr import compile_when
from keiri_agent.plan.issues import Loc, PlanIssue, ValidationReport, format_path
from keiri_agent.plan.loader import PlanSource, load_source, resolve_plan_file
from keiri_agent.plan.models import (
    RESERVED_ROOTS,
    BlockNode,
    Export,
    LoopNode,
    Plan,
    when_raw,
)
from keiri_agent.plan.refs import (
    Reference,
    bare_reference,
    iter_references,
    single_reference,
)
from keiri_agent.plan.scope import UNRESOLVED, AnyNode, NodeInfo, Scope, block_outputs
from keiri_agent.plan.scope import types_label as _types

__all__ = ["UNRESOLVED", "Checker"]

Deps = list[tuple[Scope, str]]


@dataclass
class Checker:
    source: PlanSource
    plan: Plan
    registry: BlockRegistry
    report: ValidationReport
    designs_dir: Path
    config: Mapping[str, Any]
    env: Mapping[str, str]
    stack: tuple[str, ...]  # plan ids of the calling chain, this plan last
    stack_files: tuple[str | None, ...]  # their resolved files (None: not from a file)
    index_map: list[int]
    validate_subflow: Callable[[PlanSource], ValidationReport]
    used: set[tuple[int, str, str]] = field(default_factory=set)
    seen_ids: dict[str, Loc] = field(default_factory=dict)
    top: Scope | None = None
    requirement_types: dict[str, tuple[str, str]] = field(default_factory=dict)
    _subplans: dict[str, tuple[Plan | None, PlanSource | None]] = field(default_factory=dict)

    # --- reporting ---------------------------------------------------------------------------

    def issue(
        self,
        code: str,
        message: str,
        loc: Loc,
        *,
        node: str | None = None,
        hint: str = "",
        severity: str = "error",
    ) -> None:
        line, column = self.source.position(loc)
        self.report.add(
            PlanIssue(
                code=code,
                message=message,
                severity="warning" if severity == "warning" else "error",
                node_id=node,
                path=format_path(loc),
                line=line,
                column=column,
                hint=hint,
                file=self.source.file,
            )
        )

    # --- building scopes ---------------------------------------------------------------------

    def check(self, dropped: set[str]) -> None:
        locs = [("graph", i) for i in self.index_map]
        self.top = self.build_scope(self.plan.graph, locs, None, "", dropped)
        self.check_vars()
        self.check_scope(self.top, None)
        for export in self.plan.exports:
            control_rules.check_export(self, export, self.top, ("exports",), "PLAN_UNKNOWN_EXPORT")
        self.check_policy()
        self.warn_unused(self.top)

    def build_scope(
        self,
        nodes: Iterable[AnyNode],
        locs: Iterable[Loc],
        parent: Scope | None,
        prefix: str,
        dropped: set[str],
    ) -> Scope:
        scope = Scope(parent=parent, prefix=prefix, dropped=dropped)
        for node, loc in zip(nodes, locs, strict=True):
            if node.id in self.seen_ids:
                first = self.seen_ids[node.id]
                self.issue(
                    "DUPLICATE_NODE_ID",
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
                    node.body.plan.graph, body_locs, scope, f"{info.qual}/", set()
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
                sub, _ = self.subplan(node.call.plan_id)
                for export in node.out.exports:
                    info.outputs[export.as_] = None
                    info.aliases[export.as_] = export.as_
                if sub is None:
                    info.open = not node.out.exports
        return scope

    def export_schema(self, export: Export, scope: Scope) -> dict[str, Any] | None:
        try:
            ref = bare_reference(export.from_)
        except BlockError:
            return None
        found = scope.nodes.get(ref.root) if ref else None
        if ref is None or found is None or not ref.path:
            return None
        return descend(found.outputs.get(str(ref.path[0])), ref.path[1:])

    def subplan(self, plan_id: str) -> tuple[Plan | None, PlanSource | None]:
        if plan_id not in self._subplans:
            file = resolve_plan_file(plan_id, self.designs_dir)
            if file is None:
                self._subplans[plan_id] = (None, None)
            else:
                source = load_source(file)
                try:
                    plan = Plan.model_validate(source.raw) if source.raw is not None else None
                except Exception:
                    plan = None
                self._subplans[plan_id] = (plan, source)
        return self._subplans[plan_id]

    # --- checking scopes ---------------------------------------------------------------------

    def check_scope(self, scope: Scope, outer: Deps | None) -> None:
        edges: dict[str, set[str]] = {}
        for node_id, info in scope.nodes.items():
            deps: Deps = []
            self.check_node(info, scope, deps)
            edges[node_id] = {n for s, n in deps if s is scope}
            if outer is not None:
                ancestors = scope.chain()[1:]
                outer.extend((s, n) for s, n in deps if any(s is a for a in ancestors))
        self.check_cycles(scope, edges)

    def check_node(self, info: NodeInfo, scope: Scope, deps: Deps) -> None:
        node = info.node
        if node.when is not None:
            self.check_when(node.when, (*info.loc, "when"), scope, info, deps)
        if isinstance(node, BlockNode):
            rules.check_block_node(self, info, scope, deps)
        elif isinstance(node, LoopNode):
            control_rules.check_loop(self, node, info, scope, deps)
        else:
            control_rules.check_subflow(self, node, info, scope, deps)

    def check_when(
        self, when: Any, loc: Loc, scope: Scope, info: NodeInfo | None, deps: Deps
    ) -> None:
        try:
            expression = compile_when(when_raw(when))
        except BlockError as exc:
            self.issue(
                "INVALID_EXPRESSION",
                exc.message,
                loc,
                node=info.qual if info else None,
                hint=exc.hint or "比較は ==, !=, >, >=, <, <=、論理は and/or/not で書けます。",
            )
            return
        for ref in expression.references:
            self.resolve(ref, scope, loc, info, deps)

    # --- values and references ---------------------------------------------------------------

    def check_value(
        self,
        value: Any,
        loc: Loc,
        scope: Scope,
        info: NodeInfo | None,
        deps: Deps,
        target: Mapping[str, Any] | None,
        *,
        literal_check: bool = True,
    ) -> Any:
        """Check every reference in ``value``; return the value's schema (or UNRESOLVED)."""
        node = info.qual if info else None
        try:
            found = list(iter_references(value))
        except BlockError as exc:
            self.issue("INVALID_REFERENCE", exc.message, loc, node=node, hint=exc.hint)
            return UNRESOLVED
        schemas = [self.resolve(ref, scope, loc, info, deps) for _, ref in found]
        single = single_reference(value) if isinstance(value, str) else None
        if not found:
            schema: Any = {"type": type_of_value(value)}
            if target is not None and literal_check:
                problem = check_value(value, target)
                if problem:
                    self.issue(
                        "INVALID_INPUT_VALUE",
                        f"{format_path(loc)} の値が入力の型に合いません: {problem}",
                        loc,
                        node=node,
                        hint=_port_hint(target),
                    )
            return schema
        if single is not None:
            schema = schemas[0]
        elif isinstance(value, str):
            schema = {"type": "string"}
        else:
            return None
        if schema is UNRESOLVED or target is None:
            return schema
        if not compatible(schema, target):
            self.issue(
                "TYPE_MISMATCH",
                f"{value} の型（{_types(schema)}）は {format_path(loc)} の型（{_types(target)}）と合いません。",
                loc,
                node=node,
                hint="参照する出力を変えるか、型を変換するブロックを間に入れてください。",
            )
        return schema

    def resolve(
        self, ref: Reference, scope: Scope, loc: Loc, info: NodeInfo | None, deps: Deps
    ) -> Any:
        node = info.qual if info else None
        root = ref.root

        def fail(message: str, hint: str, code: str = "UNRESOLVED_REFERENCE") -> Any:
            self.issue(code, message, loc, node=node, hint=hint)
            return UNRESOLVED

        if root in RESERVED_ROOTS and not ref.path:
            return fail(
                f"{ref.text} には名前が必要です（例: ${{{root}.名前}}）。", "", "INVALID_REFERENCE"
            )
        if root == "vars":
            name = str(ref.path[0])
            if name not in self.plan.vars:
                return fail(
                    f"{ref.text}: vars に '{name}' が定義されていません。",
                    f"Plan の vars に {name}: を追加してください。{_close(name, self.plan.vars)}",
                )
            schema = self.var_schema(name)
        elif root == "env":
            name = str(ref.path[0])
            if name not in self.env:
                self.issue(
                    "ENV_NOT_SET",
                    f"{ref.text}: 環境変数 {name} が設定されていません。",
                    loc,
                    node=node,
                    severity="warning",
                    hint=f"実行前に環境変数 {name} を設定してください。",
                )
            schema = {"type": "string"}
        elif root == "config":
            current: Any = self.config
            for part in ref.path:
                if isinstance(current, Mapping) and str(part) in current:
                    current = current[str(part)]
                else:
                    return fail(
                        f"{ref.text}: 設定に '{part}' がありません。",
                        "KEIRI_PLAN_CONFIG が指す設定 YAML にこの項目を追加してください。",
                    )
            schema = {"type": type_of_value(current)}
            if ref.length:
                return {"type": "integer"}
            return schema
        else:
            found = scope.lookup(root)
            if found is None:
                if scope.is_dropped(root):
                    return None
                loop_id = scope.hidden_in(root)
                if loop_id is not None:
                    return fail(
                        f"{ref.text}: ノード '{root}' はループ '{loop_id}' の本体の中にあり、外からは参照できません。",
                        f"body.plan.exports で公開し、${{{loop_id}.名前}} で参照してください。",
                    )
                visible = [n for s in scope.chain() for n in (*s.nodes, *s.loop_vars)]
                return fail(
                    f"{ref.text}: ノード '{root}' が見つかりません。",
                    f"参照できるのはこの graph と外側のノード、vars/env/config です。{_close(root, visible)}",
                )
            where, target = found
            if target is None:
                schema = descend(where.loop_vars[root], ref.path)
                return {"type": "integer"} if ref.length else schema
            deps.append((where, root))
            if target.open:
                return None
            if not ref.path:
                return fail(
                    f"{ref.text}: 出力名がありません（${{{root}.出力名}} の形で参照してください）。",
                    f"'{root}' の出力: {', '.join(target.outputs) or 'なし'}",
                    "INVALID_REFERENCE",
                )
            name = str(ref.path[0])
            if name not in target.outputs:
                return fail(
                    f"{ref.text}: ノード '{root}' に出力 '{name}' はありません。",
                    f"'{root}' の出力: {', '.join(target.outputs) or 'なし'}。{_close(name, target.outputs)}",
                )
            self.used.add((id(where), root, name))
            schema = descend(target.outputs[name], ref.path[1:])
            if ref.length:
                return {"type": "integer"}
            return schema
        schema = descend(schema, ref.path[1:])
        return {"type": "integer"} if ref.length else schema

    def var_schema(self, name: str) -> dict[str, Any] | None:
        value = self.plan.vars.get(name)
        if value is None:
            return None
        if isinstance(value, str) and single_reference(value) is not None:
            return None
        return {"type": type_of_value(value)}

    def check_vars(self) -> None:
        assert self.top is not None
        for name, value in self.plan.vars.items():
            try:
                found = list(iter_references(value))
            except BlockError as exc:
                self.issue("INVALID_REFERENCE", exc.message, ("vars", name), hint=exc.hint)
                continue
            for _, ref in found:
                if ref.root not in ("env", "config"):
                    self.issue(
                        "INVALID_VAR_REFERENCE",
                        f"vars.{name} の {ref.text} は使えません。vars から参照できるのは env と config だけです。",
                        ("vars", name),
                        hint="ノードの出力を使う場合は、ノードの in で直接参照してください。",
                    )
                else:
                    self.resolve(ref, self.top, ("vars", name), None, [])

    # --- graph-wide checks -------------------------------------------------------------------

    def check_cycles(self, scope: Scope, edges: dict[str, set[str]]) -> None:
        indegree = {n: 0 for n in edges}
        for node_id, targets in edges.items():
            for _ in targets & edges.keys():
                indegree[node_id] += 1
        ready = [n for n, d in indegree.items() if d == 0]
        users: dict[str, list[str]] = {n: [] for n in edges}
        for node_id, targets in edges.items():
            for t in targets & edges.keys():
                users[t].append(node_id)
        done: set[str] = set()
        while ready:
            current = ready.pop()
            done.add(current)
            for user in users[current]:
                indegree[user] -= 1
                if indegree[user] == 0:
                    ready.append(user)
        remaining = [n for n in edges if n not in done]
        if not remaining:
            return
        cycle = _find_cycle(remaining, edges)
        first = scope.nodes[cycle[0]]
        self.issue(
            "CYCLE",
            f"ノードの依存関係が循環しています: {' → '.join(cycle)}",
            first.loc,
            node=first.qual,
            hint="どこかの参照を外して、データが一方向に流れるようにしてください。",
        )

    def check_policy(self) -> None:
        for key in self.plan.policy.concurrency.per_node:
            if key not in self.seen_ids:
                self.issue(
                    "UNKNOWN_POLICY_NODE",
                    f"policy.concurrency.per_node の '{key}' はノード ID ではありません。",
                    ("policy", "concurrency", "per_node", key),
                    hint=_close(key, self.seen_ids) or "ノード ID を指定してください。",
                )

    def warn_unused(self, scope: Scope) -> None:
        for node_id, info in scope.nodes.items():
            for alias, port in info.aliases.items():
                if (id(scope), node_id, alias) not in self.used:
                    self.issue(
                        "UNUSED_OUTPUT",
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


def _port_hint(target: Mapping[str, Any]) -> str:
    parts = [f"型: {_types(target)}"]
    if "enum" in target:
        parts.append(f"選択肢: {', '.join(map(str, target['enum']))}")
    return "。".join(parts)


def _close(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.5)
    return f"もしかして: {', '.join(close)}" if close else ""


def _all_ids(scope: Scope) -> list[str]:
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
