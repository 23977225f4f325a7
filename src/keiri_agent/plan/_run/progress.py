"""Japanese words for a plan run's progress: status labels and one line per node event.

The CLI prints these lines on stderr while a plan runs, and the app's 実行 page shows the same
lines, so both read a run the same way. Given the plan's names (``_graph.names``), a line names
its node as people know it (``▶ 売上明細の読み込み 開始``), never by id or block.
"""

from __future__ import annotations

from keiri_agent.errors import code_word
from keiri_agent.events.models import RunEvent
from keiri_agent.plan._graph.names import PlanNames

__all__ = ["SKIP_REASONS", "STATUS_LABELS", "describe_event"]

STATUS_LABELS = {
    "success": "成功",
    "failed": "失敗",
    "waiting_input": "入力待ち",
    "cancelled": "中止",
    "partial": "一部未完了",  # failures continued past, or a while stopped by its bound
}
SKIP_REASONS = {"when_condition_false": "実行の条件（when）を満たさないため"}


def describe_event(event: RunEvent, names: PlanNames | None = None) -> str | None:
    """One progress line for a node event (None for events not worth a line); with ``names``
    the node is named as people know it."""
    data = event.model_dump()
    node = event.node_id or ""
    if names is not None and node:
        node = names.node(node)
    match event.event:
        case "node_start" if names is not None:
            return f"▶ {node} 開始"
        case "node_start":
            return f"▶ {node} 開始（{data.get('block') or ''}）"
        case "node_complete" if data.get("reused"):
            return f"↺ {node} 前回の結果を再利用"
        case "node_complete":
            return f"✓ {node} 完了（{data.get('duration_ms', 0.0):.0f} ms）"
        case "node_skipped":
            reason = SKIP_REASONS.get(str(data.get("reason")), str(data.get("reason")))
            return f"- {node} スキップ（{reason}）"
        case "node_error":
            error = data.get("error") or {}
            then = "（再試行します）" if data.get("will_retry") else ""
            return f"✗ {node} エラー（{code_word(str(error.get('code')))}）: {error.get('message')}{then}"
        case "node_waiting":
            message = (data.get("request") or {}).get("message") or ""
            return f"⏸ {node} 入力待ち {message}".rstrip()
        case "loop_iteration":
            return f"↻ {node} {int(data.get('iteration', 0)) + 1} 回目"
        case "log" if data.get("level") in ("warning", "error"):
            return f"注意: {node} {data.get('msg', '')}"
    return None
