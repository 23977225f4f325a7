"""One 検証/ドライラン of the 設計 page's editor text, shown next to the nodes it concerns, and
the plan's graph drawn from that text (nodes with errors in red).

Nothing here changes Session State; ``keiri_agent.ui.design.page`` keeps the last check and
calls these with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from keiri_agent.errors import BlockError
from keiri_agent.plan import (
    DryRunFinding,
    DryRunReport,
    PlanIssue,
    ValidationReport,
    parse_source,
)
from keiri_agent.ui.plan_graph import plan_dot

__all__ = ["PlanCheck", "node_labels", "render_check", "render_graph"]

_KIND_NAMES = {"block": "ブロック", "loop": "ループ", "subflow": "サブフロー"}
_STATUS_MARKS = {"ok": "✅", "skipped": "⏭️", "failed": "❌"}


@dataclass
class PlanCheck:
    """One 検証/ドライラン of the editor's text."""

    text: str
    validation: ValidationReport
    dry_run: DryRunReport | None = None  # only for a valid plan


def node_labels(plan: Any) -> Iterator[tuple[str, str]]:
    """``(qualified id, kind or block)`` of every node, loop bodies as ``loop/child``."""

    def walk(graph: Any, prefix: str) -> Iterator[tuple[str, str]]:
        for node in graph if isinstance(graph, list) else []:
            if not isinstance(node, Mapping) or not isinstance(node.get("id"), str):
                continue
            kind = str(node.get("type") or "block")
            what = str(node.get("block")) if kind == "block" else _KIND_NAMES.get(kind, kind)
            yield prefix + node["id"], what
            body = node.get("body")
            if isinstance(body, Mapping) and isinstance(body.get("plan"), Mapping):
                yield from walk(body["plan"].get("graph"), f"{prefix}{node['id']}/")

    yield from walk(plan.get("graph") if isinstance(plan, Mapping) else None, "")


def _issue(issue: PlanIssue | DryRunFinding) -> None:
    where = [f"{issue.line} 行目" if issue.line else "", issue.path]
    place = "、".join(w for w in where if w)
    text = f"**{issue.code}**: {issue.message}" + (f"（{place}）" if place else "")
    st.error(text, icon="❌")
    if issue.hint:
        st.caption(f"💡 {issue.hint}")


def render_check(check: PlanCheck, current_text: str) -> None:
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
    for name in [*nodes, *(n for n in by_node if n not in nodes)]:
        dry_node = dry.node(name) if dry is not None else None
        issues = by_node.get(name, [])
        mark = "❌" if issues else (_STATUS_MARKS[dry_node.status] if dry_node else "・")
        with st.container(border=True):
            st.markdown(f"{mark} **{name}** — {nodes.get(name, '不明なノード')}")
            for item in issues:
                _issue(item)
            if dry_node is not None:
                for note in dry_node.notes:
                    st.caption(note)
                if dry_node.inputs or dry_node.outputs:
                    with st.expander("ドライランの入出力（サンプル値）"):
                        st.json({"入力": dry_node.inputs, "出力": dry_node.outputs})
    for warning in report.warnings:
        st.caption(
            f"⚠️ {warning.describe()}（{warning.hint}）" if warning.hint else warning.describe()
        )


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
