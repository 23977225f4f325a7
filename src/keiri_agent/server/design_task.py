"""``kind: design`` tasks: plan generation over the API (seed 004), with compose ``bindings``.

The request carries what ``keiri-agent plan generate`` takes: the instruction, templates and
apply mode, design-chat ``answers``, and ``bindings`` that decide the compose conflicts a
previous request returned (each conflict names its ``binding`` and its ``choices`` in the
task's ``details.conflicts``). A plan that validates is written to the task's files as
``<plan id>.yaml`` and the task succeeds; a generation that needs input or has errors ends
``failed`` with the requirements, errors, suggestions and conflicts in ``details``.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.config import Settings
from keiri_agent.server.jobs import Job, JobResult, Runner

__all__ = ["DesignRequest", "prepare_design"]

MAX_INSTRUCTION_CHARS = 4000
_UNSAFE = re.compile(r"[^0-9A-Za-z_.-]+")


class DesignRequest(BaseModel):
    """Plan generation: instruction, templates, apply mode, answers, compose bindings."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["design"]
    instruction: str = Field(min_length=1, max_length=MAX_INSTRUCTION_CHARS)
    templates: list[str] = Field(default_factory=list, max_length=20)
    apply_mode: Literal["hint", "compose", "llm-only"] = "hint"
    answers: dict[str, Any] = Field(default_factory=dict)
    # "<template>.<import>" → "<template>.<export>" | "vars.<name>" (a conflict's choices)
    bindings: dict[str, str] = Field(default_factory=dict)
    plan_id: str | None = Field(default=None, max_length=200)


def prepare_design(request: DesignRequest, settings: Settings) -> Runner:
    return partial(_run_design, request)


def _run_design(request: DesignRequest, job: Job) -> JobResult:
    from keiri_agent.design import generate_plan

    job.stage("interpret", "start")
    asked = request.model_dump(include={"apply_mode", "answers", "plan_id", "bindings"})
    result = generate_plan(
        request.instruction,
        selected_templates=request.templates,
        settings=job.settings,
        runs_dir=job.directory,
        **asked,  # named as generate_plan names them
    )
    job.stage("interpret", "done")
    details: dict[str, Any] = {
        "status": result.status,
        "reasoning": result.reasoning,
        "candidates": result.candidates,
        "errors": [e.model_dump() for e in result.errors],
        "requirements": [r.model_dump() for r in result.requirements],
        "suggestions": result.suggestions,
        "conflicts": [c.model_dump() for c in result.conflicts],
    }
    if result.plan is None or result.status not in ("ok", "fallback"):
        answer = "Plan を完成できませんでした: " + (
            "; ".join(e.message for e in result.errors[:3]) or result.reasoning
        )
        return JobResult("failed", answer=answer, details=details)
    name = _UNSAFE.sub("_", str(result.plan.get("id") or "plan")).strip("._") or "plan"
    path = job.files_dir / f"{name}.yaml"
    path.write_text(result.yaml or "", encoding="utf-8")
    return JobResult("success", answer=result.reasoning, files=[path], details=details)
