"""One analysis turn with live progress: ``ask`` runs in a worker thread while the caller's
thread reads the run's events and shows them (the CLI prints them to stderr, the Streamlit page
writes them into ``st.status``).

The caller's thread does the showing because Streamlit elements may only be created from the
script thread. No Streamlit import here, so the CLI can use this module without it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from keiri_agent.events import (
    CodeExec,
    CodeGen,
    ErrorEvent,
    LLMCall,
    Log,
    RunEvent,
    Stage,
    open_run,
)

if TYPE_CHECKING:
    from keiri_agent.agents.analysis import AnalysisSession, TurnResult

__all__ = ["STEP_LABELS", "ask_streaming", "describe_event"]

STEP_LABELS = {"reason": "判断", "code_exec": "コード生成・実行", "report": "レポート作成"}
STATUS_LABELS = {"start": "開始", "done": "完了", "failed": "失敗"}
ANALYSIS_SOURCE_ID = "analysis"  # = keiri_agent.agents.analysis.session.AGENT_ID


def describe_event(event: RunEvent) -> str | None:
    """A Japanese one-liner for a progress event, or None for events not worth a line."""
    if isinstance(event, Stage):
        label = STEP_LABELS.get(event.step, event.step)
        return f"[{label}] {STATUS_LABELS.get(event.status, event.status)}"
    if isinstance(event, Log):
        return f"  {event.msg}"
    if isinstance(event, CodeGen):
        return f"  コードを生成しました（{len(event.code.splitlines())} 行）"
    if isinstance(event, CodeExec):
        return "  実行: " + ("成功" if event.success else "失敗")
    if isinstance(event, ErrorEvent):
        return "  エラー: " + (event.message.strip().splitlines() or [""])[0]
    if isinstance(event, LLMCall):
        status = "" if event.ok else f"、失敗 {event.error_code or ''}"
        return (
            f"  LLM {event.model}: {event.total_tokens} トークン、"
            f"{event.latency_ms / 1000:.1f} 秒{status}"
        )
    return None


def ask_streaming(
    session: AnalysisSession, text: str, on_event: Callable[[RunEvent], None]
) -> TurnResult:
    """``session.ask(text)`` with every event passed to ``on_event`` in the calling thread.

    The run is logged under ``runs/analysis/`` like any other turn; ``TurnResult.run_log`` names
    the file. Exceptions from ``ask`` (a BlockError above all) are re-raised here.
    """
    stream = open_run(ANALYSIS_SOURCE_ID, runs_dir=session.runs_dir)
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["turn"] = session.ask(text, events=stream)
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finally:
            stream.close()

    worker = threading.Thread(target=work, name="keiri-analysis-turn", daemon=True)
    worker.start()
    for event in stream.subscribe():
        on_event(event)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    turn: TurnResult = outcome["turn"]
    turn.run_log = stream.log_path
    return turn
