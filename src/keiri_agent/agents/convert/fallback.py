"""The CodeAct fallback of seed 003 (``fallback_node``): when convert, viz or fetch cannot do
the job, a model writes Python for it and the sandbox runs it.

Each run gets its own directory ``<KEIRI_CODEACT_ROOT>/<uuid>/`` (default ``/tmp/codeact``), the
only place the generated code may write (the sandbox's ``codeact`` profile: CPU 120 s, 512 MB,
10 MB per file). The fetched files are copied into its ``inputs/``; the first one that reads as
a table is also handed over as the DataFrame ``df``. The CodeAct graph (``codeact.py``) runs at
most ``MAX_CODE_TURNS`` code blocks and stops at the first one that ran and saved files; those
files are copied to the job's output directory and are its result. The run directory is removed
afterwards. Cancellation closes the executor, which kills the running sandbox process.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, cast

import pandas as pd
from langchain_core.messages import HumanMessage

from keiri_agent.agents.convert.codeact import (
    MAX_CODE_TURNS,
    CodeActState,
    ExecOutput,
    create_codeact,
    last_answer,
)
from keiri_agent.agents.convert.formats import read_table
from keiri_agent.agents.convert.models import (
    ConvertJob,
    FetchedFile,
    UnsupportedFormatError,
)
from keiri_agent.agents.convert.prompts import (
    InputSummary,
    codeact_prompt,
    codeact_task,
    exec_feedback,
)
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventEmitter
from keiri_agent.llm import LLMClient
from keiri_agent.sandbox import CODEACT, ExecutionOutcome, SandboxExecutor, SandboxProfile
from keiri_agent.workspace import atomic_path, confine

__all__ = [
    "CANCEL_POLL_S",
    "INPUTS_DIR",
    "FallbackOutcome",
    "SandboxEval",
    "cancelled_error",
    "run_fallback",
]

INPUTS_DIR = "inputs"
CANCEL_POLL_S = 0.05  # how often a running sandbox action looks at the cancel flag
MAX_TABLE_SUMMARIES = 5  # inputs read as tables for the prompt; the rest are only listed
PREVIEW_ROWS = 3
_TABLE_ERRORS = (UnsupportedFormatError, ValueError, KeyError, NotImplementedError, BlockError)


def cancelled_error(step: str) -> BlockError:
    """The CANCELLED error of a conversion stopped at ``step``."""
    return BlockError(
        "変換は取り消されました。",
        code=ErrorCode.CANCELLED,
        hint="必要であれば、同じ依頼をもう一度実行してください。",
        details={"step": step},
        recoverable=True,
    )


class SandboxEval:
    """CodeAct's ``eval_fn`` on the sandbox: one workdir for every turn, fresh process each.

    ``context`` may only hold DataFrames (they become the action's inputs): a process boundary
    cannot carry functions or live objects, so nothing else is passed, and ``new_vars`` is
    always empty. Files saved by successful runs (outside ``inputs/``) are collected in order.
    """

    def __init__(
        self,
        executor: SandboxExecutor,
        workdir: Path,
        *,
        profile: SandboxProfile = CODEACT,
        cancel: threading.Event | None = None,
    ) -> None:
        self.executor = executor
        self.workdir = workdir
        self.profile = profile
        self.cancel = cancel
        self.produced: dict[str, None] = {}
        self.last_success = False
        self.last_error: str | None = None

    def __call__(self, code: str, context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        inputs: dict[str, pd.DataFrame] = {}
        for name, value in context.items():
            if not isinstance(value, pd.DataFrame):
                raise BlockError(
                    f"CodeAct の変数 '{name}'（{type(value).__name__}）はサンドボックスに渡せません。",
                    code=ErrorCode.INTERNAL_ERROR,
                    hint="サンドボックスには DataFrame だけを渡せます。ツール関数は使えません。",
                    details={"variable": name},
                )
            inputs[name] = value
        outcome = self._run(code, inputs)
        files = [f for f in outcome.files_created if PurePosixPath(f).parts[0] != INPUTS_DIR]
        error = _error_text(outcome)
        self.last_success = outcome.success and bool(files)
        self.last_error = error
        if outcome.success:
            self.produced.update(dict.fromkeys(files))
        text = exec_feedback(
            success=outcome.success, stdout=outcome.stdout, error=error, files=files
        )
        report = ExecOutput(
            text,
            stdout=outcome.stdout,
            stderr=outcome.stderr,
            success=outcome.success,
            files=files,
        )
        return report, {}

    def _run(self, code: str, inputs: dict[str, pd.DataFrame]) -> ExecutionOutcome:
        def action() -> ExecutionOutcome:
            return self.executor.run(
                code, workdir=self.workdir, profile=self.profile, inputs=inputs
            )

        if self.cancel is None:
            return action()
        if self.cancel.is_set():
            raise cancelled_error("fallback")
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["outcome"] = action()
            except BaseException as exc:  # handed to the calling thread below
                box["error"] = exc

        worker = threading.Thread(target=work, name="keiri-codeact-action", daemon=True)
        worker.start()
        while worker.is_alive():
            if self.cancel.wait(CANCEL_POLL_S):
                # Closing the executor stops its fork server, which kills every action it
                # runs; the action's own error is the expected consequence, not a failure.
                self.executor.close()
                worker.join()
                raise cancelled_error("fallback")
        worker.join()
        if "error" in box:
            raise box["error"]
        outcome: ExecutionOutcome = box["outcome"]
        return outcome


def _error_text(outcome: ExecutionOutcome) -> str | None:
    if outcome.error is not None:
        return "\n".join(
            [f"{outcome.error.type}: {outcome.error.message}", *outcome.error.traceback]
        )
    if outcome.killed_by is not None:
        return outcome.summary_ja()
    return None


@dataclass
class FallbackOutcome:
    """What the CodeAct fallback produced."""

    files: list[Path]  # copies in the output directory, in the order they were made
    turns: int
    answer: str | None = None  # the model's words when it stopped without code
    last_error: str | None = None
    inputs: list[str] = field(default_factory=list)


def _new_workdir(root: Path) -> Path:
    root = root.expanduser().absolute()
    if not root.exists():
        # The sandbox's unprivileged user must be able to pass through the root.
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o755)
    workdir = root / uuid.uuid4().hex
    workdir.mkdir(mode=0o700)
    return workdir


def _table_summary(frame: pd.DataFrame) -> str:
    columns = ", ".join(f"{name} ({dtype})" for name, dtype in frame.dtypes.items())
    head = frame.head(PREVIEW_ROWS).to_csv(index=False).strip()
    return (
        f"表 {len(frame):,} 行 × {frame.shape[1]} 列。列: {columns}\n先頭 {PREVIEW_ROWS} 行（CSV）:\n"
        f"{head}"
    )


def _arrow_ready(frame: pd.DataFrame) -> str | None:
    """Why ``frame`` cannot travel to the sandbox (Arrow), or None when it can."""
    import pyarrow as pa

    try:
        pa.Table.from_pandas(frame, preserve_index=True)
    except (pa.ArrowException, ValueError, TypeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _stage_inputs(
    fetched: Sequence[FetchedFile], workdir: Path
) -> tuple[list[InputSummary], dict[str, Any], str | None]:
    """Copy the inputs into ``workdir/inputs``; summaries, the ``df`` context and its path."""
    summaries: list[InputSummary] = []
    context: dict[str, Any] = {}
    df_relpath: str | None = None
    for index, item in enumerate(fetched):
        rel = f"{INPUTS_DIR}/{PurePosixPath(item.name).as_posix()}"
        target = confine(workdir, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(item.path, target)
        table: str | None = None
        problem: str | None = None
        if index < MAX_TABLE_SUMMARIES:
            try:
                frame = read_table(item.path)
            except _TABLE_ERRORS as exc:
                problem = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            else:
                table = _table_summary(frame)
                if df_relpath is None:
                    problem = _arrow_ready(frame)
                    if problem is None:
                        context["df"] = frame
                        df_relpath = rel
        summaries.append(InputSummary(rel, item.size, table=table, problem=problem))
    return summaries, context, df_relpath


def _collect(workdir: Path, produced: Sequence[str], out_dir: Path) -> list[Path]:
    """Copy the produced files into ``out_dir`` (replacing older files of the same name, as
    the standard converter does; two produced files with one name get ``-2``, ``-3``...)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    taken: set[str] = set()
    for rel in produced:
        source = workdir / rel
        if source.is_symlink() or not source.is_file():
            continue  # overwritten by a directory or removed by a later run
        name = PurePosixPath(rel).name
        stem, suffix = Path(name).stem, Path(name).suffix
        n = 2
        while name.casefold() in taken:
            name, n = f"{stem}-{n}{suffix}", n + 1
        taken.add(name.casefold())
        target = confine(out_dir, name)
        with atomic_path(target, suffix=suffix or ".tmp") as tmp:
            shutil.copyfile(source, tmp)
        files.append(target)
    return files


def default_output_name(job: ConvertJob, fetched: Sequence[FetchedFile]) -> str:
    """The file name (without extension) the fallback is asked to write."""
    if job.output_name:
        return Path(job.output_name).stem or "output"
    if job.action == "viz":
        return "chart"
    if len(fetched) == 1:
        return PurePosixPath(fetched[0].name).stem or "output"
    return "output"


def run_fallback(
    job: ConvertJob,
    *,
    request: str,
    reason: str,
    fetched: Sequence[FetchedFile],
    out_dir: Path,
    codeact_root: Path,
    llm: LLMClient,
    executor: SandboxExecutor,
    events: EventEmitter,
    cancel: threading.Event | None = None,
    node_id: str = "fallback",
    max_turns: int = MAX_CODE_TURNS,
) -> FallbackOutcome:
    """Let CodeAct do ``job``; its saved files are copied to ``out_dir``."""
    workdir = _new_workdir(codeact_root)
    try:
        summaries, context, df_relpath = _stage_inputs(fetched, workdir)
        events.emit(
            "log",
            node_id=node_id,
            msg=f"CodeAct の作業場所: {workdir}（入力 {len(summaries)} 件"
            + (f"、df = {df_relpath}" if df_relpath else "、df なし")
            + "）",
        )
        sandbox = SandboxEval(executor, workdir, cancel=cancel)
        graph = create_codeact(
            llm,
            [],
            sandbox,
            prompt=codeact_prompt(str(workdir), df_relpath),
            max_turns=max_turns,
            done=lambda _state: sandbox.last_success,
            events=events,
            node_id=node_id,
        ).compile()
        task = codeact_task(
            job,
            request=request,
            reason=reason,
            workdir=str(workdir),
            inputs=summaries,
            output_name=default_output_name(job, fetched),
        )
        start: CodeActState = {"messages": [HumanMessage(task)], "context": context, "turns": 0}
        raw = graph.invoke(start, config={"recursion_limit": 4 * max_turns + 4})
        final = cast(CodeActState, raw)
        return FallbackOutcome(
            files=_collect(workdir, list(sandbox.produced), out_dir),
            turns=int(final.get("turns") or 0),
            answer=last_answer(final),
            last_error=sandbox.last_error,
            inputs=[s.relpath for s in summaries],
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)  # scratch space; the results are copied out
