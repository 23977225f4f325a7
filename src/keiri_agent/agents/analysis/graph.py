"""The ReAct graph of seed 000: ``reason`` → ``code_exec`` → ``reason`` … → ``report``.

Edges are exactly the seed's table: START→reason; reason→END on ``ask`` (the turn ends with a
question), →code_exec on ``act``, →report on ``finalize`` or when the loop limit is reached;
code_exec→reason; report→END. There is no checkpointer: the caller keeps the conversation
(``AnalysisSession`` or ``st.session_state``) and invokes the graph once per user message.

Dependencies that are not state (LLM clients, the sandbox, the event sink) travel in the
LangGraph runtime context, so tests and the UI pass their own without patching anything.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from keiri_agent.agents.analysis.honesty import (
    JAPANESE_REWRITE_REQUEST,
    NOT_JAPANESE_NOTE,
    UNGROUNDED_NOTE,
    check_deadline,
    is_grounded,
    is_japanese,
)
from keiri_agent.agents.analysis.models import (
    ACTION_WORDS,
    MAX_LOOPS,
    AgentState,
    CodeGenOutput,
    ExecutionResult,
    ReasonOutput,
    ReportOutput,
)
from keiri_agent.agents.analysis.progress import STEP_LABELS
from keiri_agent.agents.analysis.prompts import codegen_messages, reason_messages, report_messages
from keiri_agent.agents.analysis.report import save_report
from keiri_agent.agents.cancelled import cancelled_error as work_cancelled
from keiri_agent.agents.execlog import error_summary
from keiri_agent.config import DEFAULT_ANALYSIS_TURN_TIMEOUT_S
from keiri_agent.errors import BlockError
from keiri_agent.events import EventEmitter, NullEmitter
from keiri_agent.llm import LLMClient
from keiri_agent.llm.extract import strip_code_fences
from keiri_agent.llm.revise import revise_once
from keiri_agent.sandbox import (
    ANALYSIS,
    SandboxExecutor,
    SandboxProfile,
    default_executor,
    run_cancellable,
)

__all__ = ["NO_DATA_QUESTION", "AnalysisContext", "build_graph", "cancelled_error"]

logger = logging.getLogger(__name__)

NO_DATA_QUESTION = (
    "分析するデータがまだありません。CSV または Excel ファイルをアップロードしてください。"
)


@dataclass
class AnalysisContext:
    """What the nodes use besides the state."""

    reason_llm: LLMClient = field(default_factory=lambda: LLMClient("reason"))
    codegen_llm: LLMClient = field(default_factory=lambda: LLMClient("codegen"))
    report_llm: LLMClient = field(default_factory=lambda: LLMClient("report"))
    executor: SandboxExecutor = field(default_factory=default_executor)
    events: EventEmitter = field(default_factory=NullEmitter)
    profile: SandboxProfile = ANALYSIS
    deadline: float | None = None  # time.monotonic() by which the turn must end
    timeout_s: float = DEFAULT_ANALYSIS_TURN_TIMEOUT_S  # what the deadline stands for
    # Set by whoever may stop the turn (a server task's cancel): generated code that is running
    # is killed at once and the turn ends with CANCELLED, its run recorded nowhere.
    cancel: threading.Event | None = None


def cancelled_error(step: str, *, code_stopped: bool = False) -> BlockError:
    """The CANCELLED error of a turn stopped at the step ``step`` (its id): while its generated
    code ran (``code_stopped``), or before the step started (a cancel that came during an LLM
    call). ``details.step`` is the step as the progress says it (「コード生成・実行」) on every
    path, ``details.step_id`` its id."""
    note = "（実行中のコードは止めました）" if code_stopped else ""
    return work_cancelled("分析", step, label=STEP_LABELS[step], note=note)


def _check_step(ctx: AnalysisContext, step: str) -> None:
    """Before step ``step`` (its id): the turn has been neither cancelled nor gone past its
    deadline (whose error names the step by its label, the id in its details)."""
    if ctx.cancel is not None and ctx.cancel.is_set():
        raise cancelled_error(step)
    check_deadline(ctx.deadline, ctx.timeout_s, step)


def _stage(ctx: AnalysisContext, step: str, status: str) -> None:
    ctx.events.emit("stage", node_id=step, step=step, status=status)


def reason(state: AgentState, runtime: Runtime[AnalysisContext]) -> dict[str, Any]:
    ctx = runtime.context
    if not state.frames():  # seed: no data → ask for an upload, without calling the LLM
        ctx.events.emit("log", node_id="reason", msg="データ未登録のためアップロードを依頼します")
        return {
            "next_action": "ask",
            "question": NO_DATA_QUESTION,
            "messages": [AIMessage(NO_DATA_QUESTION)],
        }
    if state.loop_count >= MAX_LOOPS:  # seed: the limit forces a report of what we have
        ctx.events.emit(
            "log",
            node_id="reason",
            msg=f"ループ上限（{MAX_LOOPS} 回）に達したため中間結果をまとめます",
        )
        return {"next_action": "finalize", "forced_report": True}
    _check_step(ctx, "reason")
    _stage(ctx, "reason", "start")
    infos = state.dfs_info or ([state.df_info] if state.df_info else [])
    decision = ctx.reason_llm.bind(events=ctx.events, node_id="reason").structured(
        ReasonOutput,
        reason_messages(state.messages, infos, state.execution_results, state.loop_count + 1),
        check=_reason_problems,
    )
    update: dict[str, Any] = {
        "next_action": decision.next_action,
        "loop_count": state.loop_count + 1,
        "instruction": None,
        "question": None,
    }
    if decision.assumption:
        update["assumptions"] = [*state.assumptions, decision.assumption]
    if decision.next_action == "ask":
        assert decision.question  # _reason_problems
        update["question"] = decision.question
        update["messages"] = [AIMessage(decision.question)]
    elif decision.next_action == "act":
        assert decision.instruction  # _reason_problems
        update["instruction"] = decision.instruction
    ctx.events.emit(
        "log",
        node_id="reason",
        msg=f"判断: {ACTION_WORDS[decision.next_action]}（{decision.rationale}）",
    )
    _stage(ctx, "reason", "done")
    return update


def _reason_problems(decision: ReasonOutput) -> list[str]:
    """What a schema cannot say: ask needs a question, act an instruction."""
    if decision.next_action == "ask" and not (decision.question or "").strip():
        return [_needed(decision, "question", "ユーザーへの質問")]
    if decision.next_action == "act" and not (decision.instruction or "").strip():
        return [_needed(decision, "instruction", "具体的な分析指示")]
    return []


def _needed(decision: ReasonOutput, field: str, what: str) -> str:
    """A field the decision lacks, said by the schema's titles (a person reads it too)."""
    fields = type(decision).model_fields
    action = f"「{fields['next_action'].title}」が「{ACTION_WORDS[decision.next_action]}」"
    return f"「{fields[field].title}」が空です: {action}のときは、{what}が必要です"


