"""実行 page (seed 002 §3, §8.2, §9.3): run a plan with its inputs, follow it, see its results.

A plan is chosen from the bundled examples (by their Japanese names), the plans under
``KEIRI_DESIGNS_DIR`` or a path (inside that folder, the workspace or the example data:
``keiri_agent.ui.server_paths``). An example with sample data offers サンプルデータを使う, which
fills its inputs with the bundled files. Its ``ui.interactive_input`` nodes are drawn before the
run (values kept per the Session State contract; only リセット clears them); nodes whose inputs
are computed during the run pause it (入力待ち) and are answered below the result, then 続行
resumes. While a run lasts its node events are shown line by line; afterwards the outcome stays:
the error display of seed 002 §9.3 with 再実行 from the failed node, the result tables in the
plan's order, its reports with their charts and the downloads. Nodes and tables are named as
the plan names them (``plan.plan_names``); ids appear only in the details expanders. The run
history is read from the plan's JSONL logs, and any past run can be opened (and rerun) again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import streamlit as st

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import LLMRole, Settings, load_settings
from keiri_agent.documents.amount_format import AmountFormat
from keiri_agent.errors import BlockError
from keiri_agent.events.models import RunEvent
from keiri_agent.localtime import shown_time
from keiri_agent.plan import (
    BlockNode,
    LoopNode,
    Node,
    Plan,
    PlanEnv,
    PlanNames,
    PlanRunner,
    RunResult,
    load_source,
    plan_names,
    validate_source,
)
from keiri_agent.ui import session_state
from keiri_agent.ui.error_view import render_error
from keiri_agent.ui.llm_notice import llm_problem
from keiri_agent.ui.run.digest import MAX_NESTED_ROWS, digest
from keiri_agent.ui.run.history import render_history, run_kind
from keiri_agent.ui.run.inputs import (
    collect_answers,
    render_ui_node,
    reset_inputs,
    ui_nodes,
    waiting_nodes,
)
from keiri_agent.ui.run.live import execute
from keiri_agent.ui.run.plan_choice import (
    PATH_CHOICE,
    PLAN_KEY,
    SAMPLE_KEY,
    choose_plan,
    offer_sample,
    plan_choices,
)
from keiri_agent.ui.run.plan_vars import render_vars, reset_vars
from keiri_agent.ui.run.results import render_outputs
from keiri_agent.ui.run.shown_run import ShownRun
from keiri_agent.ui.screen_words import shown_table

__all__ = ["OUTCOMES_KEY", "PAGE", "PATH_CHOICE", "PLAN_KEY", "plan_choices", "render"]

PAGE: Final = "run"
OUTCOMES_KEY: Final = session_state.page_key(PAGE, "outcomes")  # plan id → ShownRun
PENDING_KEY: Final = session_state.page_key(PAGE, "pending")
_STATUS: Final = {
    "success": (st.success, "成功しました"),
    "partial": (
        st.warning,
        "一部が完了していません（on_error: continue で続けた失敗か、上限で打ち切ったループがあります）",
    ),
    "waiting_input": (st.info, "入力待ちです。下の項目に答えて「続行」を押してください"),
    "cancelled": (st.warning, "取り消されました"),
    "running": (st.warning, "終了の記録がありません（実行中か、途中で止まりました）"),
}


def _blocks(nodes: list[Node]) -> list[str]:
    refs: list[str] = []
    for node in nodes:
        if isinstance(node, BlockNode):
            refs.append(node.block)
        elif isinstance(node, LoopNode):
            refs += _blocks(list(node.body.plan.graph))
    return refs


def _llm_notice(plan: Plan, settings: Settings, registry: BlockRegistry) -> None:
    """Say how to configure a provider when the plan has ``ai.*`` blocks and none is usable."""
    specs = [registry.get(r) for r in _blocks(list(plan.graph)) if r.startswith("ai.")]
    ai = list(dict.fromkeys(spec.shown_name for spec in specs))
    problem = llm_problem(settings, LLMRole.PROCESS) if ai else None
    if problem is not None:
        st.warning(f"この Plan は AI を使います（{'、'.join(ai)}）。{problem}", icon="⚠️")


def _load(path: Path, env: PlanEnv) -> Plan:
    """The plan at ``path``, validated (BlockError listing every problem otherwise)."""
    source = load_source(path)
    report = validate_source(source, env)
    report.raise_if_invalid(getattr(source.raw, "get", lambda _k: None)("id"))
    return Plan.model_validate(source.raw)


def _changed(
    plan: Plan, node_id: str, answers: Mapping[str, Any], outputs: Mapping[str, Any]
) -> bool:
    """Whether a finished input node's current answers differ from what it output in the run."""
    node = plan.node(node_id)
    out = node.out if isinstance(node, BlockNode) else {}
    collected = outputs.get(out.get("collected_data", "collected_data")) or {}
    for key, value in answers.items():
        if key in ("approved", "response"):
            before = outputs.get(out.get(key, key))
        else:
            before = collected.get(key)
        if value != before and not (value in (None, "", []) and before in (None, "", [])):
            return True
    return False


