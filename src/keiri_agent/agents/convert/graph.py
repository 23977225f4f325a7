"""The LangGraph flow of seed 003 §1: interpret → fetch → convert | viz → finish, with
``fallback`` (CodeAct) taking over where the standard path cannot do the job.

Routing follows seed 003 §2, with one change issue 24 made: convert and viz hand
``UnsupportedFormatError(fmt)``, ``UnsupportedVizParamError(param)``, ``ValueError``, ``KeyError``
and ``NotImplementedError`` to the fallback, but a fetch that fails -- even after its retries
(S3 503) -- is raised as its ``FetchError``: CodeAct without the input could only invent the
data. Everything else is raised, LLM API errors (``LLMError``) included: they never reach the
fallback. Each hand-over is logged with its reason (a ``log`` event at level warning) and the
failing step's ``stage`` event says ``failed``; the fallback then reports under the convert or
viz step (status ``fallback``).

Success is earned: ``finish`` checks every file against the requested format by content
(``verify``). CodeAct may stop to ask the user something: the graph then ends with ``question``
set (no ``finish``) and the pipeline pauses the task; a continuation starts with the job and
the hand-over already known (``job``, ``used_fallback``) and the answers in ``answers``, so
interpret and the standard step are not repeated.

Dependencies that are not state (LLM clients, the sandbox, events, the cancel flag, directories)
travel in the runtime context, as in the analysis agent. Every node checks the cancel flag
before it starts (the convert step before each file too); a sandbox action is stopped while it
runs (``fallback.SandboxEval``). The steps write into the run's staging folder (``work_dir``);
the pipeline publishes the files into the output folder only when the run succeeds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import pandas as pd
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.agents.convert.failure import (
    fallback_failed,
    fallback_reason,
    model_reason,
    trigger_info,
)
from keiri_agent.agents.convert.fallback import cancelled_error, run_fallback, target_format
from keiri_agent.agents.convert.fetch import fetch_sources
from keiri_agent.agents.convert.formats import convert_file, read_table
from keiri_agent.agents.convert.interpret import interpret_request
from keiri_agent.agents.convert.models import (
    ConvertJob,
    FetchedFile,
    UnsupportedFormatError,
    UnsupportedVizParamError,
)
from keiri_agent.agents.convert.progress import FALLBACK_STATUS, step_progress
from keiri_agent.agents.convert.verify import check_output, unchecked_note
from keiri_agent.agents.convert.viz import render_chart
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode, input_error
from keiri_agent.events import EventEmitter, NullEmitter
from keiri_agent.file_access import FileAccess
from keiri_agent.llm import LLMClient
from keiri_agent.sandbox import SandboxExecutor

__all__ = [
    "FALLBACK_ERRORS",
    "ConvertContext",
    "ConvertState",
    "ConvertSteps",
    "build_graph",
    "fallback_reason",
]

# Seed 003 §2: what convert_node and viz_node forward to fallback_node.
FALLBACK_ERRORS: tuple[type[Exception], ...] = (
    UnsupportedFormatError,
    UnsupportedVizParamError,
    ValueError,
    KeyError,
    NotImplementedError,
)


class ConvertState(BaseModel):
    """The graph's state: the request, the job, the inputs, the result, the fallback's why."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    request: str
    source: str | None = None  # given by the caller; wins over the request's own
    job: ConvertJob | None = None
    fetched: list[FetchedFile] = Field(default_factory=list)
    files: list[Path] = Field(default_factory=list)
    used_fallback: bool = False
    fallback_reason: str | None = None
    trigger: dict[str, Any] | None = None  # the error that sent the job to the fallback
    answer: str = ""
    answers: list[tuple[str, str]] = Field(default_factory=list)  # CodeAct's questions, answered
    question: str | None = None  # CodeAct asks the user: the task waits for the answer


@dataclass(frozen=True)
class ConvertSteps:
    """The functions behind fetch, convert and viz (tests put failing ones here)."""

    fetch: Callable[..., list[FetchedFile]] = fetch_sources
    convert: Callable[..., Path] = convert_file
    render: Callable[..., Path] = render_chart


