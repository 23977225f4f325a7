"""実行 page (seed 002 §3, §8.2, §9.3): run a plan with its inputs, follow it, see its results.

A plan is chosen from the bundled examples, the plans under ``KEIRI_DESIGNS_DIR`` or a path
(inside that folder, the workspace or the example data: ``keiri_agent.ui.server_paths``).
Its ``ui.interactive_input`` nodes are drawn before the run (values kept per the Session State
contract; only リセット clears them); nodes whose inputs are computed during the run pause it
(入力待ち) and are answered below the result, then 続行 resumes. While a run lasts its node
events are shown line by line; afterwards the outcome stays: the error display of seed 002 §9.3
with 再実行 from the failed node, the node states, result tables and downloads. The run history
is read from the plan's JSONL logs, and any past run can be opened (and rerun) again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Final
from zoneinfo import ZoneInfo

import streamlit as st
import yaml

from keiri_agent.blocks.registry import BlockRegistry, default_registry
from keiri_agent.config import LLMRole, Settings, load_settings
from keiri_agent.design.store import saved_at
from keiri_agent.errors import BlockError
from keiri_agent.events.models import RunEvent
from keiri_agent.localtime import shown_time
from keiri_agent.plan import (
    MAX_PLAN_BYTES,
    PLAN_SUFFIXES,
    BlockNode,
    LoopNode,
    Node,
    Plan,
    PlanRunner,
    RunResult,
    load_config,
    load_source,
    load_yaml,
    validate_source,
)
from keiri_agent.ui import session_state
from keiri_agent.ui.error_view import render_error
from keiri_agent.ui.llm_notice import llm_problem
from keiri_agent.ui.output_names import output_names
from keiri_agent.ui.run_digest import MAX_NESTED_ROWS, digest
from keiri_agent.ui.run_outputs import render_history, render_outputs, run_kind
from keiri_agent.ui.run_vars import render_vars, reset_vars
from keiri_agent.ui.run_view import (
    Outcome,
    collect_answers,
    execute,
    outcome_from_log,
    render_ui_node,
    reset_inputs,
    ui_nodes,
    waiting_nodes,
)
from keiri_agent.ui.server_paths import check_server_path, plan_areas

__all__ = ["OUTCOMES_KEY", "PAGE", "PATH_CHOICE", "PLAN_KEY", "plan_choices", "render"]

PAGE: Final = "run"
PLAN_KEY: Final = session_state.page_key(PAGE, "plan")
PATH_KEY: Final = session_state.page_key(PAGE, "plan_path")
OUTCOMES_KEY: Final = session_state.page_key(PAGE, "outcomes")  # plan id → Outcome
PENDING_KEY: Final = session_state.page_key(PAGE, "pending")
PATH_CHOICE: Final = "ファイルのパスを指定…"
EXAMPLE_PREFIX: Final = "サンプル: "
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


@lru_cache(maxsize=1024)
def _is_plan(path: str, mtime_ns: int, size: int) -> bool:
    """Whether a YAML file is a plan (has ``id`` and ``graph``), cached per file version.
    Unreadable YAML is listed too: choosing it shows why it cannot be read (a file over the
    loader's MAX_PLAN_BYTES is listed unread: loading it says so, with the limit)."""
    if size > MAX_PLAN_BYTES:
        return True
    try:
        data = load_yaml(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return True
    return isinstance(data, Mapping) and "graph" in data and "id" in data


def plan_choices(designs_dir: Path) -> dict[str, Path]:
    """Label → plan file: the bundled examples, then the plans under ``designs_dir``."""
    from keiri_agent.examples import example_names, example_plan

    choices = {f"{EXAMPLE_PREFIX}{name}": example_plan(name) for name in example_names()}
    known = {path.resolve() for path in choices.values()}
    if designs_dir.is_dir():
        found = (p for suffix in PLAN_SUFFIXES for p in designs_dir.rglob(f"*{suffix}"))
        for path in sorted(found):
            stat = path.stat()
            if path.resolve() in known or not _is_plan(str(path), stat.st_mtime_ns, stat.st_size):
                continue
            choices[str(path.relative_to(designs_dir))] = path
    return choices


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
    ai = sorted({registry.get(r).id for r in _blocks(list(plan.graph)) if r.startswith("ai.")})
    problem = llm_problem(settings, LLMRole.PROCESS) if ai else None
    if problem is not None:
        st.warning(f"この Plan は AI ブロック（{', '.join(ai)}）を使います。{problem}", icon="⚠️")


def _saved_label(choices: Mapping[str, Path], zone: ZoneInfo) -> Callable[[str], str]:
    """A choice as shown: a plan saved by the 設計 page with the time it was saved."""

    def label(choice: str) -> str:
        saved = saved_at(choices[choice]) if choice in choices else None
        return f"{choice}（{shown_time(saved, zone, seconds=False)} 保存）" if saved else choice

    return label


def _choose_plan(settings: Settings) -> Path | None:
    choices = plan_choices(settings.keiri_designs_dir)
    options = [*choices, PATH_CHOICE]
    label = session_state.keep(
        PAGE,
        PLAN_KEY,
        st.selectbox(
            "Plan",
            options,
            format_func=_saved_label(choices, settings.keiri_timezone),
            key=session_state.restore(PAGE, PLAN_KEY, allowed=options),
            help=f"サンプルと {settings.keiri_designs_dir} の Plan（設計ページで保存したもの）です。",
        ),
    )
    if label != PATH_CHOICE:
        return choices[label]
    typed = session_state.kept_widget(
        PAGE, PATH_KEY, st.text_input, "Plan ファイルのパス", placeholder="designs/月次/照合.yaml"
    )
    if not typed.strip():
        return None
    return check_server_path(typed.strip(), plan_areas(settings), label="Plan ファイルのパス")


def _load(path: Path, settings: Settings, registry: BlockRegistry) -> Plan:
    """The plan at ``path``, validated (BlockError listing every problem otherwise)."""
    source = load_source(path)
    report = validate_source(
        source,
        registry,
        designs_dir=settings.keiri_designs_dir,
        config=load_config(settings.keiri_plan_config),
        env=os.environ,
    )
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


def _rerun_action(outcome: Outcome, plan: Plan, registry: BlockRegistry) -> tuple[str, ...]:
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
    settings: Settings,
    plan_vars: dict[str, Any] | None = None,
) -> Outcome:
    """Run (with ``plan_vars``), resume (``("resume", run_id)``) or rerun (``("rerun", run_id,
    node)``, both with the vars of the run they continue) with the answers on the page now."""
    answers = collect_answers(plan.id)

    def start(runner: PlanRunner, on_event: Callable[[RunEvent], None]) -> RunResult:
        if action[0] == "resume":
            return runner.resume(action[1], answers=answers, on_event=on_event)
        if action[0] == "rerun":
            return runner.rerun(action[1], action[2], answers=answers, on_event=on_event)
        return runner.run(path, vars=plan_vars, answers=answers, on_event=on_event)

    return execute(start, settings, plan_id=plan.id, total_nodes=len(plan.graph))


def _render_outcome(
    outcome: Outcome, plan: Plan, settings: Settings, registry: BlockRegistry
) -> None:
    st.subheader("実行結果")
    begun = shown_time(outcome.started, settings.keiri_timezone) if outcome.started else None
    where = (
        f"実行 ID {outcome.run_id}・" + (f"開始 {begun}・" if begun else "") + run_kind(outcome)
        if outcome.run_id
        else ""
    )
    if outcome.status in _STATUS:
        show, text = _STATUS[outcome.status]
        show(f"{text}（{outcome.duration_ms / 1000:.1f} 秒）")
    if where:
        st.caption(where + (f"・ログ {outcome.log_path}" if outcome.log_path else ""))
    if outcome.error is not None:
        retry_key = session_state.page_key(PAGE, "retry") if outcome.run_id else None
        if render_error(outcome.error, retry_key=retry_key):
            st.session_state[PENDING_KEY] = _rerun_action(outcome, plan, registry)
            st.rerun()
        node = outcome.error.details.get("node_id")
        if node and outcome.error.recoverable and outcome.run_id:
            st.caption(
                f"「再実行」はノード {node} から、今の入力値で実行し直します（上流の結果は再利用します）。"
            )
        elif outcome.run_id:
            st.caption("入力や Plan を直してから「実行」を押してください。")
    waiting = [str(w["node_id"]) for w in outcome.waiting]
    seen = digest(outcome.log_path, waiting=waiting)  # one pass over the log, bounded memory
    if outcome.status == "waiting_input" and outcome.run_id:
        for node in waiting_nodes(plan.id, outcome.waiting, seen.blocks, registry):
            with st.container(border=True):
                render_ui_node(node)
        if st.button(
            "続行",
            key=session_state.page_key(PAGE, "continue"),
            type="primary",
            icon=":material/play_arrow:",
        ):
            st.session_state[PENDING_KEY] = ("resume", outcome.run_id)
            st.rerun()
    if seen.rows:
        with st.expander("ノードの状態と経過", expanded=outcome.status != "success"):
            st.dataframe(seen.rows, hide_index=True)
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
    render_outputs(
        outcome,
        runs_dir=settings.keiri_runs_dir,
        key=session_state.page_key(PAGE, "out"),
        names=output_names(plan, registry),
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
        path = _choose_plan(settings)
    except BlockError as exc:
        render_error(exc)
        return
    if path is None:
        st.info("実行する Plan ファイルのパスを入力してください。")
        return
    registry = default_registry()
    try:
        plan = _load(path, settings, registry)
    except BlockError as exc:
        render_error(exc)
        return
    st.caption(
        f"{plan.id} v{plan.version}・ノード {len(plan.graph)} 個"
        + (f"・{plan.description}" if plan.description else "")
    )
    _llm_notice(plan, settings, registry)
    outcomes: dict[str, Outcome] = session_state.get_or_create(OUTCOMES_KEY, dict)

    st.subheader("入力")
    nodes = ui_nodes(plan, registry)
    for node in nodes:
        with st.container(border=True):
            render_ui_node(node)
    if not nodes:
        st.caption("実行前に入力する項目はありません（必要な入力は実行中に尋ねます）。")
    plan_vars = render_vars(PAGE, plan, registry, settings)
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
            st.rerun()
    pending: tuple[str, ...] | None = st.session_state.pop(PENDING_KEY, None)
    action = pending or (("run",) if clicked else None)
    if action is not None and (action[0] != "run" or plan_vars is not None):
        outcomes[plan.id] = _start(action, path, plan, settings, plan_vars)
    outcome = outcomes.get(plan.id)
    if outcome is not None:
        _render_outcome(outcome, plan, settings, registry)

    st.subheader("実行履歴")
    opened = render_history(
        plan.id,
        runs_dir=settings.keiri_runs_dir,
        zone=settings.keiri_timezone,
        key=session_state.page_key(PAGE, "history"),
    )
    if opened is not None:
        try:
            outcomes[plan.id] = outcome_from_log(opened)
        except BlockError as exc:
            render_error(exc)
            return
        st.rerun()
