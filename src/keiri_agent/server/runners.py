"""What each kind of task runs: a conversion, a plan run or an analysis, on one event stream.

``POST /agent/run`` takes one of three request bodies, told apart by ``kind`` (``convert`` when
it is left out, as in seed 003 §7). :func:`prepare` checks a request before a task is created
(an unknown plan or a data file outside the workspace is a 4xx, not a failed task) and returns
the function that runs it. Every runner receives a :class:`Job` -- the task's event stream,
directory, cancel flag, sandbox executor and settings -- and returns an :class:`Outcome`.

Progress is told with ``stage`` events on the seed's steps, interpret → fetch → convert/viz →
finish (seed 003 §3), with the conversion pipeline's progress values (``step_progress``), so
one progress bar serves every kind: the conversion pipeline emits them itself; for a plan run
they follow its nodes (validation, then input and file-reading nodes,
then the rest, then collecting the result files); an analysis loads its files, runs the ReAct
graph and collects the report.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from keiri_agent.agents.convert.progress import step_progress
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventStream, RunEvent
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.workspace import confine

__all__ = [
    "AnalysisRequest",
    "ConvertRequest",
    "Job",
    "Outcome",
    "PlanRequest",
    "Runner",
    "TaskRequest",
    "cancelled_error",
    "prepare",
]

MAX_REQUEST_CHARS = 4000
MAX_DATA_FILES = 20
# Blocks whose nodes count as "fetch" in a plan run: human input and reading files.
FETCH_BLOCK_PREFIXES = ("ui.", "file.", "excel.read")


class ConvertRequest(BaseModel):
    """A conversion or chart request (seed 003): the pipeline interprets, fetches, converts.

    A local ``source`` must lie in ``KEIRI_WORKSPACE_ROOT``; ``s3://`` URLs are passed on.
    """

    model_config = ConfigDict(extra="forbid")
    kind: Literal["convert"] = "convert"
    request: str = Field(min_length=1, max_length=MAX_REQUEST_CHARS)
    source: str | None = Field(default=None, max_length=2000)


class PlanRequest(BaseModel):
    """A plan run: an example's name or a plan id under ``KEIRI_DESIGNS_DIR``, with answers."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["plan"]
    plan: str = Field(min_length=1, max_length=300)
    vars: dict[str, Any] = Field(default_factory=dict)
    # Answers for ui.* nodes ({node_id: {item_id: value}}); None: an example's shipped answers.
    answers: dict[str, dict[str, Any]] | None = None
    request: str = Field(default="", max_length=MAX_REQUEST_CHARS)


class AnalysisRequest(BaseModel):
    """A question about data files (seed 000); the files must lie in ``KEIRI_WORKSPACE_ROOT``."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["analysis"]
    request: str = Field(min_length=1, max_length=MAX_REQUEST_CHARS)
    files: list[str] = Field(min_length=1, max_length=MAX_DATA_FILES)


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("kind", "convert"))
    return str(getattr(value, "kind", "convert"))


TaskRequest = Annotated[
    Annotated[ConvertRequest, Tag("convert")]
    | Annotated[PlanRequest, Tag("plan")]
    | Annotated[AnalysisRequest, Tag("analysis")],
    Discriminator(_kind),
]


@dataclass
class Job:
    """What a runner works with; everything it writes stays under ``directory``."""

    task_id: str
    directory: Path
    events: EventStream
    cancel: threading.Event
    executor: SandboxExecutor
    settings: Settings

    @property
    def files_dir(self) -> Path:
        path = self.directory / "files"
        path.mkdir(exist_ok=True)
        return path

    def stage(self, step: str, status: str, progress: float | None = None) -> None:
        """A progress event; ``progress`` defaults to the conversion pipeline's span."""
        value = progress if progress is not None else step_progress(step, status)
        self.events.emit("stage", step=step, status=status, progress=value)

    def log(self, msg: str, level: str = "info") -> None:
        self.events.emit("log", msg=msg, level=level)


@dataclass
class Outcome:
    status: Literal["success", "failed", "cancelled"]
    answer: str = ""
    files: list[Path] = field(default_factory=list)
    error: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)


Runner = Callable[[Job], Outcome]


def cancelled_error() -> BlockError:
    return BlockError(
        "タスクは中止されました。",
        code=ErrorCode.CANCELLED,
        hint="必要なら同じ依頼をもう一度送ってください。",
    )


