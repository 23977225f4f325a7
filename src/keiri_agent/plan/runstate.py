"""Run logs read back: find a run by id, collect its finished outputs, answers files.

Resume and rerun start a new run that reuses the outputs an earlier run logged (exactly, from
``node_complete.stored`` or ``outputs_file``), so finished nodes are never executed twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events.models import NodeComplete, PlanComplete, PlanStart, RunEvent
from keiri_agent.events.runlog import read_events
from keiri_agent.plan.engine import Reused
from keiri_agent.plan.loader import load_yaml
from keiri_agent.plan.values import OutputStore

__all__ = ["AnswersFile", "RunRecord", "find_run", "load_run"]


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
        try:
            data = load_yaml(file.read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            raise BlockError(
                f"回答ファイル {file} が見つかりません。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="--answers に YAML ファイルのパスを指定してください。",
                details={"file": str(file)},
            ) from None
        except (OSError, yaml.YAMLError) as exc:
            raise BlockError(
                f"回答ファイル {file} を読めません: {exc}",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="ノードID → {入力ID: 値} の形の YAML にしてください。",
                details={"file": str(file)},
            ) from exc
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise BlockError(
                f"回答ファイル {file} の形式が不正です。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="例:\ncollect_inputs:\n  workbook: data/bank.xlsx\n  proceed: true",
                details={"file": str(file)},
            )
        return cls(data)

    def answers_for(self, node_path: str, node_id: str) -> Mapping[str, Any] | None:
        found = self.answers.get(node_path)
        if found is None:
            found = self.answers.get(node_id)
        return found


@dataclass
class RunRecord:
    """What a finished (or paused) run left in its log."""

    log_path: Path
    run_id: str
    plan_id: str
    plan_file: Path | None
    vars: dict[str, Any]
    status: str | None
    completed: dict[str, Reused] = field(default_factory=dict)
    executed: list[str] = field(default_factory=list)  # node paths that ran (node_start)
    seen: set[str] = field(default_factory=set)  # every node path the log mentions
    events: list[RunEvent] = field(default_factory=list)


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
    raise BlockError(
        f"実行 {run} のログが {runs_dir} に見つかりません。",
        code=ErrorCode.INPUT_VALIDATION_FAILED,
        hint="`keiri-agent plan run` が表示した run id か、ログファイル（.jsonl）のパスを指定してください。",
        details={"run": str(run), "runs_dir": str(runs_dir)},
    )


def load_run(log_path: Path) -> RunRecord:
    events = read_events(log_path)
    start = next((e for e in events if isinstance(e, PlanStart)), None)
    if start is None:
        raise BlockError(
            f"{log_path} は Plan の実行ログではありません（plan_start がありません）。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="`keiri-agent plan run` が作ったログを指定してください。",
            details={"path": str(log_path)},
        )
    store = OutputStore(log_path)
    record = RunRecord(
        log_path=log_path,
        run_id=start.run_id,
        plan_id=start.plan_id,
        plan_file=(log_path.parent / start.plan_file) if start.plan_file else None,
        vars=dict(start.inputs.get("vars") or {}),
        status=None,
        events=events,
    )
    for event in events:
        if event.node_id:
            record.seen.add(event.node_id)
        if event.event == "node_start" and event.node_id:
            record.executed.append(event.node_id)
        if isinstance(event, PlanComplete):
            record.status = event.status
        if isinstance(event, NodeComplete) and event.node_id:
            if event.stored is not None:
                outputs = dict(event.stored)
            elif event.outputs_file:
                outputs = store.decode_file(event.outputs_file)
            else:
                continue  # not persisted: the node runs again
            record.completed[event.node_id] = Reused(outputs, event.stored, event.outputs_file)
    return record