def _missing_outputs(plan: CodeGenOutput, workspace: Path) -> list[str]:
    return [
        output.file_name
        for output in plan.expected_outputs
        if not (workspace / Path(output.file_name).name).is_file()
    ]


def code_exec(state: AgentState, runtime: Runtime[AnalysisContext]) -> dict[str, Any]:
    ctx = runtime.context
    _check_step(ctx, "code_exec")
    _stage(ctx, "code_exec", "start")
    workspace = Path(state.workspace_dir or ".")
    infos = state.dfs_info or ([state.df_info] if state.df_info else [])
    previous = state.execution_results[-1] if state.execution_results else None
    plan = ctx.codegen_llm.bind(events=ctx.events, node_id="code_exec").structured(
        CodeGenOutput,
        codegen_messages(state.instruction or "", infos, str(workspace), previous),
    )
    # Models put the code field in a ```python fence as often as not; the fence is not code.
    code = strip_code_fences(plan.code)
    plan = plan.model_copy(update={"code": code})
    ctx.events.emit("code_gen", node_id="code_exec", code=code)
    outcome = run_cancellable(
        ctx.executor,
        ctx.cancel,
        code,
        workdir=workspace,
        profile=ctx.profile,
        inputs=state.frames(),
    )
    if outcome is None:
        raise cancelled_error("code_exec", code_stopped=True)
    errors = []
    if outcome.error is not None:
        errors.append(
            "\n".join([f"{outcome.error.type}: {outcome.error.message}", *outcome.error.traceback])
        )
    elif outcome.killed_by is not None:
        errors.append(outcome.summary_ja())
    missing = _missing_outputs(plan, workspace) if outcome.success else []
    if missing:
        errors.append(
            "コードが保存すると宣言したファイルが作業ディレクトリにありません: "
            + ", ".join(missing)
            + "（保存処理と expected_outputs を一致させてください）"
        )
    ctx.events.emit(
        "code_exec",
        node_id="code_exec",
        stdout=outcome.stdout,
        stderr=_with_error(outcome.stderr, errors),  # what the model is told, the user sees
        success=outcome.success and not missing,
    )
    result = ExecutionResult(
        success=outcome.success and not missing,
        code=plan.code,
        stdout=outcome.stdout or None,
        error="\n".join(errors) or None,
        outputs=[o for o in plan.expected_outputs if Path(o.file_name).name not in missing],
        instruction=state.instruction,
        files_created=outcome.files_created,
        duration_s=outcome.duration_s,
    )
    if result.error:
        logger.warning("分析コードの実行が失敗しました: %s", error_summary(result.error))
        ctx.events.emit("error", node_id="code_exec", step="code_exec", message=result.error)
    _stage(ctx, "code_exec", "done" if result.success else "failed")
    return {"execution_results": [*state.execution_results, result]}


