"""The result of a dry run: the nodes walked and every finding, all at once."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from keiri_agent.plan._dryrun.walk import DryRunFinding, DryRunNode

__all__ = ["DryRunReport"]


class DryRunReport(BaseModel):
    """The result of one dry run: ``ok`` when nothing was found."""

    plan_id: str | None = None
    ok: bool
    nodes: list[DryRunNode] = Field(default_factory=list)
    findings: list[DryRunFinding] = Field(default_factory=list)
    exports: dict[str, Any] = Field(default_factory=dict)  # the plan's exports, summarized
    duration_ms: float = 0.0

    def node(self, node_id: str) -> DryRunNode | None:
        return next((n for n in self.nodes if n.node_id == node_id), None)

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