def _rerun_action(outcome: ShownRun, plan: Plan, registry: BlockRegistry) -> tuple[str, ...]:
    """Rerun from the failed node, or from the one input node edited since (upstream reuse
    would otherwise hide the edit); a new run when several inputs were edited."""
    failed = str((outcome.error.details if outcome.error else {}).get("node_id") or "")
    if not failed or outcome.run_id is None:
        return ("run",)
    inputs = {node.node_id for node in ui_nodes(plan, registry)}
    answers = collect_answers(plan.id)
    changed = [
        node_id
        for node_id in answers
        if node_id in inputs and node_id != failed and node_id in outcome.outputs
        if _changed(plan, node_id, answers[node_id], outcome.outputs[node_id])
    ]
    if len(changed) > 1:
        return ("run",)
    return ("rerun", outcome.run_id, changed[0] if changed else failed)


def _start(
    action: tuple[str, ...],
    path: Path,
    plan: Plan,
    env: PlanEnv,
    names: PlanNames,
    plan_vars: dict[str, Any] | None = None,
) -> ShownRun:
    """Run (with ``plan_vars``), resume (``("resume", run_id)``) or rerun (``("rerun", run_id,
    node)``, both with the vars of the run they continue) with the answers on the page now,
    with the ``env`` the page validated and described the plan with."""
    answers = collect_answers(plan.id)

    def start(runner: PlanRunner, on_event: Callable[[RunEvent], None]) -> RunResult:
        if action[0] == "resume":
            return runner.resume(action[1], answers=answers, on_event=on_event)
        if action[0] == "rerun":
            return runner.rerun(action[1], action[2], answers=answers, on_event=on_event)
        return runner.run(path, vars=plan_vars, answers=answers, on_event=on_event)

    return execute(start, env, plan_id=plan.id, total_nodes=len(plan.graph), names=names)


def _render_outcome(
    outcome: ShownRun, plan: Plan, settings: Settings, registry: BlockRegistry, names: PlanNames
) -> None:
    st.subheader("実行結果")
    begun = shown_time(outcome.started, settings.keiri_timezone) if outcome.started else None
    where = (
        f"実行 ID {outcome.run_id}・"
        + (f"開始 {begun}・" if begun else "")
        + run_kind(outcome, names=names)
        if outcome.run_id
        else ""
    )
    if outcome.status in _STATUS:
        show, text = _STATUS[outcome.status]
        show(f"{text}（{outcome.duration_ms / 1000:.1f} 秒）")
    if where:
        st.caption(where)
    if outcome.error is not None:
        retry_key = session_state.page_key(PAGE, "retry") if outcome.run_id else None
        if render_error(outcome.error, retry_key=retry_key):
            st.session_state[PENDING_KEY] = _rerun_action(outcome, plan, registry)
            st.rerun()
        node = outcome.error.details.get("node_id")
        if node:
            st.caption(f"止まったところ: {names.node(str(node))}")
        if node and outcome.error.recoverable and outcome.run_id:
            st.caption(
                "「再実行」はそこから、今の入力値で実行し直します（前の結果は再利用します）。"
            )
        elif outcome.run_id:
            st.caption("入力や Plan を直してから「実行」を押してください。")
    waiting = [str(w["node_id"]) for w in outcome.waiting]
    # One pass over the log, bounded memory.
    seen = digest(outcome.log_path, waiting=waiting, names=names)
    if outcome.status == "waiting_input" and outcome.run_id:
        for node in waiting_nodes(plan.id, outcome.waiting, seen.blocks, registry):
            with st.container(border=True):
                render_ui_node(node, name=names.node(node.node_id))
        if st.button(
            "続行",
            key=session_state.page_key(PAGE, "continue"),
            type="primary",
            icon=":material/play_arrow:",
        ):
            st.session_state[PENDING_KEY] = ("resume", outcome.run_id)
            st.rerun()
    if seen.rows:
        with st.expander("詳細: ノードの状態と経過", expanded=outcome.status != "success"):
            st.dataframe(shown_table(seen.rows, settings.keiri_timezone), hide_index=True)
            if seen.truncated:
                st.caption(
                    f"ループ・サブフローの中のノードは最初の {MAX_NESTED_ROWS:,} 件（とエラーに"
                    "なったもの）だけを表に出しています。全件は実行ログにあります。"
                )
            if seen.total_lines > len(seen.lines):
                st.caption(
                    f"経過は全 {seen.total_lines:,} 行のうち最後の {len(seen.lines):,} 行です。"
                )
            st.code("\n".join(seen.lines), language="text")
            if outcome.log_path:
                st.caption(f"実行ログ: {outcome.log_path}")
    render_outputs(
        outcome,
        runs_dir=settings.keiri_runs_dir,
        key=session_state.page_key(PAGE, "out"),
        names=names,
        amounts=AmountFormat.of(settings),
    )


