"""The validator's reference checks: every ``${...}`` in a value, a condition or ``vars``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.schema import check_value as _value_problem
from keiri_agent.blocks.schema import compatible, descend, type_of_value
from keiri_agent.errors import BlockError
from keiri_agent.plan._dsl.expr import compile_when
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.issues import Loc, format_path
from keiri_agent.plan._dsl.models import RESERVED_ROOTS, when_raw
from keiri_agent.plan._dsl.refs import Reference, iter_references, single_reference
from keiri_agent.plan._graph.scope import UNRESOLVED, NodeInfo, StaticScope
from keiri_agent.plan._graph.scope import types_label as _types
from keiri_agent.plan._validate.state import CheckState
from keiri_agent.plan._validate.state import close_matches as _close
from keiri_agent.plan._validate.state import port_hint as _port_hint

__all__ = ["check_value", "check_vars", "check_when", "resolve"]


def check_when(
    state: CheckState, when: Any, loc: Loc, scope: StaticScope, info: NodeInfo | None
) -> None:
    """Check a condition's syntax and every reference in it."""
    try:
        expression = compile_when(when_raw(when))
    except BlockError as exc:
        state.issue(
            IssueCode.INVALID_EXPRESSION,
            exc.message,
            loc,
            node=info.qual if info else None,
            hint=exc.hint or "比較は ==, !=, >, >=, <, <=、論理は and/or/not で書けます。",
        )
        return
    for ref in expression.references:
        resolve(state, ref, scope, loc, info)


def check_value(
    state: CheckState,
    value: Any,
    loc: Loc,
    scope: StaticScope,
    info: NodeInfo | None,
    target: Mapping[str, Any] | None,
    *,
    literal_check: bool = True,
) -> Any:
    """Check every reference in ``value``; return the value's schema (or UNRESOLVED)."""
    node = info.qual if info else None
    try:
        found = list(iter_references(value))
    except BlockError as exc:
        state.issue(IssueCode.INVALID_REFERENCE, exc.message, loc, node=node, hint=exc.hint)
        return UNRESOLVED
    schemas = [resolve(state, ref, scope, loc, info) for _, ref in found]
    single = single_reference(value) if isinstance(value, str) else None
    if not found:
        schema: Any = {"type": type_of_value(value)}
        if target is not None and literal_check:
            problem = _value_problem(value, target)
            if problem:
                state.issue(
                    IssueCode.INVALID_INPUT_VALUE,
                    f"{_place(state, loc, node)} の値が入力の型に合いません: {problem}",
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
        state.issue(
            IssueCode.TYPE_MISMATCH,
            f"{state.words.reference(value) if single is not None else value} の型"
            f"（{_types(schema)}）は {_place(state, loc, node)} の型（{_types(target)}）と合いません。",
            loc,
            node=node,
            hint="参照する出力を変えるか、型を変換するブロックを間に入れてください。",
        )
    return schema


def resolve(
    state: CheckState, ref: Reference, scope: StaticScope, loc: Loc, info: NodeInfo | None
) -> Any:
    """The schema ``ref`` reads (None: unknown, UNRESOLVED: reported); marks outputs used."""
    node = info.qual if info else None
    root = ref.root

    def fail(message: str, hint: str, code: str = IssueCode.UNRESOLVED_REFERENCE) -> Any:
        state.issue(code, message, loc, node=node, hint=hint)
        return UNRESOLVED

    if root in RESERVED_ROOTS and not ref.path:
        return fail(
            f"{ref.text} には名前が必要です（例: ${{{root}.名前}}）。",
            "",
            IssueCode.INVALID_REFERENCE,
        )
    if root == "vars":
        name = str(ref.path[0])
        if name not in state.plan.vars:
            return fail(
                f"{ref.text}: vars に '{name}' が定義されていません。",
                f"Plan の vars に {name}: を追加してください。{_close(name, state.plan.vars)}",
            )
        schema = _var_schema(state, name)
    elif root == "env":
        name = str(ref.path[0])
        if name not in state.env.environ:
            state.issue(
                IssueCode.ENV_NOT_SET,
                f"{ref.text}: 環境変数 {name} が設定されていません。",
                loc,
                node=node,
                severity="warning",
                hint=f"実行前に環境変数 {name} を設定してください。",
            )
        schema = {"type": "string"}
    elif root == "config":
        current: Any = state.env.config
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
        if found.answer == "missing":
            if root in state.dropped:
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
        where, target = found.scope, found.value
        assert where is not None
        if found.loop:
            schema = descend(target, ref.path)
            return {"type": "integer"} if ref.length else schema
        if target.open:
            return None
        if not ref.path:
            return fail(
                f"{state.words.node(root)} のどの出力かが書かれていません。",
                f"'{root}' の出力: {', '.join(target.outputs) or 'なし'}",
                IssueCode.INVALID_REFERENCE,
            )
        name = str(ref.path[0])
        if name not in target.outputs:
            return fail(
                f"{state.words.node(root)} に出力 '{name}' はありません。",
                f"'{root}' の出力: {', '.join(target.outputs) or 'なし'}。{_close(name, target.outputs)}",
            )
        state.used.add((id(where), root, name))
        schema = descend(target.outputs[name], ref.path[1:])
        if ref.length:
            return {"type": "integer"}
        return schema
    schema = descend(schema, ref.path[1:])
    return {"type": "integer"} if ref.length else schema


def _var_schema(state: CheckState, name: str) -> dict[str, Any] | None:
    value = state.plan.vars.get(name)
    if value is None:
        return None
    if isinstance(value, str) and single_reference(value) is not None:
        return None
    return {"type": type_of_value(value)}


def check_vars(state: CheckState) -> None:
    """``vars`` may read ``env`` and ``config`` only."""
    assert state.top is not None
    for name, value in state.plan.vars.items():
        try:
            found = list(iter_references(value))
        except BlockError as exc:
            state.issue(IssueCode.INVALID_REFERENCE, exc.message, ("vars", name), hint=exc.hint)
            continue
        for _, ref in found:
            if ref.root not in ("env", "config"):
                state.issue(
                    IssueCode.INVALID_VAR_REFERENCE,
                    f"vars.{name} の {ref.text} は使えません。vars から参照できるのは env と config だけです。",
                    ("vars", name),
                    hint="ノードの出力を使う場合は、ノードの in で直接参照してください。",
                )
            else:
                resolve(state, ref, state.top, ("vars", name), None)


def _place(state: CheckState, loc: Loc, node: str | None) -> str:
    """``loc`` as people read it: a node's input by its label (``graph[1].in.table`` →
    ``「照合」の入力「表」（table）``), else the YAML path."""
    parts = [str(p) for p in loc]
    if len(parts) >= 2 and parts[-2] == "in":
        return state.words.place(node, f"in.{parts[-1]}")
    return format_path(loc)
