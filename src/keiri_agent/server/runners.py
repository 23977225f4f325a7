"""What each kind of task runs: a conversion, a plan run or an analysis, on one event stream.

``POST /agent/run`` takes one of four request bodies (``design``: plan generation, ``design_task``), told apart by ``kind`` (``convert`` when
it is left out, as in seed 003 §7). :func:`prepare` checks a request before a task is created
(an unknown plan or a data file the task may not read is a 4xx, not a failed task) and returns
the function that runs it (a :class:`~keiri_agent.server.jobs.Job` in, an ``JobResult`` out).
Plan runs live in ``plan_task``; files a task may read are decided by ``inputs``.

Progress is told with ``stage`` events on the seed's steps, interpret → fetch → convert/viz →
finish (seed 003 §3), with the conversion pipeline's progress values (``step_progress``), so
one progress bar serves every kind: the conversion pipeline emits them itself; for a plan run
they follow its nodes (validation, then input and file-reading nodes,
then the rest, then collecting the result files); an analysis loads its files, runs the ReAct
graph and collects the report (``unverified``, not ``success``, when no code run with visible
output backs it).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, input_error
from keiri_agent.events import NodeEvents
from keiri_agent.server.design_task import DesignRequest, prepare_design
from keiri_agent.server.inputs import TaskFiles, task_files
from keiri_agent.server.jobs import Job, JobResult, JobResultStatus, Runner, cancelled_error
from keiri_agent.server.plan_task import prepare_plan

__all__ = [
    "AnalysisRequest",
    "ConvertRequest",
    "DesignRequest",
    "Job",
    "JobResult",
    "PlanRequest",
    "Runner",
    "TaskRequest",
    "cancelled_error",
    "prepare",
    "prepare_convert_answer",
]

MAX_REQUEST_CHARS = 4000
MAX_DATA_FILES = 20


class ConvertRequest(BaseModel):
    """A conversion or chart request (seed 003): the pipeline interprets, fetches, converts.

    A local ``source`` is one of the task's uploads or a file of a shared data folder
    (``inputs``); an ``s3://`` URL must lie in a place the operator allows (the pipeline checks
    a URL written in the request text the same way). Without a source, the files uploaded with the
    request are the source.
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
    # A saved version of the plan (its full hash) to run instead of the working copy; schedules
    # and triggers pin the approved one (keiri_agent.schedule.pins).
    version: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class AnalysisRequest(BaseModel):
    """A question about data files (seed 000): uploaded, or named in a shared data folder."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["analysis"]
    request: str = Field(min_length=1, max_length=MAX_REQUEST_CHARS)
    # Names of uploads or shared data; may be empty when the files are uploaded with the request.
    files: list[str] = Field(default_factory=list, max_length=MAX_DATA_FILES)


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("kind", "convert"))
    return str(getattr(value, "kind", "convert"))


TaskRequest = Annotated[
    Annotated[ConvertRequest, Tag("convert")]
    | Annotated[PlanRequest, Tag("plan")]
    | Annotated[AnalysisRequest, Tag("analysis")]
    | Annotated[DesignRequest, Tag("design")],
    Discriminator(_kind),
]


def prepare(
    request: ConvertRequest | PlanRequest | AnalysisRequest | DesignRequest,
    settings: Settings,
    files: TaskFiles,
) -> Runner:
    """Check ``request`` (BlockError for a bad one) and return the function that runs it.

    ``files`` says where the task may read: its uploads and outputs, and the shared data
    folders (``inputs``).
    """
    if isinstance(request, PlanRequest):
        return prepare_plan(request, settings, files)
    if isinstance(request, DesignRequest):
        return prepare_design(request, settings)
    uploads = files.uploaded()
    if isinstance(request, AnalysisRequest):
        resolved = [
            files.resolve(name, "files" if len(request.files) == 1 else f"files[{index}]")
            for index, name in enumerate(request.files)
        ]
        data = resolved + uploads
        # Named as the user wrote them: the paths on the server are not theirs to see.
        shown = dict(zip(resolved, request.files, strict=True))
        not_files = [shown.get(path, path.name) for path in data if not path.is_file()]
        if not data or not_files:
            raise input_error(
                "分析するデータファイルがありません。"
                if not data
                else f"ファイルではありません: {', '.join(not_files)}",
                files.hint,
                not_files=not_files,
            )
        return partial(_run_analysis, request, data)
    if request.source is not None and request.source.strip().lower().startswith("s3://"):
        files.access.read_s3(request.source, "source")  # refused (403) before S3 is asked
    elif request.source is not None and "://" not in request.source:  # URLs: the pipeline checks
        try:  # a path leading where the task may not read is refused here (403)
            source = str(files.resolve(request.source, "source"))
        except BlockError as exc:
            if exc.details.get("reason") != "not_found":
                raise
            source = request.source  # found nowhere: the pipeline's fetch says so in the task
        request = request.model_copy(update={"source": source})
    elif request.source is None and uploads:
        chosen = uploads[0] if len(uploads) == 1 else files.uploads
        request = request.model_copy(update={"source": str(chosen)})
    return partial(_run_convert, request, None)


# --- conversion (seed 003) -------------------------------------------------------------------


def prepare_convert_answer(details: Mapping[str, Any], answer: str | None) -> Runner:
    """The runner continuing a conversion paused on CodeAct's question (its task's
    ``details``) with the user's ``answer``; BlockError for a missing or empty answer."""
    from keiri_agent.agents.convert.models import Continuation

    saved = Continuation.model_validate(details.get("continuation") or {})
    return partial(_run_convert, None, saved.answered(answer or ""))


