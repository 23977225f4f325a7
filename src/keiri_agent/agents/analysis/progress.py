"""Japanese one-line descriptions of the analysis agent's progress events (CLI and UI)."""

from __future__ import annotations

from keiri_agent.agents.execlog import error_summary, retried_code_error
from keiri_agent.events import CodeExec, CodeGen, RunEvent
from keiri_agent.events.follow import progress_line

__all__ = ["STEP_LABELS", "describe_event"]

STEP_LABELS = {"reason": "判断", "code_exec": "コード生成・実行", "report": "レポート作成"}
STATUS_LABELS = {"start": "開始", "done": "完了", "failed": "失敗"}


def describe_event(event: RunEvent) -> str | None:
    """A Japanese one-liner for a progress event, or None for events not worth a line."""
    if isinstance(event, CodeGen):
        return f"  コードを生成しました（{len(event.code.splitlines())} 行）"
    if isinstance(event, CodeExec):
        if event.success:
            return "  実行: 成功"
        why = error_summary(event.stderr)
        return "  実行: 失敗" + (f"（{why}）" if why else "")
    if retried_code_error(event):
        return None  # the code_exec line above said why, in Japanese
    return progress_line(event, STEP_LABELS, STATUS_LABELS)
