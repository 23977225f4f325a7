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
from keiri_agent.blocks.schema import check_value, compatible, descend, json_types, type_of_value
from keiri_agent.errors import BlockError
from keiri_agent.plan import rules
from keiri_agent.plan.expr import compile_when
from keiri_agent.plan.issues import Loc, PlanIssue, ValidationReport, format_path
from keiri_agent.plan.loader import PlanSource, load_source, resolve_plan_file
from keiri_agent.plan.models import (
    RESERVED_ROOTS,
    BlockNode,
    Export,
    LoopNode,
    Plan,
    SubflowNode,
    WhenCompare,
    WhenExpr,
)
from keiri_agent.plan.refs import Reference, find_references, iter_references, single_reference
from keiri_agent.plan.scope import AnyNode, NodeInfo, Scope, block_outputs

__all__ = ["UNRESOLVED", "Checker", "when_raw"]

UNRESOLVED: Any = object()  # resolve()'s answer for a reference that does not resolve
Deps = list[tuple[Scope, str]]


def when_raw(when: str | WhenExpr | WhenCompare) -> str | dict[str, Any]:
    if isinstance(when, str):
        return when
    return when.model_dump(by_alias=True)


def _types(schema: Mapping[str, Any] | None) -> str:
    types = json_types(schema)
    return "/".join(sorted(types)) if types else "任意"


