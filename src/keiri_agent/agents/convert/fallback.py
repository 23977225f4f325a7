"""The CodeAct fallback of seed 003 (``fallback_node``): when convert, viz or fetch cannot do
the job, a model writes Python for it and the sandbox runs it.

Each run gets its own directory ``<KEIRI_CODEACT_ROOT>/<uuid>/`` (default ``/tmp/codeact``), the
only place the generated code may write (the sandbox's ``codeact`` profile: CPU 120 s, 512 MB,
10 MB per file). The fetched files are copied into its ``inputs/``; the first one that reads as
a table is also handed over as the DataFrame ``df``. The CodeAct graph (``codeact.py``) runs at
most ``MAX_CODE_TURNS`` executions and stops at the first one that ran and saved a file in the
requested format, checked by content (``verify``); a file in another format is not a result: the
model is told what is wrong with it and asked again. The right files are copied to the job's
output directory and are its result. A reply without code that asks something (a line ending
in "？") is CodeAct's question to the user: the outcome carries it and the task waits for the
answer. The run directory is removed afterwards. Cancellation (and the task's deadline) closes
the executor, which kills the running sandbox process.
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
)
from keiri_agent.agents.convert.sandbox_eval import (
    CANCEL_POLL_S,
    INPUTS_DIR,
    SandboxEval,
    cancelled_error,
    is_question,
    target_format,
)
from keiri_agent.errors import BlockError
from keiri_agent.events import EventEmitter
from keiri_agent.llm import LLMClient
from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.workspace import atomic_path, confine

__all__ = [
    "CANCEL_POLL_S",
    "INPUTS_DIR",
    "FallbackOutcome",
    "SandboxEval",
    "cancelled_error",
    "is_question",
    "run_fallback",
    "target_format",
]

MAX_TABLE_SUMMARIES = 5  # inputs read as tables for the prompt; the rest are only listed
PREVIEW_ROWS = 3
_TABLE_ERRORS = (UnsupportedFormatError, ValueError, KeyError, NotImplementedError, BlockError)


@dataclass
class FallbackOutcome:
    """What the CodeAct fallback produced."""

    files: list[Path]  # copies in the output directory, in the order they were made
    turns: int
    answer: str | None = None  # the model's words when it stopped without code
    last_error: str | None = None
    inputs: list[str] = field(default_factory=list)
    wrong_format: list[str] = field(default_factory=list)  # the last run's files, not as asked

    @property
    def question(self) -> str | None:
        """CodeAct's question to the user, when it stopped to ask one instead of finishing."""
        return self.answer if not self.files and is_question(self.answer) else None


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
    notes = "".join(f"\n- {note}" for note in frame.attrs.get("notes", ()))
    return (
        f"表 {len(frame):,} 行 × {frame.shape[1]} 列。列: {columns}"
        + (f"\n読み込み時の処理（df は処理済み）:{notes}" if notes else "")
        + f"\n先頭 {PREVIEW_ROWS} 行（CSV）:\n{head}"
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
    answers: Sequence[tuple[str, str]] = (),
    runs: list[dict[str, Any]] | None = None,
) -> FallbackOutcome:
    """Let CodeAct do ``job``; its saved files are copied to ``out_dir``.

    ``answers`` are the user's answers to CodeAct's earlier questions; every execution is
    appended to ``runs`` as it happens (kept by the caller even when the run fails later).
    """
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
        sandbox = SandboxEval(
            executor,
            workdir,
            cancel=cancel,
            target=target_format(job),
            step=job.action,
            runs=[] if runs is None else runs,
        )
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
            answers=answers,
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
            wrong_format=sandbox.wrong_format,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)  # scratch space; the results are copied out
