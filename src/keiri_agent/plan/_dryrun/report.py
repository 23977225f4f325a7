"""The result of a dry run: the nodes walked (:class:`DryRunNode`) and every finding, all at once."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["DryRunFinding", "DryRunNode", "DryRunReport"]


class DryRunFinding(BaseModel):
    """One problem found by the dry run; ``message`` and ``hint`` are Japanese."""

    code: str
    message: str
    node_id: str | None = None
    path: str = ""  # where in the node (``in.path``, ``when``) or the plan (``vars.x``)
    hint: str = ""
    line: int | None = None  # set for validation findings, which know their YAML position
    column: int | None = None
    file: str | None = None  # the plan file of a validation finding (a subflow's own file)


class DryRunNode(BaseModel):
    """What the dry run saw at one node (``loop/child``, ``sub/child`` inside loops/subflows)."""

    node_id: str
    kind: Literal["block", "loop", "subflow"]
    block: str | None = None  # the spec's id@version for blocks, the plan id for subflows
    status: Literal["ok", "skipped", "failed"] = "ok"
    inputs: dict[str, Any] = Field(default_factory=dict)  # summarized for display
    outputs: dict[str, Any] = Field(default_factory=dict)  # summarized for display
    notes: list[str] = Field(default_factory=list)
    findings: list[DryRunFinding] = Field(default_factory=list)


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