@dataclass
class ConvertContext:
    """What the nodes use besides the state."""

    settings: Settings
    llm: LLMClient
    codeact_llm: LLMClient
    executor: SandboxExecutor
    out_dir: Path  # the user's folder, which the run's files reach only when it succeeds
    scratch_dir: Path  # fetched inputs live here for the run's duration
    # Where the steps write their files: the run's staging folder inside out_dir
    # (``agents.staging``), published into out_dir once the run has succeeded.
    work_dir: Path
    events: EventEmitter = field(default_factory=NullEmitter)
    cancel: threading.Event = field(default_factory=threading.Event)
    s3_client: Any = None  # None: fetch builds one from the settings
    access: FileAccess = field(default_factory=FileAccess)  # where local sources may be read
    steps: ConvertSteps = field(default_factory=ConvertSteps)
    # What the run learnt so far, for a result that ends in an error or a cancellation.
    current_step: str = "interpret"
    job: ConvertJob | None = None
    fallback_reason: str | None = None
    code_runs: list[dict[str, Any]] = field(default_factory=list)  # CodeAct's executions


def _stage(ctx: ConvertContext, step: str, status: str) -> None:
    ctx.events.emit(
        "stage", node_id=step, step=step, status=status, progress=step_progress(step, status)
    )


StepBody = Callable[[ConvertState, ConvertContext], dict[str, Any]]


class Node(Protocol):
    def __call__(self, state: ConvertState, runtime: Runtime[ConvertContext]) -> dict[str, Any]: ...


def _step(body: StepBody) -> Node:
    """The graph node of the step named like ``body``: its ``start`` stage (after checking for a
    cancel), then ``body``, then its ``done`` stage unless ``body`` handed the job to CodeAct."""
    name = body.__name__

    def node(state: ConvertState, runtime: Runtime[ConvertContext]) -> dict[str, Any]:
        ctx = runtime.context
        if ctx.cancel.is_set():
            raise cancelled_error(ctx.current_step)
        ctx.current_step = name
        _stage(ctx, name, "start")
        update = body(state, ctx)
        if not update.get("used_fallback"):
            _stage(ctx, name, "done")
        return update

    node.__name__ = name  # the graph names a node after its function
    return node


def _job(state: ConvertState) -> ConvertJob:
    if state.job is None:  # pragma: no cover - interpret always sets it before fetch runs
        raise RuntimeError("the job is not interpreted yet")
    return state.job


def _hand_over(ctx: ConvertContext, step: str, exc: BaseException) -> dict[str, Any]:
    reason = fallback_reason(exc)
    ctx.fallback_reason = reason
    _stage(ctx, step, "failed")
    ctx.events.emit(
        "log",
        node_id=step,
        msg=f"CodeAct（代替処理）に切り替えます: {reason}",
        level="warning",
    )
    return {"used_fallback": True, "fallback_reason": reason, "trigger": trigger_info(step, exc)}


@_step
def interpret(state: ConvertState, ctx: ConvertContext) -> dict[str, Any]:
    if state.job is not None:  # a continuation: the job was interpreted before the question
        ctx.job = state.job
        ctx.fallback_reason = state.fallback_reason
        ctx.events.emit(
            "log",
            node_id="interpret",
            msg=f"回答を受け取りました。前回の解釈で続けます: {state.job.summary_ja}",
        )
        return {}
    llm = ctx.llm.bind(events=ctx.events, node_id="interpret")
    job = interpret_request(state.request, source=state.source, llm=llm)
    ctx.job = job
    what = (
        f"変換（→ {job.target_format}）"
        if job.action == "convert"
        else f"グラフ（{job.chart.kind if job.chart else '?'}）"
    )
    ctx.events.emit(
        "log", node_id="interpret", msg=f"解釈: {what}、入力 {job.source}。{job.summary_ja}"
    )
    return {"job": job}


