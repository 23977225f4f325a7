"""A run as the 実行 page keeps and shows it (:class:`ShownRun`): built from the runner's result
or read back from a run log, its outputs in the plan's node order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from keiri_agent.errors import BlockError
from keiri_agent.events.logfile import first_event
from keiri_agent.events.models import PlanStart, RunStatus
from keiri_agent.plan import RunResult, load_run, load_yaml

__all__ = ["ShownRun"]


@dataclass
class ShownRun:
    """What the page keeps and shows of one run (or of a plan that could not start)."""

    plan_id: str
    status: RunStatus | Literal["invalid", "running"]  # invalid: the plan could not start
    run_id: str | None = None
    error: BlockError | None = None
    waiting: list[dict[str, Any]] = field(default_factory=list)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    log_path: Path | None = None
    duration_ms: float = 0.0
    resume_of: str | None = None
    rerun_from: str | None = None
    started: datetime | None = None  # the plan_start's time (UTC)

    @classmethod
    def from_result(cls, result: RunResult) -> ShownRun:
        """The run as the runner returned it."""
        start = None
        if result.log_path is not None:
            first = first_event(result.log_path)
            start = first if isinstance(first, PlanStart) else None
        return cls(
            plan_id=result.plan_id,
            status=result.status,
            run_id=result.run_id,
            error=result.error,
            waiting=list(result.waiting),
            outputs=_in_plan_order(
                {k: dict(v) for k, v in result.outputs.items()}, start, result.log_path
            ),
            log_path=result.log_path,
            duration_ms=result.duration_ms,
            resume_of=start.resume_of if start else None,
            rerun_from=start.rerun_from if start else None,
            started=start.timestamp if start else None,
        )

    @classmethod
    def from_log(cls, log_path: Path) -> ShownRun:
        """A past run read back from its JSONL log (outputs of finished top-level nodes)."""
        record = load_run(log_path)
        start, end = record.start, record.end
        waiting = [{"node_id": e.node_id, "request": e.request} for e in record.waiting]
        return cls(
            plan_id=record.plan_id,
            status=record.status or "running",
            run_id=record.run_id,
            error=BlockError.from_dict(end.error) if end is not None and end.error else None,
            waiting=waiting if record.status == "waiting_input" else [],
            outputs=_in_plan_order(
                {
                    path: dict(reused.outputs)
                    for path, reused in record.completed.items()
                    if "/" not in path and "[" not in path
                },
                start,
                log_path,
            ),
            log_path=log_path,
            duration_ms=end.total_duration_ms if end is not None else 0.0,
            resume_of=start.resume_of,
            rerun_from=start.rerun_from,
            started=start.timestamp,
        )


def _in_plan_order(
    outputs: dict[str, dict[str, Any]], start: PlanStart | None, log_path: Path | None
) -> dict[str, dict[str, Any]]:
    """Outputs in the plan's node order, not in the order parallel nodes happened to finish.

    The order comes from the plan snapshot the run executed (``plan_file``, relative to the
    run log's folder)."""
    order: list[str] = []
    snapshot = (
        log_path.parent / start.plan_file
        if start is not None and start.plan_file and log_path is not None
        else None
    )
    if snapshot is not None and snapshot.is_file():
        raw = load_yaml(snapshot.read_text(encoding="utf-8"))
        graph = raw.get("graph") if isinstance(raw, dict) else None
        if isinstance(graph, list):
            order = [str(n.get("id")) for n in graph if isinstance(n, dict)]
    rank = {node_id: i for i, node_id in enumerate(order)}
    ids = sorted(outputs, key=lambda n: (rank.get(n, len(rank)), list(outputs).index(n)))
    return {node_id: outputs[node_id] for node_id in ids}