def prepare(request: ConvertRequest | PlanRequest | AnalysisRequest, settings: Settings) -> Runner:
    """Check ``request`` (BlockError for a bad one) and return the function that runs it."""
    if isinstance(request, PlanRequest):
        path, answers = _plan_source(request, settings)
        return partial(_run_plan, request, path, answers)
    root = Path(settings.keiri_workspace_root).absolute()
    if isinstance(request, AnalysisRequest):
        files = [confine(root, name, allow_absolute_inside=True) for name in request.files]
        missing = [str(path) for path in files if not path.is_file()]
        if missing:
            raise BlockError(
                f"データファイルが見つかりません: {', '.join(missing)}",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint=f"KEIRI_WORKSPACE_ROOT（{root}）の中にあるファイルを指定してください。",
                details={"missing": missing},
            )
        return partial(_run_analysis, request, files)
    if request.source is not None and "://" not in request.source:  # URLs: the pipeline checks
        source = confine(root, request.source.strip(), allow_absolute_inside=True)
        request = request.model_copy(update={"source": str(source)})
    return partial(_run_convert, request)


# --- conversion (seed 003) -------------------------------------------------------------------


def _run_convert(request: ConvertRequest, job: Job) -> Outcome:
    # Imported here: the pipeline pulls in boto3 and the LLM stack, which plan runs never need.
    from keiri_agent.agents.convert.pipeline import run_convert

    result = run_convert(
        request.request,
        source=request.source,
        out_dir=job.files_dir,
        settings=job.settings,
        events=job.events,
        cancel=job.cancel,
        executor=job.executor,
        local_root=job.settings.keiri_workspace_root.absolute(),
    )
    return Outcome(
        status=result.status,
        answer=result.answer,
        files=list(result.files),
        error=result.error,
        details={
            "used_fallback": result.used_fallback,
            "fallback_reason": result.fallback_reason,
        },
    )


# --- plan runs (seed 002) --------------------------------------------------------------------


def _plan_source(request: PlanRequest, settings: Settings) -> tuple[Path, Mapping[str, Any]]:
    from keiri_agent.examples import example_answers, example_names, example_plan
    from keiri_agent.plan.loader import resolve_plan_file

    if request.plan in example_names():
        answers = request.answers
        return example_plan(request.plan), (
            answers if answers is not None else example_answers(request.plan)
        )
    path = resolve_plan_file(request.plan, Path(settings.keiri_designs_dir))
    if path is None:
        raise BlockError(
            f"Plan「{request.plan}」が見つかりません。",
            code=ErrorCode.DEPENDENCY_NOT_FOUND,
            hint=f"サンプル名（{', '.join(example_names())}）か、KEIRI_DESIGNS_DIR からの"
            "相対名（拡張子なし、例: common/validation_flow）を指定してください。",
            details={"plan": request.plan},
        )
    return path, request.answers or {}


class _PlanProgress:
    """Turns a plan run's node events into the seed's progress steps."""

    def __init__(self, job: Job, total_nodes: int) -> None:
        self.job = job
        self.total = max(total_nodes, 1)
        self.finished = 0
        self.step = "interpret"

    def advance(self, step: str) -> None:
        self.job.stage(self.step, "done")
        self.step = step
        self.job.stage(step, "start")

    def see(self, event: RunEvent) -> None:
        data = event.to_dict()
        node = event.node_id or ""
        if event.event == "plan_start":
            self.advance("fetch")
        elif event.event == "node_start" and self.step == "fetch":
            if not str(data.get("block", "")).startswith(FETCH_BLOCK_PREFIXES):
                self.advance("convert")
        elif event.event in ("node_complete", "node_skipped") and "/" not in node:
            self.finished += 1
            if self.step == "convert":
                start, end = step_progress("convert", "start"), step_progress("convert", "done")
                share = min(self.finished / self.total, 1.0)
                self.job.stage("convert", "progress", round(start + (end - start) * share, 3))


