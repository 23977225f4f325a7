"""The result of one sandboxed action, as JSON-safe data.

The parent never unpickles anything the child wrote: the worker reports a small JSON document,
the supervisor adds what it measured (time, memory, files, the limit that killed the action)
and the parent validates the whole into an ``ExecutionOutcome``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ExecutionError", "ExecutionOutcome", "KilledBy", "LayerReport"]

KilledBy = Literal["cpu", "memory", "wall", "output", "fsize", "policy"]


class ExecutionError(BaseModel):
    """Why the user's code failed: exception type, message and its own traceback lines."""

    model_config = ConfigDict(frozen=True)

    type: str
    message: str
    traceback: list[str] = Field(default_factory=list)
    line: int | None = None  # the line of the user's code where it failed, when known


class LayerReport(BaseModel):
    """One isolation layer as it was applied to this action."""

    model_config = ConfigDict(frozen=True)

    name: str
    active: bool
    detail: str = ""


class ExecutionOutcome(BaseModel):
    """Everything a caller (agent, block, CLI) needs to know about one action."""

    model_config = ConfigDict(frozen=True)

    success: bool
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    error: ExecutionError | None = None
    files_created: list[str] = Field(default_factory=list)
    duration_s: float = 0.0
    peak_memory_bytes: int = 0
    killed_by: KilledBy | None = None
    profile: str = ""
    layers: list[LayerReport] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    result: Any = None  # JSON value of the variable ``result`` when the code set one

    def summary_ja(self) -> str:
        """One Japanese line for logs and the UI."""
        if self.success:
            return f"成功（{self.duration_s:.2f} 秒、作成ファイル {len(self.files_created)} 件）"
        reason = {
            "cpu": "CPU 時間の上限",
            "memory": "メモリの上限",
            "wall": "実行時間の上限",
            "output": "出力量の上限",
            "fsize": "ファイルサイズ・ファイル数の上限",
            "policy": "安全ポリシー",
        }
        if self.killed_by is not None:
            return f"中断: {reason[self.killed_by]}に達しました（{self.duration_s:.2f} 秒）"
        message = self.error.message if self.error else "不明なエラー"
        kind = self.error.type if self.error else "Error"
        return f"失敗: {kind}: {message}"
