"""The five steps of a conversion (seed 003 §3) and how its events read as progress.

The graph emits ``stage`` events with ``step`` (one of ``STEPS``), ``status`` and ``progress``
(0..1). The CLI prints :func:`describe_event` lines, and the Streamlit page and the SSE page
draw a progress bar from the same events with :class:`Progress`. When the CodeAct fallback
takes over, the convert or viz step reports ``status="fallback"`` and stays the current step.
"""

from __future__ import annotations

from dataclasses import dataclass

from keiri_agent.agents.execlog import error_summary
from keiri_agent.events import CodeExec, CodeGen, ErrorEvent, RunEvent, Stage
from keiri_agent.events.follow import progress_line

__all__ = [
    "FALLBACK_STATUS",
    "STATUS_LABELS",
    "STEPS",
    "STEP_LABELS",
    "Progress",
    "describe_event",
    "step_progress",
]

STEPS: tuple[str, ...] = ("interpret", "fetch", "convert", "viz", "finish")
STEP_LABELS = {
    "interpret": "依頼の解釈",
    "fetch": "ファイルの取得",
    "convert": "形式の変換",
    "viz": "グラフの作成",
    "finish": "仕上げ",
}
FALLBACK_STATUS = "fallback"
STATUS_LABELS = {
    "start": "開始",
    "done": "完了",
    "failed": "失敗",
    FALLBACK_STATUS: "CodeAct（代替処理）に切り替え",
    "cancelled": "取り消し",
    "waiting_input": "回答待ち",
}
# Progress (0..1) when a step starts and when it is done. convert and viz are alternatives
# and share one span; the CodeAct fallback runs inside it.
_SPANS = {
    "interpret": (0.0, 0.2),
    "fetch": (0.2, 0.4),
    "convert": (0.4, 0.8),
    "viz": (0.4, 0.8),
    "finish": (0.8, 1.0),
}
_FALLBACK_PROGRESS = 0.5


def step_progress(step: str, status: str) -> float:
    """The progress value a ``stage`` event of ``step``/``status`` carries."""
    start, end = _SPANS[step]
    if status == "start":
        return start
    if status == FALLBACK_STATUS:
        return _FALLBACK_PROGRESS
    return end if status == "done" else start


def describe_event(event: RunEvent) -> str | None:
    """A Japanese one-liner for a progress event, or None for events not worth a line."""
    if isinstance(event, CodeGen):
        return f"  CodeAct: コードを生成しました（{len(event.code.splitlines())} 行）"
    if isinstance(event, CodeExec):
        outcome = {True: "成功", False: "失敗", None: "終了"}[event.success]
        why = error_summary(event.stderr) if event.success is False else ""
        return f"  CodeAct: 実行 {outcome}" + (f"（{why}）" if why else "")
    return progress_line(event, STEP_LABELS, STATUS_LABELS)


@dataclass
class Progress:
    """The progress bar's state, folded from a conversion's events."""

    fraction: float = 0.0
    step: str | None = None
    status: str | None = None
    fallback: bool = False
    failed: bool = False

    def add(self, event: RunEvent) -> bool:
        """Take one event; returns True when the bar or its label changed."""
        if isinstance(event, ErrorEvent):
            self.failed = True
            return True
        if not isinstance(event, Stage) or event.step not in _SPANS:
            return False
        self.step, self.status = event.step, event.status
        if event.status == FALLBACK_STATUS:
            self.fallback = True
        if event.progress is not None:
            self.fraction = max(self.fraction, min(max(event.progress, 0.0), 1.0))
        return True

    @property
    def label(self) -> str:
        """The bar's caption: the current step and its state."""
        if self.step is None:
            return "待機中"
        state = STATUS_LABELS.get(self.status or "", self.status or "")
        suffix = "（CodeAct で処理中）" if self.fallback and self.step in ("convert", "viz") else ""
        return f"{STEP_LABELS[self.step]}: {state}{suffix}"
