"""Japanese descriptions of the help-desk agent's progress events (CLI and UI), and the
per-subtask progress they add up to."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from keiri_agent.events import RunEvent, Stage
from keiri_agent.events.follow import progress_line

__all__ = ["STATUS_LABELS", "STEP_LABELS", "Progress", "describe_event", "subtask_index"]

STEP_LABELS = {
    "create_plan": "計画立案",
    "execute_subtasks": "サブタスク実行",
    "select_tools": "ツール選択",
    "execute_tools": "ツール実行",
    "create_subtask_answer": "サブタスク回答",
    "reflect_subtask": "内省",
    "create_answer": "最終回答生成",
}
STATUS_LABELS = {"start": "開始", "done": "完了", "failed": "失敗", "unresolved": "未解決"}
_SUBTASK_RE = re.compile(r"^subtask\[(\d+)\]$")


def subtask_index(node_id: str | None) -> int | None:
    """0 for ``subtask[0]``; None for the main graph's nodes."""
    match = _SUBTASK_RE.match(node_id or "")
    return int(match[1]) if match else None


def _where(event: RunEvent) -> str:
    index = subtask_index(event.node_id)
    return f"サブタスク {index + 1}: " if index is not None else ""


def describe_event(event: RunEvent) -> str | None:
    """A Japanese one-liner for a progress event, or None for events not worth a line."""
    return progress_line(event, STEP_LABELS, STATUS_LABELS, where=_where(event))


@dataclass
class Progress:
    """Where each subtask is, folded from the run's events (for a live progress view)."""

    plan_ready: bool = False
    steps: dict[int, str] = field(default_factory=dict)  # subtask index → Japanese state
    answering: bool = False

    def add(self, event: RunEvent) -> bool:
        """Fold in one event; True when the view changed."""
        if not isinstance(event, Stage):
            return False
        index = subtask_index(event.node_id)
        if index is None:
            if event.step == "create_plan" and event.status == "done":
                self.plan_ready = True
            elif event.step == "create_answer":
                self.answering = event.status == "start"
            else:
                return False
            return True
        status = STATUS_LABELS.get(event.status, event.status)
        if event.step == "execute_subtasks":
            finished = {"done": "✅ 完了", "unresolved": "⚠️ 未解決"}
            self.steps[index] = finished.get(event.status, f"⏳ {status}")
        else:
            self.steps[index] = f"⏳ {STEP_LABELS.get(event.step, event.step)}（{status}）"
        return True

    def lines(self) -> list[str]:
        return [f"サブタスク {index + 1}: {state}" for index, state in sorted(self.steps.items())]
