"""The error of an agent's work that its user cancelled (an analysis turn, a conversion)."""

from __future__ import annotations

from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["cancelled_error"]


def cancelled_error(work: str, step: str, *, note: str = "") -> BlockError:
    """CANCELLED: ``work`` (``変換``) was stopped at ``step``; ``note`` says what was stopped with
    it (``（実行中のコードは止めました）``)."""
    return BlockError(
        f"{work}は取り消されました{note}。",
        code=ErrorCode.CANCELLED,
        hint="必要であれば、同じ依頼をもう一度実行してください。",
        details={"step": step},
        recoverable=True,
    )
