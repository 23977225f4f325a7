"""What the 設計 page shows of a generation: the design chat's turns and confirmed values, how
the last result came about (reasoning, attempts, suggestions), and seed 004's 不足項目 (what is
still missing before the plan can run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.design.chat import DesignChat
from keiri_agent.design.models import AttemptRecord, GeneratedPlan
from keiri_agent.design.plan_nodes import iter_nodes
from keiri_agent.ui.design.check import (
    PlanCheck,
    issue_text,
    node_labels,
    node_namer,
    port_word,
    raw_namer,
)

__all__ = [
    "attempt_lines",
    "missing_summary",
    "render_generation",
    "render_missing",
    "render_turns",
]

UI_PREFIX = "ui."


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


def render_generation(result: GeneratedPlan, registry: BlockRegistry) -> None:
    """How the last result came about: reasoning, attempts with their diffs (each step by its
    name, as the attempt or the one before it names it), suggestions."""
    for suggestion in result.suggestions:
        st.info(suggestion, icon="💡")
    if not result.attempts and not result.reasoning:
        return
    with st.expander(f"生成の経過（試行 {len(result.attempts)} 回）"):
        if result.reasoning:
            st.markdown(result.reasoning)
        previous: Mapping[str, Any] | None = None
        for attempt in result.attempts:
            lines = attempt_lines(attempt, previous, registry)
            previous = attempt.plan
            st.markdown("\n".join(lines))
        if result.run_log:
            st.caption(f"生成ログ: `{result.run_log}`")


def attempt_lines(
    attempt: AttemptRecord, previous: Mapping[str, Any] | None, registry: BlockRegistry
) -> list[str]:
    """One attempt of 生成の経過: its verdict, what changed since the one before, its errors."""
    now, before = raw_namer(attempt.plan, registry), raw_namer(previous, registry)
    verdict = "検証 OK" if attempt.valid else f"検証エラー {len(attempt.errors)} 件"
    if attempt.output_error:
        verdict = f"出力の形式エラー: {attempt.output_error}"
    lines = [f"**試行 {attempt.number}**: {verdict}（{attempt.duration_ms:.0f} ms）"]
    lines += [
        "- 前回からの変更 "
        + change.said((before if change.change == "removed" else now)(change.node_id))
        for change in attempt.diff
    ]
    return lines + [f"- {issue_text(issue)}" for issue in attempt.errors]


def _ui_fields(plan: Mapping[str, Any] | None, name: Callable[[str, str], str]) -> list[str]:
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
        lines.append(f"{name(str(node.get('id')), block)}: " + ("、".join(labels) or "確認のみ"))
    return lines


def missing_summary(
    result: GeneratedPlan, check: PlanCheck | None, registry: BlockRegistry
) -> dict[str, list[str]]:
    """Seed 004's 不足項目: unresolved ``${vars.*}``, required UI, inconsistencies — each step
    named as the page names it (its name, else its block's label), an item by its label."""
    namer = node_namer(check, registry)
    blocks = dict(node_labels(result.plan))

    def step(node_id: str) -> str:
        what = blocks.get(node_id)
        return namer(node_id, what) if what is not None else "不明なノード"

    def item(node_id: str, port: str) -> str:
        return port_word(blocks.get(node_id), port, registry) or f"YAML の {port}:"

    unresolved = [
        f"{r.label or r.target.var or r.id}（vars.{r.target.var or r.id}）"
        for r in result.requirements
        if r.target.kind == "var"
    ]
    inputs = [
        (
            f"「{step(r.target.node)}」の入力「{item(r.target.node, r.target.port)}」"
            if r.target.kind == "input" and r.target.node and r.target.port
            else "指示の確認"
        )
        + f": {r.label or r.id}"
        for r in result.requirements
        if r.target.kind != "var"
    ]
    issues = check.validation.errors if check is not None else result.errors
    inconsistent = [issue_text(issue) for issue in issues]
    return {
        "未解決の設定値（${vars.*}）": unresolved,
        "不足している入力": inputs,
        "実行時に入力を求める UI": _ui_fields(result.plan, namer),
        "不整合（検証エラー）": inconsistent,
    }


def render_missing(result: GeneratedPlan, check: PlanCheck | None, registry: BlockRegistry) -> None:
    summary = missing_summary(result, check, registry)
    pending = sum(len(v) for k, v in summary.items() if not k.startswith("実行時"))
    st.subheader("不足項目" + (f"（{pending} 件）" if pending else ""))
    if not pending:
        st.success("不足している項目はありません。", icon="✅")
    for title, lines in summary.items():
        if lines:
            st.markdown(f"**{title}**\n\n" + "\n".join(f"- {line}" for line in lines))