@_step
def fetch(state: ConvertState, ctx: ConvertContext) -> dict[str, Any]:
    job = _job(state)
    assert job.source is not None  # interpret_request guarantees it
    # A FetchError (also one still failing after its retries) is raised, never handed to
    # CodeAct: without its input, CodeAct could only make the data up.
    fetched = ctx.steps.fetch(
        job.source,
        dest_dir=ctx.scratch_dir / "inputs",
        files=job.files,
        settings=ctx.settings,
        s3_client=ctx.s3_client,
        access=ctx.access,
    )
    if not fetched:
        raise input_error(
            f"{job.source} に対象のファイルがありません。",
            "パス・プレフィックスと、依頼文で指定したファイル名のパターンを確認してください。",
            source=job.source,
            files=job.files,
        )
    total = sum(item.size for item in fetched)
    names = ", ".join(item.name for item in fetched[:5]) + (" …" if len(fetched) > 5 else "")
    ctx.events.emit(
        "log",
        node_id="fetch",
        msg=f"{job.source}: {len(fetched)} 件のファイルを取得しました（{total:,} バイト）: {names}",
    )
    return {"fetched": fetched}


@_step
def convert(state: ConvertState, ctx: ConvertContext) -> dict[str, Any]:
    job = _job(state)
    target = job.target_format or ""
    outputs: list[Path] = []
    try:
        for item in state.fetched:
            if ctx.cancel.is_set():  # between two files: the rest is not worth writing
                raise cancelled_error("convert")
            name = job.output_name if len(state.fetched) == 1 else None
            path = ctx.steps.convert(
                item.path, target, ctx.work_dir, output_name=name, on_note=_noted(ctx, item.name)
            )
            outputs.append(path)
            ctx.events.emit("log", node_id="convert", msg=f"{item.name} → {path.name}")
    except FALLBACK_ERRORS as exc:
        for path in outputs:  # CodeAct redoes the whole job: leave no half of it behind
            path.unlink(missing_ok=True)
        return _hand_over(ctx, "convert", exc)
    return {"files": outputs}


def _noted(ctx: ConvertContext, name: str) -> Callable[[str], None]:
    """What the reading did to the file ``name`` (units made yen...), as the step's log."""

    def note(text: str) -> None:
        ctx.events.emit("log", node_id="convert", msg=f"{name}: {text}")

    return note


def _chart_data(fetched: list[FetchedFile]) -> Path | pd.DataFrame:
    if len(fetched) == 1:
        return fetched[0].path
    frames = [read_table(item.path) for item in fetched]
    columns = list(frames[0].columns)
    if any(list(frame.columns) != columns for frame in frames[1:]):
        raise NotImplementedError("列の構成が異なる複数のファイルを 1 つのグラフにまとめる処理")
    return pd.concat(frames, ignore_index=True)


@_step
def viz(state: ConvertState, ctx: ConvertContext) -> dict[str, Any]:
    job = _job(state)
    assert job.chart is not None  # interpret_request guarantees it
    try:
        path = ctx.steps.render(
            _chart_data(state.fetched), job.chart, ctx.work_dir, output_name=job.output_name
        )
    except FALLBACK_ERRORS as exc:
        return _hand_over(ctx, "viz", exc)
    ctx.events.emit("log", node_id="viz", msg=f"グラフを保存しました: {path.name}")
    return {"files": [path]}