def _run_convert(request: ConvertRequest | None, continuation: Any, job: Job) -> JobResult:
    # Imported here: the pipeline pulls in boto3 and the LLM stack, which plan runs never need.
    from keiri_agent.agents.convert.pipeline import run_convert

    files = task_files(job.directory, job.settings)
    try:
        result = run_convert(
            request.request if request is not None else "",
            source=request.source if request is not None else None,
            out_dir=job.files_dir,
            settings=job.settings,
            events=job.events,
            cancel=job.cancel,
            executor=job.executor,
            # Local sources, also one named in the request text: the task's files and shared data.
            access=files.access,
            continuation=continuation,
        )
    except BlockError as exc:  # an LLM failure: the task keeps what the run had produced
        produced = exc.details.pop("turn", None) or {}
        keep = ("job", "used_fallback", "fallback_reason", "code_runs")
        return JobResult(
            status="failed",
            error=files.hide(exc.to_dict()),
            details={key: produced.get(key) for key in keep},
        )
    details: dict[str, Any] = {
        "used_fallback": result.used_fallback,
        "fallback_reason": result.fallback_reason,
        "code_runs": result.code_runs,
    }
    if result.status == "waiting_input" and result.continuation is not None:
        details["question"] = result.question
        details["continuation"] = result.continuation.model_dump(mode="json")
        job.log(f"CodeAct からの質問です。回答を待っています: {result.question}", level="warning")
    return JobResult(  # its texts name files as the user sees them, not the server's folders
        status=result.status,
        answer=files.hide(result.answer),
        files=list(result.files),
        error=files.hide(result.error),
        details=details,
    )


# --- analysis (seed 000) ---------------------------------------------------------------------


def _run_analysis(request: AnalysisRequest, files: list[Path], job: Job) -> JobResult:
    """One analysis turn. A report that no run with visible output backs ends the task
    ``unverified``: its answer starts with what was not backed, ``details.grounded`` is false."""
    from keiri_agent.agents.analysis import AnalysisContext, AnalysisSession
    from keiri_agent.agents.analysis.honesty import UNGROUNDED_NOTE, unverified_error

    workspace = job.files_dir
    context = AnalysisContext(executor=job.executor, cancel=job.cancel)  # kills running code
    session = AnalysisSession(workspace=workspace, context=context)
    job.stage("fetch", "start")
    for path, info in zip(files, session.add_files(files), strict=True):  # all or none
        job.log(f"読み込みました: {path.name}（{info.shape[0]:,} 行 × {info.shape[1]} 列）")
        for note in info.notes:  # units made yen, total rows left out...
            job.log(f"{path.name}: {note}")
    job.stage("fetch", "done")
    job.stage("convert", "start")
    turn = session.ask(request.request, events=NodeEvents(job.events, job.check_cancelled))
    job.stage("convert", "done")
    job.stage("finish", "start")
    details: dict[str, Any] = {
        "loop_count": turn.loop_count,
        "next_action": turn.next_action,
        "grounded": turn.grounded,
        "japanese": turn.japanese,
        "code_runs": len(turn.execution_results),
        "failed_runs": sum(1 for run in turn.execution_results if not run.success),
    }
    if turn.final_report is not None:
        answer = f"{turn.final_report.title}\n\n{turn.final_report.conclusion}"
    else:
        answer = turn.question or ""
    if turn.status == "unverified":
        unverified = unverified_error()
        details["unverified"] = {
            "code": str(unverified.code),
            "message": unverified.message,
            "hint": unverified.hint,
        }
        job.log(unverified.message, level="warning")
        answer = f"{UNGROUNDED_NOTE}\n\n{answer}"
    inputs = set(session.copies)  # the session keeps a copy of each data file
    outputs = [
        p
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and not p.is_symlink() and p not in inputs
    ]
    job.stage("finish", "done")
    status: JobResultStatus = "unverified" if turn.status == "unverified" else "success"
    return JobResult(status, answer=answer, files=outputs, details=details)
