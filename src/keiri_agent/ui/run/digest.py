"""What the 実行 page shows of a run's events, in memory that does not grow with the run.

A run of a 100,000-item loop logs about 300,000 events. The page reads its log once, event by
event (:func:`digest`), and keeps only what it shows: one row per top-level node, at most
:data:`MAX_NESTED_ROWS` rows of nodes inside loops and subflows (every failed one among them
first), the last :data:`MAX_LINES` progress lines, and the blocks of the nodes a paused run
waits for. (While a run lasts, ``live`` shows its newest lines.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from keiri_agent.events.models import NodeStart, RunEvent
from keiri_agent.events.runlog import replay
from keiri_agent.plan import PlanNames, describe_event

__all__ = ["MAX_LINES", "MAX_NESTED_ROWS", "RunDigest", "digest"]

MAX_LINES: Final = 2_000  # progress lines kept after a run (the newest)
MAX_NESTED_ROWS: Final = 1_000  # rows of nodes inside loops and subflows (failed ones first)
_STATES: Final = {
    "node_start": "実行中",
    "node_complete": "完了",
    "node_skipped": "スキップ",
    "node_waiting": "入力待ち",
    "node_error": "エラー",
}


def _nested(node_id: str) -> bool:
    return "/" in node_id or "[" in node_id


@dataclass
class RunDigest:
    """The node table, the newest progress lines and the waiting nodes' blocks of one run."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False  # nodes inside loops and subflows were left out of ``rows``
    lines: list[str] = field(default_factory=list)
    total_lines: int = 0
    blocks: dict[str, str] = field(default_factory=dict)  # waiting node → its block


class _Rows:
    """Node rows built event by event: every top-level node, a bounded number of nested ones."""

    def __init__(self, names: PlanNames | None) -> None:
        self.names = names
        self.rows: dict[str, dict[str, Any]] = {}
        self.nested = 0
        self.truncated = False  # some nested nodes were left out

    def add(self, event: RunEvent) -> None:
        node_id = event.node_id
        if node_id is None or event.event not in _STATES:
            return
        row = self.rows.get(node_id)
        if row is None:
            if _nested(node_id) and not self._room(failed=event.event == "node_error"):
                return
            row = self.rows[node_id] = {
                "ノード": self.names.node(node_id) if self.names else node_id,
                "状態": "",
                "所要時間": "",
                "ノード ID": node_id,
                "ブロック": "",
            }
        # The typed event's fields as they are (a model_dump per event copied every payload).
        if event.event == "node_start":
            row["ブロック"] = getattr(event, "block", None) or ""
        state = _STATES[event.event]
        if event.event == "node_complete":
            seconds = float(getattr(event, "duration_ms", None) or 0.0) / 1000
            row["所要時間"] = f"{seconds:,.1f} 秒"
            state = "再利用" if getattr(event, "reused", False) else state
        if event.event == "node_error" and getattr(event, "will_retry", False):
            state = "再試行"
        row["状態"] = state

    def _room(self, *, failed: bool) -> bool:
        """Whether a new nested row may be added: up to the bound, a failed node up to twice it."""
        if self.nested < (2 * MAX_NESTED_ROWS if failed else MAX_NESTED_ROWS):
            self.nested += 1
            return True
        self.truncated = True
        return False


def digest(
    log_path: Path | None, *, waiting: Iterable[str] = (), names: PlanNames | None = None
) -> RunDigest:
    """Read a run's log once; ``waiting``: the nodes whose block the page needs; ``names``:
    how rows and lines name the nodes."""
    found = RunDigest()
    if log_path is None or not log_path.is_file():
        return found
    wanted = set(waiting)
    rows = _Rows(names)
    lines: deque[str] = deque(maxlen=MAX_LINES)
    for event in replay(log_path):
        rows.add(event)
        line = describe_event(event, names)
        if line is not None:
            lines.append(line)
            found.total_lines += 1
        if isinstance(event, NodeStart) and event.node_id in wanted and event.block:
            found.blocks[event.node_id] = event.block
    found.rows = list(rows.rows.values())
    found.truncated = rows.truncated
    found.lines = list(lines)
    return found