def fallback(state: ConvertState, runtime: Runtime[ConvertContext]) -> dict[str, Any]:
    ctx = runtime.context
    job = _job(state)
    if ctx.cancel.is_set():
        raise cancelled_error(ctx.current_step)
    step = job.action
    ctx.current_step = step
    _stage(ctx, step, FALLBACK_STATUS)
    reason = state.fallback_reason or ""
    outcome = run_fallback(
        job,
        request=state.request,
        reason=model_reason(reason, state.trigger),
        fetched=state.fetched,
        out_dir=ctx.work_dir,
        codeact_root=ctx.settings.keiri_codeact_root,
        llm=ctx.codeact_llm,
        executor=ctx.executor,
        events=ctx.events,
        cancel=ctx.cancel,
        answers=state.answers,
        runs=ctx.code_runs,
    )
    if outcome.question is not None:
        ctx.events.emit(
            "log",
            node_id="fallback",
            msg=f"CodeAct からの質問: {outcome.question}",
            level="warning",
        )
        _stage(ctx, step, "waiting_input")
        return {"question": outcome.question}
    if not outcome.files:
        raise fallback_failed(
            target=target_format(job),
            reason=reason,
            turns=outcome.turns,
            answer=outcome.answer,
            last_error=outcome.last_error,
            wrong_format=outcome.wrong_format,
            trigger=state.trigger,
        )
    names = ", ".join(path.name for path in outcome.files)
    ctx.events.emit(
        "log",
        node_id="fallback",
        msg=f"CodeAct が {len(outcome.files)} 件のファイルを作成しました"
        f"（コード実行 {outcome.turns} 回）: {names}",
    )
    _stage(ctx, step, "done")
    return {"files": outcome.files}


@_step
def finish(state: ConvertState, ctx: ConvertContext) -> dict[str, Any]:
    job = _job(state)
    _verify(ctx, job, state.files)
    listing = "\n".join(f"- {path.name}" for path in state.files)
    if job.action == "viz":
        done = "グラフを作成しました。"
    else:
        done = f"{len(state.files)} 件のファイルを {(job.target_format or '').upper()} に変換しました。"
    if state.used_fallback:
        what = "グラフ作成" if job.action == "viz" else "変換"
        done = (
            f"標準の{what}では対応できなかったため（{state.fallback_reason}）、"
            "CodeAct（生成した Python コード）で作成しました。内容を確認してください。"
        )
    answer = f"{done}\n\n{listing}\n\n出力先: {ctx.out_dir}"
    return {"answer": answer}


def _verify(ctx: ConvertContext, job: ConvertJob, files: list[Path]) -> None:
    """Success only for files in the requested format, checked by content."""
    target = target_format(job)
    problems = [problem for path in files for problem in check_output(path, target)]
    if problems:
        for path in files:  # a wrong file is not a result: leave none behind
            path.unlink(missing_ok=True)
        raise BlockError(
            f"作成したファイルが依頼の形式（{target.upper()}）ではありません: "
            + "; ".join(problems),
            code=ErrorCode.OUTPUT_SCHEMA_MISMATCH,
            hint="依頼文の変換先の形式を確認して再実行してください。",
            details={"problems": problems, "target_format": target},
        )
    note = unchecked_note(target)
    if note:
        ctx.events.emit("log", node_id="finish", msg=note, level="warning")


def _after_fetch(state: ConvertState) -> Literal["convert", "viz", "fallback"]:
    if state.used_fallback:
        return "fallback"
    return _job(state).action


def _after_step(state: ConvertState) -> Literal["finish", "fallback"]:
    return "fallback" if state.used_fallback else "finish"


def _after_fallback(state: ConvertState) -> Literal["finish", "ask"]:
    return "ask" if state.question else "finish"


def build_graph() -> CompiledStateGraph[ConvertState, ConvertContext, ConvertState, ConvertState]:
    """The compiled graph; invoke with ``context=ConvertContext(...)``."""
    builder = StateGraph(ConvertState, context_schema=ConvertContext)
    builder.add_sequence([interpret, fetch])  # nodes named after their functions
    for node in (convert, viz, fallback, finish):
        builder.add_node(node)
    builder.add_edge(START, "interpret")
    builder.add_conditional_edges(
        "fetch", _after_fetch, {"convert": "convert", "viz": "viz", "fallback": "fallback"}
    )
    builder.add_conditional_edges(
        "convert", _after_step, {"finish": "finish", "fallback": "fallback"}
    )
    builder.add_conditional_edges("viz", _after_step, {"finish": "finish", "fallback": "fallback"})
    builder.add_conditional_edges("fallback", _after_fallback, {"finish": "finish", "ask": END})
    builder.add_edge("finish", END)
    return builder.compile()