def render() -> None:
    """The 実行 page."""
    st.title("実行")
    st.caption(
        "設計した Plan（ワークフロー）を実行します。入力項目に答えて「実行」を押すと、"
        "ノードごとの進み具合、結果の表、出力ファイルが表示されます。"
        "エラーのときは原因とヒントを表示し、直した値で失敗したノードから再実行できます。"
    )
    try:
        settings = load_settings()
        path = choose_plan(settings)
    except BlockError as exc:
        render_error(exc)
        return
    if path is None:
        st.info("実行する Plan ファイルのパスを入力してください。")
        return
    try:
        env = PlanEnv.of(settings=settings)  # what this page validates and describes with
        plan = _load(path, env)
    except BlockError as exc:
        render_error(exc)
        return
    registry = env.registry
    names = plan_names(plan, registry)
    if plan.description:
        st.caption(plan.description)
    _llm_notice(plan, settings, registry)
    outcomes: dict[str, ShownRun] = session_state.get_or_create(OUTCOMES_KEY, dict)

    st.subheader("入力")
    offer_sample(path, plan, registry)
    nodes = ui_nodes(plan, registry)
    for node in nodes:
        with st.container(border=True):
            render_ui_node(node, name=names.node(node.node_id))
    if not nodes:
        st.caption("実行前に入力する項目はありません（必要な入力は実行中に尋ねます）。")
    plan_vars = render_vars(PAGE, plan, registry, names)
    left, right, _ = st.columns([1, 1, 5])
    with left:
        clicked = st.button(
            "実行",
            key=session_state.page_key(PAGE, "start"),
            type="primary",
            icon=":material/play_arrow:",
        )
    with right:
        if st.button(
            "リセット",
            key=session_state.page_key(PAGE, "reset"),
            help="この Plan の入力値と結果を消去します（実行履歴は残ります）。",
        ):
            reset_inputs(plan.id)
            reset_vars(PAGE, plan.id)
            outcomes.pop(plan.id, None)
            session_state.get_or_create(SAMPLE_KEY, set).discard(plan.id)
            st.rerun()
    pending: tuple[str, ...] | None = st.session_state.pop(PENDING_KEY, None)
    action = pending or (("run",) if clicked else None)
    if action is not None and (action[0] != "run" or plan_vars is not None):
        outcomes[plan.id] = _start(action, path, plan, env, names, plan_vars)
    outcome = outcomes.get(plan.id)
    if outcome is not None:
        _render_outcome(outcome, plan, settings, registry, names)

    st.subheader("実行履歴")
    opened = render_history(
        plan.id,
        runs_dir=settings.keiri_runs_dir,
        zone=settings.keiri_timezone,
        key=session_state.page_key(PAGE, "history"),
        current=outcome.run_id if outcome is not None else None,
        names=names,
    )
    if opened is not None:
        try:
            outcomes[plan.id] = ShownRun.from_log(opened)
        except BlockError as exc:
            render_error(exc)
            return
        st.rerun()
    _render_details(plan, names)


def _render_details(plan: Plan, names: PlanNames) -> None:
    """The plan's ids, for whoever edits its YAML: the one place the page shows them."""
    with st.expander("詳細: Plan とノードの ID"):
        st.caption(f"Plan ID: {plan.id}（版 {plan.version}）")
        st.dataframe(
            shown_table(
                [
                    {
                        "ノード": names.node(node.id),
                        "ノード ID": node.id,
                        "種類": getattr(node, "block", node.type),
                    }
                    for node in plan.graph
                ]
            ),
            hide_index=True,
        )
