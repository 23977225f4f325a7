"""Validator rules for loop and subflow nodes and for ``exports`` (seed 002 §5.2, §5.3, §6).

Loop bodies are checked as their own scope (the loop variables bound, the enclosing nodes
visible); a while condition may read the body's nodes (the previous iteration). Subflows are
validated as plans of their own, their errors reported under the calling node, and their
``inputs``/``exports`` checked against the called plan's ``vars``/``exports``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from keiri_agent.blocks.schema import descend, json_types, type_of_value
from keiri_agent.errors import BlockError
from keiri_agent.plan._dsl.models import (
    MAX_SUBFLOW_DEPTH,
    RESERVED_ROOTS,
    Export,
    LoopNode,
    Plan,
    SubflowNode,
)
from keiri_agent.plan._dsl.refs import bare_reference, single_reference
from keiri_agent.plan._graph.scope import UNRESOLVED
from keiri_agent.plan._graph.scope import types_label as _types

if TYPE_CHECKING:
    from keiri_agent.plan._dsl.issues import Loc
    from keiri_agent.plan._dsl.loader import PlanSource
    from keiri_agent.plan._graph.scope import NodeInfo, Scope
    from keiri_agent.plan._validate.state import CheckState as Checker
    from keiri_agent.plan._validate.state import Deps

__all__ = ["check_export", "check_loop", "check_subflow"]


def check_loop(checker: Checker, node: LoopNode, info: NodeInfo, scope: Scope, deps: Deps) -> None:
    body = info.body
    assert body is not None
    if node.foreach is not None:
        fe = node.foreach
        loc = (*info.loc, "foreach", "input")
        schema = checker.check_value(fe.input, loc, scope, info, deps, None)
        if isinstance(fe.input, str) and single_reference(fe.input) is None:
            schema = {"type": "string"}
        elif not isinstance(fe.input, str):
            schema = {"type": type_of_value(fe.input)}
        types = json_types(schema) if schema is not UNRESOLVED else None
        if types is not None and "array" not in types:
            checker.issue(
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
            if var in RESERVED_ROOTS or var in checker.seen_ids:
                checker.issue(
                    "LOOP_VAR_CONFLICT",
                    f"ループ変数 '{var}' は予約語かノード ID と重なっています。",
                    (*info.loc, "foreach"),
                    node=info.qual,
                    hint="itemVar / indexVar には他と重ならない名前を付けてください。",
                )
    inner: Deps = []
    checker.check_scope(body, inner)
    deps.extend(inner)
    if node.while_ is not None:
        cond: Deps = []
        checker.check_when(
            node.while_.condition, (*info.loc, "while", "condition"), body, info, cond
        )
        deps.extend((s, n) for s, n in cond if s is not body)
    for i, export in enumerate(node.body.plan.exports):
        check_export(
            checker, export, body, (*info.loc, "body", "plan", "exports", i), "LOOP_UNKNOWN_EXPORT"
        )
    names = {e.as_ for e in node.body.plan.exports}
    for name in node.out.names(node.body.plan.exports):
        if name not in names:
            checker.issue(
                "LOOP_UNKNOWN_COLLECT",
                f"out.collect の '{name}' は body.plan.exports にありません。",
                (*info.loc, "out", "collect"),
                node=info.qual,
                hint=f"exports の as に定義した名前を指定してください（定義済み: {', '.join(sorted(names)) or 'なし'}）。",
            )


def check_export(checker: Checker, export: Export, scope: Scope, loc: Loc, code: str) -> None:
    try:
        ref = bare_reference(export.from_)
    except BlockError as exc:
        checker.issue(code, exc.message, (*loc, "from"), hint=exc.hint)
        return
    if ref is None or ref.root not in scope.nodes or not ref.path:
        checker.issue(
            code,
            f"exports の from '{export.from_}' はこの graph のノード出力（ノードID.出力名）ではありません。",
            (*loc, "from"),
            hint=f"この graph のノード: {', '.join(scope.nodes) or 'なし'}",
        )
        return
    checker.resolve(ref, scope, (*loc, "from"), None, [])


def _is_cycle(
    checker: Checker,
    node: SubflowNode,
    info: NodeInfo,
    sub: Plan | None,
    source: PlanSource | None,
) -> bool:
    """A call back into a plan of the calling chain, by file (resolved path) or by plan id.

    A plan's ``id`` need not match its file's name, so the file is the identity that always
    works; the id catches two copies of one plan calling each other.
    """
    file = str(Path(source.file).resolve()) if source is not None and source.file else None
    ids = [node.call.plan_id, *([sub.id] if sub is not None else [])]
    index = next(
        (
            i
            for i, (plan_id, plan_file) in enumerate(
                zip(checker.stack, checker.stack_files, strict=True)
            )
            if (file is not None and plan_file == file) or plan_id in ids
        ),
        None,
    )
    if index is None:
        return False
    chain = " → ".join([*checker.stack[index:], sub.id if sub is not None else node.call.plan_id])
    checker.issue(
        "SUBFLOW_CYCLE",
        f"サブフローの呼び出しが循環しています: {chain}",
        (*info.loc, "call", "plan_id"),
        node=info.qual,
        hint="Plan が自分自身を（間接的にでも）呼ばないようにしてください。",
    )
    return True


def check_subflow(
    checker: Checker, node: SubflowNode, info: NodeInfo, scope: Scope, deps: Deps
) -> None:
    call_loc = (*info.loc, "call")
    for key, value in node.call.inputs.items():
        checker.check_value(value, (*call_loc, "inputs", key), scope, info, deps, None)
    if len(checker.stack) >= MAX_SUBFLOW_DEPTH:
        checker.issue(
            "SUBFLOW_TOO_DEEP",
            f"サブフローの入れ子が {MAX_SUBFLOW_DEPTH} 段を超えます: "
            f"{' → '.join([*checker.stack, node.call.plan_id])}",
            (*call_loc, "plan_id"),
            node=info.qual,
            hint=f"サブフローから呼ぶサブフローは {MAX_SUBFLOW_DEPTH} 段までです。"
            " 途中の Plan をまとめて段数を減らしてください（docs/limits.md）。",
        )
        return
    sub, source = checker.subplan(node.call.plan_id)
    if _is_cycle(checker, node, info, sub, source):
        return
    if source is None:
        checker.issue(
            "SUBFLOW_NOT_FOUND",
            f"サブフロー '{node.call.plan_id}' が見つかりません（{checker.designs_dir}/{node.call.plan_id}.yaml）。",
            (*call_loc, "plan_id"),
            node=info.qual,
            hint="designs/ からの相対名で plan_id を指定してください（拡張子なし）。",
        )
        return
    for err in checker.validate_subflow(source).errors:
        checker.report.add(
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
            checker.issue(
                "SUBFLOW_UNKNOWN_INPUT",
                f"サブフロー {sub.id} は入力 '{key}' を受け取りません（vars に未定義）。",
                (*call_loc, "inputs", key),
                node=info.qual,
                hint=f"受け取れる入力: {', '.join(sub.vars) or 'なし'}",
            )
    for key, value in sub.vars.items():
        if value is None and key not in node.call.inputs:
            checker.issue(
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
            checker.issue(
                "SUBFLOW_UNKNOWN_EXPORT",
                f"サブフロー {sub.id} は '{export.from_}' を公開していません。",
                (*info.loc, "out", "exports", i, "from"),
                node=info.qual,
                hint=f"公開されている名前: {', '.join(sorted(names)) or 'なし'}（または ノードID.出力名）",
            )
