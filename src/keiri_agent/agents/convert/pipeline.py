"""``run_convert``: one conversion or chart request from start to result (seed 003).

The one entry point the CLI (``keiri-agent convert``), the ``data.convert`` block, the Streamlit
変換 page and the SSE server share. It runs the graph (``graph.py``) with its events going to
``events`` (or to a new run log ``runs/convert/<timestamp>.jsonl``) and returns a
``ConvertResult``:

- ``success``: the files are in ``out_dir``, each checked to be in the requested format by
  content (the CodeAct fallback's too, with ``used_fallback``);
- ``waiting_input``: CodeAct asked the user something (``question``); ``continuation`` holds
  what is needed to go on, also saved as ``out_dir/QUESTION_FILE``: pass
  ``continuation=result.continuation.answered(answer)`` to continue;
- ``failed``: a ``BlockError`` stopped the job (missing input, a fetch that failed after its
  retries, unreadable file, a fallback that made nothing in the requested format, the task's
  deadline); ``error`` is its ``to_dict()`` and an ``error`` event was emitted;
- ``cancelled``: ``cancel`` was set; a running sandbox process is killed.

The files reach ``out_dir`` only with ``success``: the steps write into a staging folder inside
it (``agents.staging``) that is published at the end, so a cancel, the deadline, a failure or
the process's Ctrl+C at any moment leaves ``out_dir`` as it was (a new one is removed again).

The whole task has a deadline, ``KEIRI_CONVERT_TIMEOUT_S``: when it passes, the LLM call in
flight is aborted and a running sandbox process is killed, and the result is ``failed`` with a
``TIMEOUT_ERROR``. ``code_runs`` lists CodeAct's executions (code, success, stdout, the error).

LLM API errors (``LLMError``: the provider failed after its retries, or answered out of schema)
are raised after their ``error`` event, never turned into a result or sent to the fallback
(seed 003 §2); what the run had produced is in the error's ``details["turn"]`` (the result's
keys with ``status: error``). The CodeAct sandbox runs on ``executor``; without one, a private
executor is started when the fallback needs it and closed at the end. Cancellation closes the
executor, so give each run its own.
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from keiri_agent.agents.convert.failure import deadline_error
from keiri_agent.agents.convert.graph import (
    ConvertContext,
    ConvertState,
    ConvertSteps,
    build_graph,
)
from keiri_agent.agents.convert.models import Continuation, ConvertJob
from keiri_agent.agents.convert.progress import STEPS
from keiri_agent.agents.staging import staged
from keiri_agent.config import LLMRole, Settings, load_settings
from keiri_agent.errors import BlockError, ErrorCode, LLMError, UserFile
from keiri_agent.events import EventEmitter, EventStream, open_run
from keiri_agent.file_access import FileAccess
from keiri_agent.llm import LLMClient, cancellable, get_llm
from keiri_agent.privacy import job_scope
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.stop_flag import StopFlag
from keiri_agent.workspace import atomic_path, new_session_dir

__all__ = [
    "AGENT_ID",
    "QUESTION_FILE",
    "STEPS",
    "ConvertResult",
    "load_continuation",
    "run_convert",
]

AGENT_ID = "convert"
GRAPH_RECURSION_LIMIT = 20  # six nodes on the longest path
QUESTION_FILE = "convert-question.json"  # a paused task's continuation, in its output folder
CONTINUATION_FILE = UserFile(
    f"{{file}} に回答待ちの変換がありません（{QUESTION_FILE} が見つかりません）。",
    hint="質問が表示されたときの「回答して続けるには」のコマンドにある出力先フォルダーを指定してください。",
    unreadable="{file} を読み取れません",
    unreadable_hint="同じ依頼を最初から実行し直してください。",
    missing_key="out_dir",
)


class ConvertResult(BaseModel):
    """What one request produced. ``answer`` is the Japanese reply for the user (no logs)."""

    status: Literal["success", "failed", "cancelled", "waiting_input"]
    answer: str
    files: list[Path] = Field(default_factory=list)
    job: ConvertJob | None = None
    used_fallback: bool = False
    fallback_reason: str | None = None
    error: dict[str, Any] | None = None
    run_log: str | None = None
    question: str | None = None  # CodeAct's question, when status is waiting_input
    continuation: Continuation | None = None
    code_runs: list[dict[str, Any]] = Field(default_factory=list)
    # Personal data masked before the LLM calls: kind → distinct values (never the values).
    masked: dict[str, int] = Field(default_factory=dict)


def load_continuation(out_dir: Path) -> Continuation:
    """The continuation a paused conversion saved in ``out_dir`` (BlockError when none)."""
    path = Path(out_dir) / QUESTION_FILE
    with CONTINUATION_FILE.reading(path, errors=(OSError, ValueError), named=out_dir):
        return Continuation.model_validate_json(path.read_bytes())


def run_convert(
    request: str,
    *,
    source: str | None = None,
    out_dir: Path | None = None,
    settings: Settings | None = None,
    events: EventEmitter | None = None,
    cancel: threading.Event | None = None,
    llm: LLMClient | None = None,
    codeact_llm: LLMClient | None = None,
    executor: SandboxExecutor | None = None,
    s3_client: Any = None,
    steps: ConvertSteps | None = None,
    access: FileAccess | None = None,
    continuation: Continuation | None = None,
) -> ConvertResult:
    """Run ``request`` over ``source`` (a path or ``s3://`` URL; else the one in the request).

    ``out_dir`` defaults to a new session directory under ``KEIRI_WORKSPACE_ROOT`` (removed again
    when the run ends with nothing in it: failed or cancelled). ``llm`` and
    ``codeact_llm`` default to the ``interpret`` and ``codeact`` roles' clients. ``s3_client``
    replaces the one built from the settings; ``steps`` the fetch/convert/render functions.
    ``access`` says where local sources (also paths written in the request text) may be read:
    the API server passes each task's, so a request reads only its own files and shared data.
    ``continuation`` (answered) continues a task paused on CodeAct's question.
    """
    settings = settings if settings is not None else load_settings()
    stream: EventStream | None = None
    if events is None:
        stream = open_run(AGENT_ID, runs_dir=settings.keiri_runs_dir)
    emitter: EventEmitter = events if events is not None else stream  # type: ignore[assignment]
    log_path = getattr(emitter, "log_path", None)
    run_log = str(log_path) if log_path is not None else None
    own_executor = executor is None
    sandbox = executor if executor is not None else SandboxExecutor()
    timeout_s = settings.keiri_convert_timeout_s
    # Set by the caller's cancel or the deadline, read from both at each look: a run released
    # by the cancel meets it at its next check, never after publishing.
    stop = StopFlag(
        cancel if cancel is not None else threading.Event(), time.monotonic() + timeout_s
    )
    try:
        target = (
            Path(out_dir) if out_dir is not None else new_session_dir(settings.keiri_workspace_root)
        )
        with (
            # A session folder made for this run is removed again when it ends with nothing.
            staged(target, made=out_dir is None) as staging,
            tempfile.TemporaryDirectory(prefix="keiri-convert-") as scratch,
            cancellable(stop),  # the deadline and a cancel abort the LLM call in flight too
            # One request, one set of placeholders; the run's log masks what they hide.
            job_scope(
                learnt=getattr(getattr(emitter, "redactor", None), "learn_personal", None)
            ) as vault,
        ):
            context = ConvertContext(
                settings=settings,
                llm=llm if llm is not None else get_llm(LLMRole.INTERPRET, settings=settings),
                codeact_llm=codeact_llm
                if codeact_llm is not None
                else get_llm(LLMRole.CODEACT, settings=settings),
                executor=sandbox,
                out_dir=target.absolute(),
                scratch_dir=Path(scratch),
                work_dir=staging.path.absolute(),
                events=emitter,
                cancel=stop,
                s3_client=s3_client,
                access=access if access is not None else FileAccess(),
                steps=steps if steps is not None else ConvertSteps(),
            )
            state = ConvertState(request=request, source=source)
            if continuation is not None:
                # The paused state's fields back, its open question left out (it is answered).
                kept = {name: value for name, value in continuation if name != "question"}
                state = ConvertState(**kept, used_fallback=True)
            result = _invoke(state, context, run_log, stop, timeout_s)
            result.files = staging.publish(result.files)  # none unless it succeeded
            result.masked = vault.counts()
            _keep_continuation(target, result)
            return result
    finally:
        if own_executor:
            sandbox.close()
        if stream is not None:
            stream.close()


def _keep_continuation(out_dir: Path, result: ConvertResult) -> None:
    """Save a paused task's continuation in its folder; remove it once the task moved on."""
    path = out_dir / QUESTION_FILE
    if result.continuation is None:
        path.unlink(missing_ok=True)
        return
    with atomic_path(path) as tmp:
        tmp.write_text(result.continuation.model_dump_json(indent=2), encoding="utf-8")


def _partial(context: ConvertContext, run_log: str | None, status: str) -> dict[str, Any]:
    """What a run that ended in an exception had produced, in the result's keys."""
    return {
        "status": status,
        "answer": "",
        "files": [],
        "job": context.job.model_dump() if context.job else None,
        "used_fallback": context.fallback_reason is not None,
        "fallback_reason": context.fallback_reason,
        "run_log": run_log,
        "code_runs": list(context.code_runs),
    }


def _invoke(
    state: ConvertState,
    context: ConvertContext,
    run_log: str | None,
    stop: StopFlag,
    timeout_s: float,
) -> ConvertResult:
    events = context.events
    common: dict[str, Any] = {"run_log": run_log, "code_runs": context.code_runs}
    try:
        raw = build_graph().invoke(
            state, context=context, config={"recursion_limit": GRAPH_RECURSION_LIMIT}
        )
    except LLMError as exc:
        events.emit(
            "error",
            node_id=context.current_step,
            step=context.current_step,
            message=exc.message,
            error=exc.to_dict(),
        )
        exc.details["turn"] = _partial(context, run_log, "error")
        raise
    except BlockError as exc:
        step = context.current_step
        if exc.code == ErrorCode.CANCELLED and stop.expired:
            exc = deadline_error(timeout_s, step)
        fallback = {
            "job": context.job,
            "used_fallback": context.fallback_reason is not None,
            "fallback_reason": context.fallback_reason,
            "error": exc.to_dict(),
        }
        if exc.code == ErrorCode.CANCELLED:
            events.emit("stage", node_id=step, step=step, status="cancelled", progress=None)
            events.emit("log", node_id=step, msg="変換を取り消しました。", level="warning")
            return ConvertResult(
                status="cancelled", answer="変換を取り消しました。", **fallback, **common
            )
        events.emit("error", node_id=step, step=step, message=exc.message, error=exc.to_dict())
        answer = exc.message + (f"\n\nヒント: {exc.hint}" if exc.hint else "")
        return ConvertResult(status="failed", answer=answer, **fallback, **common)
    final = ConvertState.model_validate(raw) if isinstance(raw, dict) else raw
    if final.question:
        assert final.job is not None  # the fallback only runs on an interpreted job
        # A continuation is the part of the state that outlives the pause: the same fields.
        continuation = Continuation(
            **{name: getattr(final, name) for name in Continuation.model_fields}
        )
        return ConvertResult(
            status="waiting_input",
            answer=f"CodeAct からの質問: {final.question}",
            job=final.job,
            used_fallback=True,
            fallback_reason=final.fallback_reason,
            question=final.question,
            continuation=continuation,
            **common,
        )
    return ConvertResult(
        status="success",
        answer=final.answer,
        files=list(final.files),
        job=final.job,
        used_fallback=final.used_fallback,
        fallback_reason=final.fallback_reason,
        **common,
    )