@dataclass
class Checker:
    source: PlanSource
    plan: Plan
    registry: BlockRegistry
    report: ValidationReport
    designs_dir: Path
    config: Mapping[str, Any]
    env: Mapping[str, str]
    stack: tuple[str, ...]
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
            self.check_export(export, self.top, ("exports",), "PLAN_UNKNOWN_EXPORT")
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
            refs = find_references("${" + export.from_ + "}")
        except BlockError:
            return None
        found = scope.nodes.get(refs[0].root) if refs else None
        if found is None or not refs[0].path:
            return None
        return descend(found.outputs.get(str(refs[0].path[0])), refs[0].path[1:])

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
            self.check_loop(node, info, scope, deps)
        else:
            self.check_subflow(node, info, scope, deps)

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

    def check_loop(self, node: LoopNode, info: NodeInfo, scope: Scope, deps: Deps) -> None:
        body = info.body
        assert body is not None
        if node.foreach is not None:
            fe = node.foreach
            loc = (*info.loc, "foreach", "input")
            schema = self.check_value(fe.input, loc, scope, info, deps, None)
            if isinstance(fe.input, str) and single_reference(fe.input) is None:
                schema = {"type": "string"}
            elif not isinstance(fe.input, str):
                schema = {"type": type_of_value(fe.input)}
            types = json_types(schema) if schema is not UNRESOLVED else None
            if types is not None and "array" not in types:
                self.issue(
                    "TYPE_MISMATCH",
                    f"foreach.input は配列である必要がありますが、{_types(schema)} です。",
                    loc,
                    node=info.qual,
                    hint="配列を出力するノードの出力（例: ${parse.evidence.files}）を指定してください。",
                )
            item = descend(schema, [0]) if schema is not UNRESOLVED else None
            body.loop_vars[fe.itemVar] = item
            if fe.indexVar:
                body.loop_vars[fe.indexVar] = {"type": "integer"}
            for var in filter(None, (fe.itemVar, fe.indexVar)):
                if var in RESERVED_ROOTS or var in self.seen_ids:
                    self.issue(
                        "LOOP_VAR_CONFLICT",
                        f"ループ変数 '{var}' は予約語かノード ID と重なっています。",
                        (*info.loc, "foreach"),
                        node=info.qual,
                        hint="itemVar / indexVar には他と重ならない名前を付けてください。",
                    )
        inner: Deps = []
        self.check_scope(body, inner)
        deps.extend(inner)
        if node.while_ is not None:
            cond: Deps = []
            self.check_when(
                node.while_.condition, (*info.loc, "while", "condition"), body, info, cond
            )
            deps.extend((s, n) for s, n in cond if s is not body)
        for i, export in enumerate(node.body.plan.exports):
            self.check_export(
                export, body, (*info.loc, "body", "plan", "exports", i), "LOOP_UNKNOWN_EXPORT"
            )
        names = {e.as_ for e in node.body.plan.exports}
        for name in node.out.names(node.body.plan.exports):
            if name not in names:
                self.issue(
                    "LOOP_UNKNOWN_COLLECT",
                    f"out.collect の '{name}' は body.plan.exports にありません。",
                    (*info.loc, "out", "collect"),
                    node=info.qual,
                    hint=f"exports の as に定義した名前を指定してください（定義済み: {', '.join(sorted(names)) or 'なし'}）。",
                )

    def check_export(self, export: Export, scope: Scope, loc: Loc, code: str) -> None:
        try:
            refs = find_references("${" + export.from_ + "}")
        except BlockError as exc:
            self.issue(code, exc.message, (*loc, "from"), hint=exc.hint)
            return
        ref = refs[0] if refs else None
        if ref is None or ref.root not in scope.nodes or not ref.path:
            self.issue(
                code,
                f"exports の from '{export.from_}' はこの graph のノード出力（ノードID.出力名）ではありません。",
                (*loc, "from"),
                hint=f"この graph のノード: {', '.join(scope.nodes) or 'なし'}",
            )
            return
        self.resolve(ref, scope, (*loc, "from"), None, [])

    def check_subflow(self, node: SubflowNode, info: NodeInfo, scope: Scope, deps: Deps) -> None:
        call_loc = (*info.loc, "call")
        for key, value in node.call.inputs.items():
            self.check_value(value, (*call_loc, "inputs", key), scope, info, deps, None)
        if node.call.plan_id in self.stack:
            chain = " → ".join(
                [*self.stack[self.stack.index(node.call.plan_id) :], node.call.plan_id]
            )
            self.issue(
                "SUBFLOW_CYCLE",
                f"サブフローの呼び出しが循環しています: {chain}",
                (*call_loc, "plan_id"),
                node=info.qual,
                hint="Plan が自分自身を（間接的にでも）呼ばないようにしてください。",
            )
            return
        sub, source = self.subplan(node.call.plan_id)
        if source is None:
            self.issue(
                "SUBFLOW_NOT_FOUND",
                f"サブフロー '{node.call.plan_id}' が見つかりません（{self.designs_dir}/{node.call.plan_id}.yaml）。",
                (*call_loc, "plan_id"),
                node=info.qual,
                hint="designs/ からの相対名で plan_id を指定してください（拡張子なし）。",
            )
            return
        for err in self.validate_subflow(source).errors:
            self.report.add(
                err.model_copy(
                    update={
                        "message": f"サブフロー {node.call.plan_id}: {err.message}",
                        "node_id": f"{info.qual}/{err.node_id}" if err.node_id else info.qual,
                    }
                )
            )
        if sub is None:
            return
        for key in node.call.inputs:
            if key not in sub.vars:
                self.issue(
                    "SUBFLOW_UNKNOWN_INPUT",
                    f"サブフロー {sub.id} は入力 '{key}' を受け取りません（vars に未定義）。",
                    (*call_loc, "inputs", key),
                    node=info.qual,
                    hint=f"受け取れる入力: {', '.join(sub.vars) or 'なし'}",
                )
        for key, value in sub.vars.items():
            if value is None and key not in node.call.inputs:
                self.issue(
                    "MISSING_REQUIRED_INPUT",
                    f"サブフロー {sub.id} の必須入力 '{key}' が call.inputs にありません。",
                    call_loc,
                    node=info.qual,
                    hint=f"call.inputs に {key}: ... を追加してください。",
                )
        names = {e.as_ for e in sub.exports}
        for i, export in enumerate(node.out.exports):
            top_ids = {n.id for n in sub.graph}
            root = export.from_.split(".", 1)[0]
            if export.from_ not in names and not ("." in export.from_ and root in top_ids):
                self.issue(
                    "SUBFLOW_UNKNOWN_EXPORT",
                    f"サブフロー {sub.id} は '{export.from_}' を公開していません。",
                    (*info.loc, "out", "exports", i, "from"),
                    node=info.qual,
                    hint=f"公開されている名前: {', '.join(sorted(names)) or 'なし'}（または ノードID.出力名）",
                )

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
