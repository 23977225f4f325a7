"""One 検証/ドライラン of the 設計 page's editor text, shown next to the nodes it concerns, and
the plan's graph drawn from that text (nodes with errors in red).

Each node is named as the plan names it for people (``plan_names``: its description, else its
block's label), with its block's label; its id and block id, which the YAML is written with, are
in the box's expander 詳細: YAML での名前. A finding says its message, its YAML line and its
code; the dry run's sample values are a table of the ports' labels and each value in words
(``screen_words.shown_sample``), never JSON.

Nothing here changes Session State; ``keiri_agent.ui.design.page`` keeps the last check and
calls these with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import streamlit as st
from pydantic import ValidationError

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.plan import (
    DryRunFinding,
    DryRunReport,
    Plan,
    PlanIssue,
    ValidationReport,
    description_name,
    parse_source,
    plan_names,
)
from keiri_agent.ui.plan_graph import plan_dot
from keiri_agent.ui.screen_words import shown_sample, shown_table

__all__ = [
    "DETAILS_TITLE",
    "PlanCheck",
    "block_word",
    "issue_text",
    "node_labels",
    "node_namer",
    "port_word",
    "raw_namer",
    "render_check",
    "render_graph",
]

DETAILS_TITLE: Final = "詳細: YAML での名前"
_KIND_NAMES: Final = {"block": "ブロック", "loop": "繰り返し", "subflow": "サブフロー"}
_STATUS_MARKS: Final = {"ok": "✅", "skipped": "⏭️", "failed": "❌"}
# What a loop's dry run shows besides its exports (``_dryrun``: ``foreach.input``, ...).
_CONTROL_WORDS: Final = {"foreach.input": "繰り返す一覧", "while.condition": "続ける条件"}


@dataclass
class PlanCheck:
    """One 検証/ドライラン of the editor's text."""

    text: str
    validation: ValidationReport
    dry_run: DryRunReport | None = None  # only for a valid plan


def node_labels(plan: Any) -> Iterator[tuple[str, str]]:
    """``(qualified id, kind or block id)`` of every node, loop bodies as ``loop/child``."""
    for qualified, node in _raw_nodes(plan):
        yield qualified, _what(node)


def _raw_nodes(plan: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(qualified id, node mapping)`` of every node of a raw plan, loop bodies as ``loop/child``."""

    def walk(graph: Any, prefix: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for node in graph if isinstance(graph, list) else []:
            if not isinstance(node, Mapping) or not isinstance(node.get("id"), str):
                continue
            yield prefix + node["id"], node
            body = node.get("body")
            if isinstance(body, Mapping) and isinstance(body.get("plan"), Mapping):
                yield from walk(body["plan"].get("graph"), f"{prefix}{node['id']}/")

    yield from walk(plan.get("graph") if isinstance(plan, Mapping) else None, "")


def block_word(what: str, registry: BlockRegistry) -> str:
    """A node's block (or kind) as people call it: ``BlockSpec.shown_name``, the rule of every
    place that names a block."""
    if what in _KIND_NAMES:
        return _KIND_NAMES[what]
    spec = registry.find(what.split("@", 1)[0])
    return spec.shown_name if spec is not None else "不明なブロック"


def node_namer(check: PlanCheck | None, registry: BlockRegistry) -> Callable[[str, str], str]:
    """``(qualified id, kind or block) -> name``: the plan's names when the plan parsed (its
    node descriptions), else the block's label."""
    return _namer(check.validation.plan if check is not None else None, registry)


def raw_namer(raw: Any, registry: BlockRegistry) -> Callable[[str], str]:
    """``qualified id -> name`` of the nodes of a plan's raw mapping (a generated attempt's,
    which may not parse: then each node by its own description, as ``plan_names`` names it,
    else by its block's name); 不明なノード for one it lacks."""
    try:
        plan = Plan.model_validate(raw) if isinstance(raw, Mapping) else None
    except ValidationError:
        plan = None
    namer, nodes = _namer(plan, registry), dict(_raw_nodes(raw))

    def name(node_id: str) -> str:
        node = nodes.get(node_id)
        if node is None:
            return "不明なノード"
        description = node.get("description")
        own = description_name(description) if isinstance(description, str) else None
        return own if plan is None and own is not None else namer(node_id, _what(node))

    return name


def _what(node: Mapping[str, Any]) -> str:
    kind = str(node.get("type") or "block")
    return str(node.get("block")) if kind == "block" else kind


def _namer(plan: Plan | None, registry: BlockRegistry) -> Callable[[str, str], str]:
    names = plan_names(plan, registry) if plan is not None else None

    def name(node_id: str, what: str) -> str:
        called = names.node(node_id) if names is not None else node_id
        # plan_names names a node whose block it does not know by its id: not for the screen
        return called if called != node_id.split("/")[-1] else block_word(what, registry)

    return name


