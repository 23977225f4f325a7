"""Validator rules for block nodes and the plan's UI (seed 002 §6 1/4/5, seed 004 §9).

Generic rules apply to every block node (existence, ``in``/``out`` keys, required inputs,
literal values against port schemas, reference types); ``BLOCK_RULES`` adds the checks a
particular block needs (``ai.process_llm``, ``ui.interactive_input``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from keiri_agent.blocks.schema import SchemaRefError, resolve_port
from keiri_agent.blocks.semver import split_block_ref
from keiri_agent.blocks.spec import port_is_required
from keiri_agent.blocks.ui.field_types import FIELD_TYPES
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.models import LEGACY_UI_PREFIXES, BlockNode
from keiri_agent.plan._dsl.refs import iter_references
from keiri_agent.plan._validate.references import check_value
from keiri_agent.plan._validate.state import CheckState

if TYPE_CHECKING:
    from keiri_agent.plan._graph.scope import NodeInfo, StaticScope

__all__ = ["BLOCK_RULES", "REQUIREMENT_TYPES", "check_block_node", "check_ui"]

REQUIREMENT_TYPES = frozenset(FIELD_TYPES)


def _has_refs(value: Any) -> bool:
    try:
        return any(True for _ in iter_references(value))
    except Exception:
        return True


def check_block_node(state: CheckState, info: NodeInfo, scope: StaticScope) -> None:
    node = info.node
    assert isinstance(node, BlockNode)
    loc = info.loc
    spec = info.spec
    if spec is None:
        block_id, version = split_block_ref(node.block)
        known = state.env.registry.versions(block_id)
        if known:
            code, message = (
                IssueCode.UNKNOWN_BLOCK_VERSION,
                f"ブロック {block_id} にバージョン {version} はありません。",
            )
            hint = f"利用可能なバージョン: {', '.join(s.version for s in known)}"
        elif block_id.startswith(LEGACY_UI_PREFIXES):
            code, message = IssueCode.UNKNOWN_BLOCK, f"{block_id} は廃止された UI ブロックです。"
            hint = "`keiri-agent plan migrate FILE` で ui.interactive_input に書き換えられます。"
        else:
            code, message = IssueCode.UNKNOWN_BLOCK, f"ブロック '{block_id}' は登録されていません。"
            close = [s.id for s in state.env.registry.search(block_id, limit=3)]
            hint = (f"似たブロック: {', '.join(close)}。" if close else "") + (
                "`keiri-agent blocks list` で一覧できます。"
            )
        state.issue(code, message, (*loc, "block"), node=info.qual, hint=hint)
        for key, value in node.inputs.items():  # references are still checked
            check_value(state, value, (*loc, "in", key), scope, info, None)
        return
    block_id, version = split_block_ref(node.block)
    latest = state.env.registry.find(block_id)
    if version is not None and latest is not None and latest.semver.major > spec.semver.major:
        state.issue(
            IssueCode.BLOCK_VERSION_OUTDATED,
            f"{node.block} は固定されていますが、互換性のない新版 {latest.ref} があります。",
            (*loc, "block"),
            node=info.qual,
            severity="warning",
            hint="新版の入出力を確認し、問題なければ版を上げてください。",
        )
    rule = BLOCK_RULES.get(spec.id)
    covered = rule[0] if rule else frozenset()
    ports: list[tuple[str, Iterable[str], Collection[str], str, str, str]] = [
        (IssueCode.UNKNOWN_INPUT, node.inputs, list(spec.inputs), "入力", "使える入力", "in"),
        (IssueCode.UNKNOWN_OUTPUT, node.out, list(spec.outputs), "出力", "出力", "out"),
    ]
    for issue, given, names, what, label, key in ports:
        text = f"{state.words.block(spec.id)} に{what} '{{name}}' はありません。"
        state.unknown_names(issue, given, names, text, (*loc, key), info.qual, label)
    for port_name, port in spec.inputs.items():
        if port_is_required(port) and port_name not in node.inputs and port_name not in covered:
            state.issue(
                IssueCode.MISSING_REQUIRED_INPUT,
                f"{state.words.block(spec.id)} の必須入力"
                f" {state.words.port(spec.id, port_name)} がありません。",
                (*loc, "in") if node.inputs else loc,
                node=info.qual,
                hint=f"in に {port_name}: を追加してください"
                + (f"（{port['description']}）。" if port.get("description") else "。"),
            )
    for key, value in node.inputs.items():
        declared = spec.inputs.get(key)
        target: dict[str, Any] | None = None
        if declared is not None:
            try:
                target = resolve_port(declared)
            except SchemaRefError as exc:
                state.issue(
                    IssueCode.SCHEMA_REF_UNRESOLVED,
                    exc.message,
                    (*loc, "in", key),
                    node=info.qual,
                    hint=exc.hint,
                )
        check_value(
            state, value, (*loc, "in", key), scope, info, target, literal_check=key not in covered
        )
    if rule:
        rule[1](state, info)


def _process_llm(state: CheckState, info: NodeInfo) -> None:
    node = info.node
    assert isinstance(node, BlockNode)
    schema = node.inputs.get("output_schema")
    if schema is None or (not _has_refs(schema) and (not isinstance(schema, dict) or not schema)):
        state.issue(
            IssueCode.PROCESS_LLM_SCHEMA,
            f"{state.words.block(node.block)} には空でない"
            f" {state.words.port(node.block, 'output_schema')}（オブジェクト）が必要です。",
            (*info.loc, "in", "output_schema")
            if "output_schema" in node.inputs
            else (*info.loc, "in"),
            node=info.qual,
            hint="例: output_schema: {results: {type: object, properties: {total: number}}}",
        )
    if not any(node.inputs.get(k) not in (None, "") for k in ("prompt", "instruction")):
        state.issue(
            IssueCode.PROCESS_LLM_PROMPT,
            f"{state.words.block(node.block)} には {state.words.port(node.block, 'prompt')} か"
            f" {state.words.port(node.block, 'instruction')} のどちらかが必要です。",
            (*info.loc, "in"),
            node=info.qual,
            hint='in に prompt: "..."（LLM への指示）を追加してください。',
        )


def _interactive_input(state: CheckState, info: NodeInfo) -> None:
    node = info.node
    assert isinstance(node, BlockNode)
    requirements = node.inputs.get("requirements")
    loc = (*info.loc, "in", "requirements")
    if requirements is None or _has_refs(requirements):
        return
    if not isinstance(requirements, list):
        state.issue(
            IssueCode.INVALID_REQUIREMENT,
            "requirements はリストで書いてください。",
            loc,
            node=info.qual,
            hint="例: requirements: [{id: workbook, type: file, label: Excel}]",
        )
        return
    seen: set[str] = set()
    for i, item in enumerate(requirements):
        where = (*loc, i)
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            state.issue(
                IssueCode.INVALID_REQUIREMENT,
                f"requirements[{i}] には id（文字列）が必要です。",
                where,
                node=info.qual,
                hint="各要素は {id, type, label} を持つマッピングです。",
            )
            continue
        rid, rtype = item["id"], item.get("type")
        if rid in seen:
            state.issue(
                IssueCode.DUPLICATE_REQUIREMENT_ID,
                f"requirements の id '{rid}' が重複しています。",
                (*where, "id"),
                node=info.qual,
                hint="同じノード内の requirements の id は一意にしてください。",
            )
        seen.add(rid)
        if not isinstance(rtype, str) or rtype not in REQUIREMENT_TYPES:
            state.issue(
                IssueCode.INVALID_REQUIREMENT,
                f"requirements '{rid}' の type '{rtype}' は使えません。",
                (*where, "type"),
                node=info.qual,
                hint=f"使える type: {', '.join(sorted(REQUIREMENT_TYPES))}",
            )
            continue
        if rtype in ("select", "enum") and not item.get("options"):
            state.issue(
                IssueCode.INVALID_REQUIREMENT,
                f"requirements '{rid}'（{rtype}）には options が必要です。",
                where,
                node=info.qual,
                hint="options: [選択肢1, 選択肢2] を追加してください。",
            )
        previous = state.requirement_types.get(rid)
        if previous is not None and previous[0] != rtype:
            state.issue(
                IssueCode.REQUIREMENT_TYPE_CONFLICT,
                f"requirements '{rid}' の type が {previous[1]} では {previous[0]}、ここでは {rtype} です。",
                (*where, "type"),
                node=info.qual,
                hint="同じ id の入力は Plan 全体で同じ type にしてください（別物なら id を変えてください）。",
            )
        elif previous is None:
            state.requirement_types[rid] = (str(rtype), info.qual)


Rule = Callable[[CheckState, "NodeInfo"], None]
# block id → (input ports the rule checks itself, the rule)
BLOCK_RULES: dict[str, tuple[frozenset[str], Rule]] = {
    "ai.process_llm": (frozenset({"output_schema"}), _process_llm),
    "ui.interactive_input": (frozenset({"requirements"}), _interactive_input),
}


def check_ui(state: CheckState) -> None:
    _check_var_labels(state)
    top = state.top
    if top is None:
        return
    layout = state.plan.ui.layout
    seen: set[str] = set()
    for i, entry in enumerate(layout):
        loc = ("ui", "layout", i)
        if entry in seen:
            state.issue(
                IssueCode.UI_LAYOUT_DUPLICATE,
                f"ui.layout に '{entry}' が二度あります。",
                loc,
                severity="warning",
                hint="重複を削除してください。",
            )
        seen.add(entry)
        if entry not in top.nodes:
            inside = top.hidden.get(entry)
            state.issue(
                IssueCode.UI_LAYOUT_UNKNOWN_NODE,
                f"ui.layout の '{entry}' は graph の最上位ノードではありません"
                + (f"（ループ {inside} の中にあります）。" if inside else "。"),
                loc,
                node=entry,
                hint=f"graph のノード: {', '.join(top.nodes)}",
            )
    if not layout:
        return
    for node_id, info in top.nodes.items():
        if info.spec is not None and info.spec.is_ui and node_id not in seen:
            state.issue(
                IssueCode.UI_LAYOUT_MISSING,
                f"UI ノード '{node_id}' が ui.layout にありません。",
                ("ui", "layout"),
                node=node_id,
                severity="warning",
                hint="表示順を決めるため ui.layout に追加してください。",
            )


def _check_var_labels(state: CheckState) -> None:
    """Each ``ui.vars`` label names a var the plan declares (a typo would leave a var unnamed)."""
    for name in state.plan.ui.vars:
        if name not in state.plan.vars:
            state.issue(
                IssueCode.UI_VAR_UNKNOWN,
                f"ui.vars の '{name}' は vars で定義されていません。",
                ("ui", "vars", name),
                hint=f"vars の名前: {state.plan.var_listing()}。綴りを直すか、vars に定義してください。",
            )
