"""Run logs read back: find a run by id, collect its finished outputs, answers files.

Resume and rerun start a new run that reuses the outputs an earlier run logged (exactly, from
``node_complete.stored`` or ``outputs_file``), so finished nodes are never executed twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, get_args

import yaml

from keiri_agent.errors import BlockError, ErrorCode, UserFile, check_choice, input_error
from keiri_agent.events.models import (
    FileWrite,
    NodeComplete,
    NodeWaiting,
    PlanComplete,
    PlanStart,
    RunStatus,
)
from keiri_agent.events.runlog import replay
from keiri_agent.plan._dsl.loader import load_yaml
from keiri_agent.plan._graph.names import PlanNames
from keiri_agent.plan._run.engine import Reused
from keiri_agent.plan._run.output_store import OutputStore

__all__ = [
    "RUN_STATUSES",
    "AnswersFile",
    "RunRecord",
    "RunSummary",
    "find_run",
    "list_plan_runs",
    "load_run",
]

# A plan_complete status, or "incomplete": the log ends without one (running, or the process died).
RUN_STATUSES: tuple[str, ...] = (*get_args(RunStatus), "incomplete")
ANSWERS_FILE = UserFile(
    "回答ファイル {file} が見つかりません。",
    hint="--answers に YAML ファイルのパスを指定してください。",
    unreadable="回答ファイル {file} を読めません",
    unreadable_hint="ノードID → {入力ID: 値} の形の YAML にしてください。",
    unreadable_code=ErrorCode.INPUT_VALIDATION_FAILED,
)


class AnswersFile:
    """Answers for UI nodes from YAML: ``{node_id: {requirement_id: value, ...}}``.

    Keys may be qualified (``loop[2]/approve``) to answer one iteration; a plain node id answers
    every iteration. ``approved`` / ``response`` answer confirm / inquire modes.
    """

    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.answers = {str(k): v for k, v in answers.items()}

    @classmethod
    def load(cls, path: Path | str) -> AnswersFile:
        file = Path(path)
        with ANSWERS_FILE.reading(file, errors=(OSError, UnicodeDecodeError, yaml.YAMLError)):
            data = load_yaml(file.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise input_error(
                f"回答ファイル {file} の形式が不正です。",
                "例:\ncollect_inputs:\n  workbook: data/bank.xlsx\n  proceed: true",
                file=str(file),
            )
        return cls(data)

    def answers_for(self, node_path: str, node_id: str) -> Mapping[str, Any] | None:
        found = self.answers.get(node_path)
        if found is None:
            found = self.answers.get(node_id)
        return found


@dataclass
class RunRecord:
    """What a finished (or paused) run left in its log. What its ``plan_start`` and last
    ``plan_complete`` say (run id, plan, vars, status) is read from those events, not copied."""

    log_path: Path
    start: PlanStart
    completed: dict[str, Reused] = field(default_factory=dict)
    executed: list[str] = field(default_factory=list)  # node paths that ran (node_start)
    seen: set[str] = field(default_factory=set)  # every node path the log mentions
    end: PlanComplete | None = None  # the last plan_complete (None: the run did not end)
    file_writes: list[FileWrite] = field(default_factory=list)  # for recovery after a kill
    waiting: list[NodeWaiting] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.start.run_id

    @property
    def plan_id(self) -> str:
        return self.start.plan_id

    @property
    def plan_file(self) -> Path | None:
        """The snapshot of the plan the run executed."""
        return (self.log_path.parent / self.start.plan_file) if self.start.plan_file else None

    @property
    def vars(self) -> dict[str, Any]:
        """The log's display copy of the vars (:meth:`exact_vars` gives the exact ones)."""
        return dict(self.start.inputs.get("vars") or {})

    @property
    def vars_file(self) -> str | None:
        """Where the exact vars are stored (relative to the log's folder)."""
        return self.start.vars_file

    @property
    def vars_saved(self) -> bool | None:
        """False: the exact vars could not be stored; None: a log from before they were."""
        return self.start.vars_saved

    @property
    def status(self) -> RunStatus | None:
        """How the run ended (None: the log has no plan_complete)."""
        return self.end.status if self.end is not None else None

    def exact_vars(self, names: PlanNames | None = None) -> dict[str, Any]:
        """The vars the run was started with, exactly, for a resume or rerun (BlockError when
        the log only has a display copy that lost part of them; it names a var as ``names``,
        the run's plan, names it to a person)."""
        if self.vars_file is not None:
            return OutputStore(self.log_path).decode_file(self.vars_file)
        if self.vars_saved is False:
            raise self._vars_lost(
                "保存できない値（秘密情報など）を含んでいたため、設定値（vars）が記録されていません",
                [],
            )
        cut = [name for name, value in self.vars.items() if _display_only(value)]
        if cut:  # an older log: its display copy is all there is
            shown = "".join(f"「{(names or PlanNames()).var(name)}」" for name in cut)
            raise self._vars_lost(
                f"設定値{shown}が表示用に省略された形でしか記録されていません", cut
            )
        return dict(self.vars)

    def _vars_lost(self, reason: str, cut: list[str]) -> BlockError:
        flags = "".join(f" --var {name}=…" for name in cut)  # what the user types
        return BlockError(
            f"実行 {self.run_id} は元の入力を正確に復元できないため、再開・再実行できません（{reason}）。",
            code=ErrorCode.DEPENDENCY_NOT_FOUND,
            hint="同じ設定値を指定して `keiri-agent plan run"
            + (f" …{flags}" if flags else "")
            + "` で最初から実行し直してください（大きな値は --vars FILE で渡せます）。",
            details={"run_id": self.run_id, "log": str(self.log_path), "vars": cut},
        )


