"""Validation findings: one structured issue per problem, all reported at once (seed 002 §6).

Each issue has a code, a Japanese message, the node it concerns, its path inside the YAML
(``graph[2].in.prompt``), the line and column of that place, and a hint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan._dsl.models import Plan

__all__ = ["Loc", "PlanIssue", "ValidationReport", "format_path"]

Loc = tuple[str | int, ...]


def format_path(loc: Sequence[str | int]) -> str:
    """``("graph", 2, "in", "prompt")`` → ``graph[2].in.prompt``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class PlanIssue(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    severity: Literal["error", "warning"] = "error"
    node_id: str | None = None
    path: str = ""
    line: int | None = None
    column: int | None = None
    hint: str = ""
    file: str | None = None

    def describe(self) -> str:
        """The finding as a person reads it: its message (which names its step), then its YAML
        line and its code; never the node's id."""
        where = f"{self.line} 行目、" if self.line else ""
        return f"{self.message}（{where}コード {self.code}）"


class ValidationReport(BaseModel):
    """All findings of one validation; ``valid`` when there is no error (warnings allowed)."""

    errors: list[PlanIssue] = []
    warnings: list[PlanIssue] = []
    # The validated Plan model when the plan parsed as a whole (else None): a run uses it
    # instead of parsing the plan a second time. Not part of the report's JSON.
    plan: Plan | None = Field(default=None, exclude=True, repr=False)

    @property
    def valid(self) -> bool:
        return not self.errors

    def add(self, issue: PlanIssue) -> None:
        (self.errors if issue.severity == "error" else self.warnings).append(issue)

    def codes(self) -> list[str]:
        return [e.code for e in self.errors]

    def to_dict(self) -> dict[str, Any]:
        keys = ("code", "message", "node_id", "path", "line", "column", "hint", "file")
        return {
            "valid": self.valid,
            "errors": [e.model_dump(include=set(keys)) for e in self.errors],
            "warnings": [w.model_dump(include=set(keys)) for w in self.warnings],
        }

    def raise_if_invalid(self, plan_id: str | None = None) -> None:
        if self.valid:
            return
        first = self.errors[0]
        more = f" ほか {len(self.errors) - 1} 件" if len(self.errors) > 1 else ""
        raise BlockError(
            f"Plan{f' {plan_id}' if plan_id else ''} に検証エラーがあります: {first.describe()}{more}",
            code=ErrorCode.PLAN_INVALID,
            hint=first.hint or "`keiri-agent plan validate` で全てのエラーを確認してください。",
            details=self.to_dict(),
        )