def _with_error(stderr: str, errors: list[str]) -> str:
    text = "\n".join(e for e in errors if e and e not in stderr)
    return "\n".join(part for part in (stderr.rstrip("\n"), text) if part)


def report(state: AgentState, runtime: Runtime[AnalysisContext]) -> dict[str, Any]:
    ctx = runtime.context
    _check_step(ctx, "report")
    _stage(ctx, "report", "start")
    grounded = is_grounded(state.execution_results[state.turn_start :])
    llm = ctx.report_llm.bind(events=ctx.events, node_id="report")
    messages = report_messages(
        state.messages,
        state.execution_results,
        state.assumptions,
        forced=state.forced_report,
        grounded=grounded,
    )

    def rewrite(draft: ReportOutput, problems: Sequence[str]) -> ReportOutput:
        ctx.events.emit(
            "log", node_id="report", msg="レポート本文が日本語でないため書き直しを依頼します"
        )
        request = [*messages, AIMessage(draft.model_dump_json()), HumanMessage("\n".join(problems))]
        return llm.structured(ReportOutput, request)

    output, remaining, _ = revise_once(
        llm.structured(ReportOutput, messages),
        lambda report: [] if is_japanese(report) else [JAPANESE_REWRITE_REQUEST],
        rewrite,
    )
    if ctx.cancel is not None and ctx.cancel.is_set():  # stopped during the call: save nothing
        raise cancelled_error("report")
    japanese = not remaining
    notes = [
        note for ok, note in ((grounded, UNGROUNDED_NOTE), (japanese, NOT_JAPANESE_NOTE)) if not ok
    ]
    for note in notes:
        ctx.events.emit("log", node_id="report", msg=note, level="warning")
    workspace = Path(state.workspace_dir or ".")
    path = save_report(output, workspace, state.assumptions, notes=notes)
    ctx.events.emit("log", node_id="report", msg=f"レポートを保存しました: {path}")
    _stage(ctx, "report", "done")
    return {
        "final_report": output,
        "report_path": str(path),
        "grounded": grounded,
        "japanese": japanese,
        "messages": [AIMessage(f"{output.title}\n\n{output.conclusion}")],
    }


def route(state: AgentState) -> Literal["ask", "act", "finalize"]:
    if state.next_action is None:
        raise ValueError("reason did not choose an action")
    return state.next_action


def build_graph() -> CompiledStateGraph[AgentState, AnalysisContext, AgentState, AgentState]:
    """The compiled graph; invoke with ``context=AnalysisContext(...)``, no checkpointer."""
    builder = StateGraph(AgentState, context_schema=AnalysisContext)
    for node in (reason, code_exec, report):
        builder.add_node(node)  # named after the function
    builder.add_edge(START, "reason")
    builder.add_conditional_edges(
        "reason", route, {"ask": END, "act": "code_exec", "finalize": "report"}
    )
    builder.add_edge("code_exec", "reason")
    builder.add_edge("report", END)
    return builder.compile()