# What summarize_value leaves in place of a value it cut or could not show.
_CUT_TEXT = re.compile(r"…\(全\d+(文字|件)\)$")
_DESCRIBED = re.compile(r"^<[A-Za-z_][\w.]* (\d+(x\d+)*|\d+ (keys|items))>$")


def _display_only(value: Any) -> bool:
    """Whether ``value`` (from an older log's display copy) holds a summary, not the value."""
    if isinstance(value, str):
        return bool(_CUT_TEXT.search(value) or _DESCRIBED.match(value))
    if isinstance(value, list):
        return any(_display_only(v) for v in value)
    if isinstance(value, dict):
        return "…" in value or any(_display_only(v) for v in value.values())
    return False


def find_run(run: str | Path, runs_dir: Path) -> Path:
    """The log of run ``run`` (a run id or a path to a ``.jsonl`` log)."""
    candidate = Path(run)
    if candidate.suffix == ".jsonl" and candidate.is_file():
        return candidate
    needle = f'"run_id": "{run}"'
    if runs_dir.is_dir():
        for log in sorted(runs_dir.rglob("*.jsonl"), reverse=True):
            with log.open("r", encoding="utf-8") as handle:
                first = handle.readline()
            if needle in first and '"plan_start"' in first:
                return log
    raise input_error(
        f"実行 {run} のログが {runs_dir} に見つかりません。",
        "`keiri-agent plan run` が表示した実行 ID（run_ で始まるもの）か、ログファイル（.jsonl）のパスを指定してください。",
        run=str(run),
        runs_dir=str(runs_dir),
    )