def issue_text(issue: PlanIssue | DryRunFinding) -> str:
    """A finding as the page says it: its message, then its YAML line and its code."""
    where = f"{issue.line} 行目、" if issue.line else ""
    return f"{issue.message}（{where}コード {issue.code}）"


def _issue(issue: PlanIssue | DryRunFinding) -> None:
    st.error(issue_text(issue), icon="❌")
    if issue.hint:
        st.caption(f"💡 {issue.hint}")


def port_word(block: str | None, port: str, registry: BlockRegistry) -> str | None:
    """How the page names port ``port`` of a node whose block (or kind) is ``block``, read
    from a raw plan (one that may not parse): the port's label, or what a loop's value is;
    None where neither is known (a loop's or a subflow's export: the plan's own name)."""
    if port in _CONTROL_WORDS:
        return _CONTROL_WORDS[port]
    spec = registry.find(block.split("@", 1)[0]) if block else None
    if spec is not None and (port in spec.inputs or port in spec.outputs):
        return spec.port_label(port)
    return None


def _samples(
    block: str | None, sides: Mapping[str, Mapping[str, Any]], registry: BlockRegistry
) -> list[dict[str, str]]:
    """A node's dry-run values (``{"入力": inputs, "出力": outputs}``): 向き, 項目 (the
    port's label) and サンプル値 in words."""
    rows = []
    for side, values in sides.items():
        for number, (port, value) in enumerate(values.items(), start=1):
            rows.append(
                {
                    "向き": side,
                    "項目": port_word(block, port, registry) or f"値 {number}",
                    "サンプル値": shown_sample(value),
                }
            )
    return rows


def render_check(check: PlanCheck, current_text: str, registry: BlockRegistry) -> None:
    """Validation errors and dry-run results, each next to the node it concerns."""
    report, dry = check.validation, check.dry_run
    if check.text != current_text:
        st.warning(
            "YAML は検証の後に編集されています。もう一度「検証/ドライラン」を押してください。"
        )
    findings = dry.findings if dry is not None else []
    if report.valid and dry is not None and dry.ok:
        st.success(f"検証エラー 0 件、ドライランも問題ありません（{dry.duration_ms:.0f} ms）。")
    elif report.valid:
        st.warning(f"検証は通りましたが、ドライランで {len(findings)} 件の問題があります。")
    else:
        st.error(f"検証エラーが {len(report.errors)} 件あります。該当するノードの下に表示します。")
    items: list[PlanIssue | DryRunFinding] = [*report.errors, *findings]
    by_node: dict[str, list[PlanIssue | DryRunFinding]] = {}
    for item in items:
        if item.node_id is not None:
            by_node.setdefault(item.node_id, []).append(item)
    overall = [item for item in items if item.node_id is None]
    if overall:
        with st.container(border=True):
            st.markdown("**Plan 全体**")
            for item in overall:
                _issue(item)
    nodes = dict(node_labels(parse_source(check.text).raw))
    name = node_namer(check, registry)
    for node_id in [*nodes, *(n for n in by_node if n not in nodes)]:
        dry_node = dry.node(node_id) if dry is not None else None
        issues = by_node.get(node_id, [])
        mark = "❌" if issues else (_STATUS_MARKS[dry_node.status] if dry_node else "・")
        what = nodes.get(node_id)
        with st.container(border=True):
            if what is None:
                st.markdown(f"{mark} **不明なノード**")
            else:
                called, block = name(node_id, what), block_word(what, registry)
                st.markdown(f"{mark} **{called}**" + (f" — {block}" if block != called else ""))
            with st.expander(DETAILS_TITLE):
                st.markdown(f"ノード ID `{node_id}`" + (f"、ブロック `{what}`" if what else ""))
            for item in issues:
                _issue(item)
            if dry_node is not None:
                for note in dry_node.notes:
                    st.caption(note)
                if dry_node.inputs or dry_node.outputs:
                    with st.expander("ドライランの入出力（サンプル値）"):
                        sides = {"入力": dry_node.inputs, "出力": dry_node.outputs}
                        rows = _samples(dry_node.block, sides, registry)
                        st.dataframe(shown_table(rows), hide_index=True)
    for warning in report.warnings:
        text = f"⚠️ {issue_text(warning)}"
        st.caption(f"{text} 💡 {warning.hint}" if warning.hint else text)


def render_graph(text: str, errors: Sequence[PlanIssue]) -> None:
    """The plan's DAG, drawn in the browser from DOT; nodes with errors in red."""
    source = parse_source(text)
    if source.raw is None:
        st.caption("YAML を解釈できないため、グラフを描けません。")
        return
    try:
        dot = plan_dot(source.raw, highlight={e.node_id for e in errors if e.node_id})
    except BlockError as exc:
        st.caption(f"{exc.message} {exc.hint}")
        return
    st.graphviz_chart(dot)
