"""Validator rules for loop and subflow nodes and for ``exports`` (seed 002 §5.2, §5.3, §6).

Loop bodies are checked as their own scope (the loop variables bound, the enclosing nodes
visible); a while condition may read the body's nodes (the previous iteration). Subflows are
validated as plans of their own, their errors reported under the calling node, and their
``inputs``/``exports`` checked against the called plan's ``vars``/``exports``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent.blocks.schema import descend, json_types, type_of_value
from keiri_agent.errors import BlockError
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.models import (
    RESERVED_ROOTS,
    Export,
    LoopNode,
    SubflowNode,
)
from keiri_agent.plan._dsl.refs import bare_reference, single_reference
from keiri_agent.plan._graph.names import subflow_said
from keiri_agent.plan._graph.scope import UNRESOLVED
from keiri_agent.plan._graph.scope import types_label as _types
from keiri_agent.plan._graph.subflows import call_cycle, call_too_deep
from keiri_agent.plan._validate.references import check_value, check_when, resolve
from keiri_agent.plan._validate.state import CheckScope, CheckState

if TYPE_CHECKING:
    from keiri_agent.plan._dsl.issues import Loc
    from keiri_agent.plan._graph.scope import NodeInfo, StaticScope

__all__ = ["check_export", "check_loop", "check_subflow"]


def check_loop(
    state: CheckState,
    node: LoopNode,
    info: NodeInfo,
    scope: StaticScope,
    check_scope: CheckScope,
) -> None:
    """A loop's input and variables, its body (``check_scope``), ``while`` and its exports."""
    body = info.body
    assert body is not None
    if node.foreach is not None:
        fe = node.foreach
        loc = (*info.loc, "foreach", "input")
        schema = check_value(state, fe.input, loc, scope, info, None)
        if isinstance(fe.input, str) and single_reference(fe.input) is None:
            schema = {"type": "string"}
        elif not isinstance(fe.input, str):
            schema = {"type": type_of_value(fe.input)}
        types = json_types(schema) if schema is not UNRESOLVED else None
        if types is not None and "array" not in types:
            state.issue(
                IssueCode.TYPE_MISMATCH,
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
            if var in RESERVED_ROOTS or var in state.seen_ids:
                state.issue(
                    IssueCode.LOOP_VAR_CONFLICT,
                    f"ループ変数 '{var}' は予約語かノード ID と重なっています。",
                    (*info.loc, "foreach"),
                    node=info.qual,
                    hint="itemVar / indexVar には他と重ならない名前を付けてください。",
                )
    check_scope(body)
    if node.while_ is not None:
        check_when(state, node.while_.condition, (*info.loc, "while", "condition"), body, info)
    for i, export in enumerate(node.body.plan.exports):
        check_export(
            state,
            export,
            body,
            (*info.loc, "body", "plan", "exports", i),
            IssueCode.LOOP_UNKNOWN_EXPORT,
        )
    names = {e.as_ for e in node.body.plan.exports}
    for name in node.out.names(node.body.plan.exports):
        if name not in names:
            state.issue(
                IssueCode.LOOP_UNKNOWN_COLLECT,
                f"out.collect の '{name}' は body.plan.exports にありません。",
                (*info.loc, "out", "collect"),
                node=info.qual,
                hint=f"exports の as に定義した名前を指定してください（定義済み: {', '.join(sorted(names)) or 'なし'}）。",
            )


def check_export(
    state: CheckState, export: Export, scope: StaticScope, loc: Loc, code: str
) -> None:
    try:
        ref = bare_reference(export.from_)
    except BlockError as exc:
        state.issue(code, exc.message, (*loc, "from"), hint=exc.hint)
        return
    if ref is None or ref.root not in scope.nodes or not ref.path:
        state.issue(
            code,
            f"exports の from '{export.from_}' はこの graph のノード出力（ノードID.出力名）ではありません。",
            (*loc, "from"),
            hint=f"この graph のノード: {', '.join(scope.nodes) or 'なし'}",
        )
        return
    resolve(state, ref, scope, (*loc, "from"), None)


def check_subflow(state: CheckState, node: SubflowNode, info: NodeInfo, scope: StaticScope) -> None:
    call_loc = (*info.loc, "call")
    for key, value in node.call.inputs.items():
        check_value(state, value, (*call_loc, "inputs", key), scope, info, None)
    chain = list(zip(state.stack, state.stack_files, strict=True))
    too_deep = call_too_deep(chain, node.call.plan_id)
    if too_deep is not None:
        state.issue(
            too_deep.code,
            too_deep.message,
            (*call_loc, "plan_id"),
            node=info.qual,
            hint=too_deep.hint,
        )
        return
    loaded = state.env.subflows.load(node.call.plan_id)
    cycle = call_cycle(chain, node.call.plan_id, loaded)
    if cycle is not None:
        state.issue(
            cycle.code, cycle.message, (*call_loc, "plan_id"), node=info.qual, hint=cycle.hint
        )
        return
    sub, source = loaded.plan, loaded.source
    if source is None:
        assert loaded.error is not None
        state.issue(
            loaded.error.code,
            loaded.error.message,
            (*call_loc, "plan_id"),
            node=info.qual,
            hint=loaded.error.hint,
        )
        return
    said = subflow_said(node.call.plan_id, sub, node)
    for err in state.validate_subflow(source).errors:
        state.report.add(
            err.model_copy(
                update={
                    "message": f"{said}: {err.message}",
                    "node_id": f"{info.qual}/{err.node_id}" if err.node_id else info.qual,
                }
            )
        )
    if sub is None:
        return
    state.unknown_names(
        IssueCode.SUBFLOW_UNKNOWN_INPUT,
        node.call.inputs,
        list(sub.vars),
        f"{said} は入力 '{{name}}' を受け取りません（vars に未定義）。",
        (*call_loc, "inputs"),
        info.qual,
        "受け取れる入力",
    )
    for key, value in sub.vars.items():
        if value is None and key not in node.call.inputs:
            state.issue(
                IssueCode.MISSING_REQUIRED_INPUT,
                f"{said} に渡す{sub.var_text(key)}がありません（既定値がないため必須です）。",
                call_loc,
                node=info.qual,
                hint=f"YAML では call.inputs: に {key}: （値）を書き足してください。",
            )
    names = {e.as_ for e in sub.exports}
    for i, export in enumerate(node.out.exports):
        top_ids = {n.id for n in sub.graph}
        root = export.from_.split(".", 1)[0]
        if export.from_ not in names and not ("." in export.from_ and root in top_ids):
            state.issue(
                IssueCode.SUBFLOW_UNKNOWN_EXPORT,
                f"{said} は '{export.from_}' を公開していません。",
                (*info.loc, "out", "exports", i, "from"),
                node=info.qual,
                hint=f"公開されている名前: {', '.join(sorted(names)) or 'なし'}（または ノードID.出力名）",
            )