def load_run(log_path: Path) -> RunRecord:
    """What a run left in its log, read event by event (the events themselves are not kept)."""
    start: PlanStart | None = None
    end: PlanComplete | None = None
    store = OutputStore(log_path)
    completed: dict[str, Reused] = {}
    executed: list[str] = []
    seen: set[str] = set()
    file_writes: list[FileWrite] = []
    waiting: list[NodeWaiting] = []
    for event in replay(log_path):
        if event.node_id:
            seen.add(event.node_id)
        if event.event == "node_start" and event.node_id:
            executed.append(event.node_id)
        if isinstance(event, PlanStart):
            start = start or event
        elif isinstance(event, PlanComplete):
            end = event
        elif isinstance(event, FileWrite):
            file_writes.append(event)
        elif isinstance(event, NodeWaiting) and event.node_id:
            waiting.append(event)
        elif isinstance(event, NodeComplete) and event.node_id:
            if event.stored is not None:
                outputs = dict(event.stored)
            elif event.outputs_file:
                outputs = store.decode_file(event.outputs_file)
            else:
                continue  # not persisted: the node runs again
            completed[event.node_id] = Reused(outputs, event.stored, event.outputs_file)
    if start is None:
        raise input_error(
            f"{log_path} は Plan の実行ログではありません（plan_start がありません）。",
            "`keiri-agent plan run` が作ったログを指定してください。",
            path=str(log_path),
        )
    return RunRecord(
        log_path=log_path,
        start=start,
        completed=completed,
        executed=executed,
        seen=seen,
        end=end,
        file_writes=file_writes,
        waiting=waiting,
    )


@dataclass
class RunSummary:
    """One plan run as a list shows it: what ran, when, how it ended, and what failed."""

    run_id: str
    plan_id: str
    started: datetime
    status: RunStatus | Literal["incomplete"]  # incomplete: the log ends without plan_complete
    log_path: Path
    first_node: str | None = None  # the first node the run started (where a rerun can begin)
    failed_node: str | None = None  # the node whose error ended the run
    error: dict[str, Any] | None = None
    resume_of: str | None = None
    rerun_from: str | None = None
    plan_hash: str | None = None  # the version that ran (None: a log from before versions)
    approval: dict[str, Any] | None = None  # its approval when the run started
    started_by: str | None = None


def summarize_run(log_path: Path) -> RunSummary:
    """The summary of one run log (BlockError when it is not a readable plan run log)."""
    record = load_run(log_path)
    start, end = record.start, record.end
    summary = RunSummary(
        run_id=record.run_id,
        plan_id=record.plan_id,
        started=start.timestamp,
        status=record.status or "incomplete",
        log_path=log_path,
        first_node=record.executed[0] if record.executed else None,
        error=dict(end.error) if end is not None and end.error else None,
        resume_of=start.resume_of,
        rerun_from=start.rerun_from,
        plan_hash=start.plan_hash,
        approval=dict(start.approval) if start.approval else None,
        started_by=start.started_by,
    )
    if summary.error is not None:
        node = (summary.error.get("details") or {}).get("node_id")
        summary.failed_node = str(node) if node else None
    return summary


def list_plan_runs(
    runs_dir: Path, *, plan_id: str | None = None, status: str | None = None
) -> tuple[list[RunSummary], list[BlockError]]:
    """The plan runs logged under ``runs_dir``, newest first, and the logs that could not be
    read (each as the BlockError that says why). Logs of agents (not plans) are not runs."""
    if status is not None:
        check_choice("--status", status, RUN_STATUSES)
    runs: list[RunSummary] = []
    unreadable: list[BlockError] = []
    if not runs_dir.is_dir():
        return runs, unreadable
    for log in runs_dir.rglob("*.jsonl"):
        if not log.is_file() or not _starts_a_plan_run(log):
            continue
        try:
            summary = summarize_run(log)
        except BlockError as exc:
            unreadable.append(exc)
            continue
        if plan_id is not None and summary.plan_id != plan_id:
            continue
        if status is not None and summary.status != status:
            continue
        runs.append(summary)
    runs.sort(key=lambda run: (run.started, run.run_id), reverse=True)
    return runs, unreadable


def _starts_a_plan_run(log: Path) -> bool:
    with log.open("r", encoding="utf-8", errors="replace") as handle:
        return '"plan_start"' in handle.readline()
