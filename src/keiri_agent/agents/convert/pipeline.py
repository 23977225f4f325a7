"""``run_convert``: one conversion or chart request from start to result (seed 003).

The one entry point the CLI (``keiri-agent convert``), the ``data.convert`` block, the Streamlit
変換 page and the SSE server share. It runs the graph (``graph.py``) with its events going to
``events`` (or to a new run log ``runs/convert/<timestamp>.jsonl``) and returns a
``ConvertResult``:

- ``success``: the files are in ``out_dir`` (the CodeAct fallback's too, with ``used_fallback``);
- ``failed``: a ``BlockError`` stopped the job (missing input, unreadable file, a fallback that
  made nothing); ``error`` is its ``to_dict()`` and an ``error`` event was emitted;
- ``cancelled``: ``cancel`` was set; a running sandbox process is killed.

LLM API errors (``LLMError``: the provider failed after its retries, or answered out of schema)
are raised after their ``error`` event, never turned into a result or sent to the fallback
(seed 003 §2). The CodeAct sandbox runs on ``executor``; without one, a private executor is
started when the fallback needs it and closed at the end. Cancellation closes the executor, so
give each run its own.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from keiri_agent.agents.convert.graph import (
    ConvertContext,
    ConvertState,
    ConvertSteps,
    build_graph,
)
from keiri_agent.agents.convert.models import ConvertJob
from keiri_agent.agents.convert.progress import STEPS
from keiri_agent.config import LLMRole, Settings, load_settings
from keiri_agent.errors import BlockError, ErrorCode, LLMError
from keiri_agent.events import EventEmitter, EventStream, open_run
from keiri_agent.llm import LLMClient, get_llm
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.workspace import new_session_dir

__all__ = ["AGENT_ID", "STEPS", "ConvertResult", "run_convert"]

AGENT_ID = "convert"
GRAPH_RECURSION_LIMIT = 20  # six nodes on the longest path


class ConvertResult(BaseModel):
    """What one request produced. ``answer`` is the Japanese reply for the user (no logs)."""

    status: Literal["success", "failed", "cancelled"]
    answer: str
    files: list[Path] = Field(default_factory=list)
    job: ConvertJob | None = None
    used_fallback: bool = False
    fallback_reason: str | None = None
    error: dict[str, Any] | None = None
    run_log: str | None = None


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
    local_root: Path | None = None,
) -> ConvertResult:
    """Run ``request`` over ``source`` (a path or ``s3://`` URL; else the one in the request).

    ``out_dir`` defaults to a new session directory under ``KEIRI_WORKSPACE_ROOT``. ``llm`` and
    ``codeact_llm`` default to the ``interpret`` and ``codeact`` roles' clients. ``s3_client``
    replaces the one built from the settings; ``steps`` the fetch/convert/render functions.
    ``local_root`` confines local sources (also paths written in the request text) to one
    directory: the API server passes the workspace root, so a request cannot read host files.
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
    flag = cancel if cancel is not None else threading.Event()
    try:
        target = (
            Path(out_dir) if out_dir is not None else new_session_dir(settings.keiri_workspace_root)
        )
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="keiri-convert-") as scratch:
            context = ConvertContext(
                settings=settings,
                llm=llm if llm is not None else get_llm(LLMRole.INTERPRET, settings=settings),
                codeact_llm=codeact_llm
                if codeact_llm is not None
                else get_llm(LLMRole.CODEACT, settings=settings),
                executor=sandbox,
                out_dir=target.absolute(),
                scratch_dir=Path(scratch),
                events=emitter,
                cancel=flag,
                s3_client=s3_client,
                local_root=local_root,
                steps=steps if steps is not None else ConvertSteps(),
            )
            return _invoke(request, source, context, run_log)
    finally:
        if own_executor:
            sandbox.close()
        if stream is not None:
            stream.close()


def _invoke(
    request: str, source: str | None, context: ConvertContext, run_log: str | None
) -> ConvertResult:
    state = ConvertState(request=request, source=source)
    events = context.events
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
        raise
    except BlockError as exc:
        step = context.current_step
        if exc.code == ErrorCode.CANCELLED:
            events.emit("stage", node_id=step, step=step, status="cancelled", progress=None)
            events.emit("log", node_id=step, msg="変換を取り消しました。", level="warning")
            return ConvertResult(
                status="cancelled",
                answer="変換を取り消しました。",
                job=context.job,
                used_fallback=context.fallback_reason is not None,
                fallback_reason=context.fallback_reason,
                error=exc.to_dict(),
                run_log=run_log,
            )
        events.emit("error", node_id=step, step=step, message=exc.message, error=exc.to_dict())
        answer = exc.message + (f"\n\nヒント: {exc.hint}" if exc.hint else "")
        return ConvertResult(
            status="failed",
            answer=answer,
            job=context.job,
            used_fallback=context.fallback_reason is not None,
            fallback_reason=context.fallback_reason,
            error=exc.to_dict(),
            run_log=run_log,
        )
    final = ConvertState.model_validate(raw) if isinstance(raw, dict) else raw
    return ConvertResult(
        status="success",
        answer=final.answer,
        files=list(final.files),
        job=final.job,
        used_fallback=final.used_fallback,
        fallback_reason=final.fallback_reason,
        run_log=run_log,
    )
