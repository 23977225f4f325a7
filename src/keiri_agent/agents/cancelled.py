"""The error of an agent's work that its user cancelled (an analysis turn, a conversion)."""

from __future__ import annotations

from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["cancelled_error"]


def cancelled_error(work: str, step: str, *, label: str, note: str = "") -> BlockError:
    """CANCELLED: ``work`` (``変換``) was stopped at the step ``step`` (its id); ``note`` says
    what was stopped with it (``（実行中のコードは止めました）``). Like every error that names a
    step, ``details.step`` is the step as a person reads it (``label``: 「形式の変換」), its id
    is ``details.step_id``."""
    return BlockError(
        f"{work}は取り消されました{note}。",
        code=ErrorCode.CANCELLED,
        hint="必要であれば、同じ依頼をもう一度実行してください。",
        details={"step": label, "step_id": step},
        recoverable=True,
    )
