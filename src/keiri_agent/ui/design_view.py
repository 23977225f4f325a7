"""Display parts of the 設計 page: the Top-K candidates table, the chat turns, the summary of
missing items, validation and dry-run results grouped by node, and the plan's graph.

Nothing here changes Session State; ``keiri_agent.ui.views.design`` owns the page's state and
actions and calls these with what it holds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.design.chat import DesignChat
from keiri_agent.design.models import GeneratedPlan
from keiri_agent.design.requirements import iter_nodes
from keiri_agent.design.topk import RetrievalResult
from keiri_agent.errors import BlockError
from keiri_agent.plan import DryRunFinding, DryRunReport, PlanIssue, ValidationReport, parse_source
from keiri_agent.ui.plan_graph import plan_dot

__all__ = [
    "CheckOutcome",
    "candidate_rows",
    "missing_summary",
    "node_labels",
    "render_candidates",
    "render_check",
    "render_generation",
    "render_graph",
    "render_missing",
    "render_turns",
]

UI_PREFIX = "ui."
_KIND_NAMES = {"block": "ブロック", "loop": "ループ", "subflow": "サブフロー"}
_STATUS_MARKS = {"ok": "✅", "skipped": "⏭️", "failed": "❌"}


@dataclass
class CheckOutcome:
    """One 検証/ドライラン of the editor's text."""

    text: str
    validation: ValidationReport
    dry_run: DryRunReport | None = None  # only for a valid plan


def _ports(ports: Mapping[str, Any]) -> str:
    parts = []
    for name, port in ports.items():
        mark = "*" if isinstance(port, Mapping) and port.get("required") else ""
        kind = port.get("type", "any") if isinstance(port, Mapping) else "any"
        parts.append(f"{name}{mark}: {kind}")
    return ", ".join(parts)


def candidate_rows(result: RetrievalResult, registry: BlockRegistry) -> list[dict[str, Any]]:
    """One row per candidate block: id, category, input/output keys (``*`` = required), description."""
    rows = []
    for number, ranked in enumerate(result.candidates, start=1):
        entry = registry.get(ranked.id).catalog_entry()
        rows.append(
            {
                "順位": number,
                "ブロック": entry["id"],
                "カテゴリ": entry["category"],
                "入力": _ports(entry["inputs"]),
                "出力": _ports(entry["outputs"]),
                "説明": entry["description"].splitlines()[0] if entry["description"] else "",
                "スコア": round(ranked.score, 3),
            }
        )
    return rows


def render_candidates(result: RetrievalResult, registry: BlockRegistry) -> None:
    mode = {"bm25": "BM25", "dense": "埋め込み", "hybrid": "BM25＋埋め込み"}[result.mode_used]
    st.caption(
        f"{len(result.candidates)} 件（全 {len(result.ranking)} ブロック中、検索: {mode}）。"
        "自動生成では LLM にこの候補だけを示します。入力の * は必須です。"
    )
    if result.note:
        st.info(result.note, icon="ℹ️")
    st.dataframe(candidate_rows(result, registry), hide_index=True, width="stretch")
    budget = (
        f"トークン予算 {result.token_budget:,} のうち約 {result.candidate_tokens:,} を使用。"
        if result.token_budget
        else ""
    )
    st.caption(f"{budget}{result.cut_summary()}")
    if result.cut:
        rows = [{"ブロック": c.id, "順位": c.rank, "除外の理由": c.detail} for c in result.cut]
        st.dataframe(rows, hide_index=True, width="stretch")


def render_turns(chat: DesignChat) -> None:
    """The conversation so far and the confirmed values (seed 004: 確定値のプレビュー)."""
    for turn in chat.turns:
        with st.chat_message(turn.role):
            st.markdown(turn.text)
            if turn.answers:
                st.markdown("\n".join(f"- **{k}**: {v}" for k, v in turn.answers.items()))
    if chat.vars_preview:
        with st.expander(f"確定した値（{len(chat.vars_preview)} 件）"):
            st.json(chat.vars_preview)


def render_generation(result: GeneratedPlan) -> None:
    """How the last result came about: reasoning, attempts with their diffs, suggestions."""
    for suggestion in result.suggestions:
        st.info(suggestion, icon="💡")
    if not result.attempts and not result.reasoning:
        return
    with st.expander(f"生成の経過（試行 {len(result.attempts)} 回）"):
        if result.reasoning:
            st.markdown(result.reasoning)
        for attempt in result.attempts:
            verdict = "検証 OK" if attempt.valid else f"検証エラー {len(attempt.errors)} 件"
            if attempt.output_error:
                verdict = f"出力の形式エラー: {attempt.output_error}"
            lines = [f"**試行 {attempt.number}**: {verdict}（{attempt.duration_ms:.0f} ms）"]
            lines += [f"- 前回からの変更 {change.describe()}" for change in attempt.diff]
            lines += [f"- {issue.describe()}" for issue in attempt.errors]
            st.markdown("\n".join(lines))
        if result.run_log:
            st.caption(f"生成ログ: `{result.run_log}`")


def _ui_fields(plan: Mapping[str, Any] | None) -> list[str]:
    """``node: labels`` for the ui.* nodes that will ask a person while the plan runs."""
    lines = []
    for node in iter_nodes((plan or {}).get("graph")):
        block = node.get("block")
        if not isinstance(block, str) or not block.startswith(UI_PREFIX):
            continue
        inputs = node.get("in") if isinstance(node.get("in"), Mapping) else {}
        asked = inputs.get("requirements") if isinstance(inputs, Mapping) else None
        labels = [
            str(item.get("label") or item.get("id"))
            for item in (asked if isinstance(asked, list) else [])
            if isinstance(item, Mapping) and item.get("required", True)
        ]
        lines.append(f"{node.get('id')}（{block}）: " + ("、".join(labels) or "確認のみ"))
    return lines


def missing_summary(
    result: GeneratedPlan, check: CheckOutcome | None = None
) -> dict[str, list[str]]:
    """Seed 004's 不足項目: unresolved ``${vars.*}``, required UI, inconsistencies."""
    unresolved = [
        f"{r.target.var or r.id}: {r.label or r.id}"
        for r in result.requirements
        if r.target.kind == "var"
    ]
    inputs = [
        (f"{r.target.node}.{r.target.port}" if r.target.kind == "input" else "指示の確認")
        + f": {r.label or r.id}"
        for r in result.requirements
        if r.target.kind != "var"
    ]
    issues = check.validation.errors if check is not None else result.errors
    inconsistent = [
        (f"[{issue.node_id}] " if issue.node_id else "") + f"{issue.code}: {issue.message}"
        for issue in issues
    ]
    return {
        "未解決の変数（${vars.*}）": unresolved,
        "不足している入力": inputs,
        "実行時に入力を求める UI": _ui_fields(result.plan),
        "不整合（検証エラー）": inconsistent,
    }


def render_missing(result: GeneratedPlan, check: CheckOutcome | None) -> None:
    summary = missing_summary(result, check)
    pending = sum(len(v) for k, v in summary.items() if not k.startswith("実行時"))
    st.subheader("不足項目" + (f"（{pending} 件）" if pending else ""))
    if not pending:
        st.success("不足している項目はありません。", icon="✅")
    for title, lines in summary.items():
        if lines:
            st.markdown(f"**{title}**\n\n" + "\n".join(f"- {line}" for line in lines))


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


def render_check(check: CheckOutcome, current_text: str) -> None:
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