def _run_plan(request: PlanRequest, path: Path, answers: Mapping[str, Any], job: Job) -> Outcome:
    from keiri_agent.plan.loader import load_source
    from keiri_agent.plan.models import Plan
    from keiri_agent.plan.runner import PlanRunner
    from keiri_agent.plan.values import OutputStore

    job.stage("interpret", "start")
    source = load_source(path)
    graph = source.raw.get("graph") if isinstance(source.raw, Mapping) else None
    progress = _PlanProgress(job, len(graph) if isinstance(graph, list) else 0)

    def relay(event: RunEvent) -> None:
        fields = {
            k: v
            for k, v in event.to_dict().items()
            if k not in ("id", "event", "run_id", "timestamp")
        }
        job.events.emit(event.event, **fields)
        progress.see(event)

    with PlanRunner(settings=job.settings) as runner:
        result = runner.run(
            source, vars=request.vars, answers=answers, on_event=relay, cancel=job.cancel
        )
    details = {"plan_id": result.plan_id, "run_id": result.run_id, "plan_status": result.status}
    if result.status == "cancelled":
        return Outcome("cancelled", error=cancelled_error().to_dict(), details=details)
    if result.status != "success":
        return Outcome("failed", error=_plan_error(result.status, result), details=details)
    if progress.step == "fetch":  # every node read input: nothing ran in the convert slot
        progress.advance("convert")
    progress.advance("finish")
    assert result.log_path is not None
    work = OutputStore(result.log_path).dir / "work"
    files = _copy_tree(work, job.files_dir) if work.is_dir() else []
    job.log(f"結果ファイル {len(files)} 件を保存しました。")
    model = Plan.model_validate(source.raw)
    texts = []
    for export in model.exports:
        node, _, port = export.from_.partition(".")
        value = result.outputs.get(node, {}).get(port)
        if isinstance(value, str) and value.strip():
            texts.append(value.strip())
    answer = "\n\n".join(texts) or f"Plan「{result.plan_id}」の実行が完了しました。"
    job.stage("finish", "done")
    return Outcome("success", answer=answer, files=files, details=details)


def _plan_error(status: str, result: Any) -> dict[str, Any]:
    if result.error is not None:
        error: dict[str, Any] = result.error.to_dict()
        return error
    if status == "waiting_input":
        nodes = [str(item.get("node_id", "")) for item in result.waiting]
        return BlockError(
            f"入力が必要なノードがあるため止まりました: {', '.join(nodes)}",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="answers に {ノードID: {項目ID: 値}} を指定して送り直してください。",
            details={"waiting": nodes},
        ).to_dict()
    return BlockError(
        f"Plan の実行が完了しませんでした（{status}）。",
        code=ErrorCode.INTERNAL_ERROR,
        hint="実行ログ（events）で失敗したノードを確認してください。",
    ).to_dict()


def _copy_tree(source: Path, target: Path) -> list[Path]:
    """Copy the regular files under ``source`` (symlinks are skipped) into ``target``."""
    copied = []
    for path in sorted(source.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
        copied.append(destination)
    return copied


# --- analysis (seed 000) ---------------------------------------------------------------------


class _CancellableEvents:
    """The task's stream for the analysis graph; every event is a point where cancel stops it."""

    def __init__(self, job: Job) -> None:
        self.job = job

    def emit(self, kind: str, /, **fields: Any) -> RunEvent | None:
        if self.job.cancel.is_set():
            raise cancelled_error()
        return self.job.events.emit(kind, **fields)


def _run_analysis(request: AnalysisRequest, files: list[Path], job: Job) -> Outcome:
    from keiri_agent.agents.analysis import AnalysisContext, AnalysisSession

    workspace = job.files_dir
    session = AnalysisSession(workspace=workspace, context=AnalysisContext(executor=job.executor))
    job.stage("fetch", "start")
    for path in files:
        info = session.add_file(path)
        job.log(f"読み込みました: {path.name}（{info.shape[0]:,} 行 × {info.shape[1]} 列）")
    job.stage("fetch", "done")
    job.stage("convert", "start")
    turn = session.ask(request.request, events=_CancellableEvents(job))
    job.stage("convert", "done")
    job.stage("finish", "start")
    details = {"loop_count": turn.loop_count, "next_action": turn.next_action}
    if turn.final_report is not None:
        answer = f"{turn.final_report.title}\n\n{turn.final_report.conclusion}"
    else:
        answer = turn.question or ""
    inputs = {path.name for path in files}  # the session keeps a copy of each data file
    outputs = [
        p
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and not p.is_symlink() and p.name not in inputs
    ]
    job.stage("finish", "done")
    return Outcome("success", answer=answer, files=outputs, details=details)
