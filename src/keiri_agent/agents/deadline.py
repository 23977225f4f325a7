"""The error of an agent's work that ran past its deadline (an analysis turn, a conversion)."""

from __future__ import annotations

from typing import Literal

from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["deadline_error"]


def deadline_error(
    work: str,
    timeout_s: float,
    step: str,
    *,
    label: str,
    cut: Literal["前", "途中"],
    hint: str,
    recoverable: bool = False,
) -> BlockError:
    """TIMEOUT_ERROR: ``work`` (``変換タスク``) took over ``timeout_s`` and was cut before
    (``前``) or during (``途中``) ``step``; ``hint`` says what to narrow or which limit to raise.
    The message names the step by ``label`` (the agent's progress label: 「形式の変換」); like
    every error that names a step, ``details.step`` is that label and ``details.step_id`` the id."""
    return BlockError(
        f"{work}が制限時間（{timeout_s:g} 秒）を超えたため、「{label}」の{cut}で打ち切りました。",
        code=ErrorCode.TIMEOUT_ERROR,
        hint=hint,
        details={"step": label, "step_id": step, "timeout_s": timeout_s},
        recoverable=recoverable,
    )
