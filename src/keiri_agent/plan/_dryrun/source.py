"""A plan's text to its dry run: validate first (``_validate.validator``), then walk a valid plan.

An invalid plan's report holds the validation errors only: structural checks are the
validator's, value checks the dry run's (``_dryrun.dryrun``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Unpack

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.file_access import FileAccess
from keiri_agent.plan._dryrun.dryrun import dry_run
from keiri_agent.plan._dryrun.report import DryRunFinding, DryRunReport
from keiri_agent.plan._dsl.loader import PlanSource
from keiri_agent.plan._dsl.models import Plan
from keiri_agent.plan._graph.env import EnvOptions, PlanEnv
from keiri_agent.plan._graph.subflows import file_key

__all__ = ["dry_run_source"]


def dry_run_source(
    source: PlanSource,
    registry: BlockRegistry | PlanEnv,
    *,
    vars_override: Mapping[str, Any] | None = None,
    files: FileAccess | None = None,
    **options: Unpack[EnvOptions],
) -> DryRunReport:
    """Validate ``source``, then dry-run it; an invalid plan's report holds its errors only.

    ``registry``: the command's :class:`PlanEnv`, or a registry with ``options`` to build one
    from (settings that cannot be read are then the report's finding).
    """
    from keiri_agent.plan._validate.validator import validate_source

    # ``files``: the run's file access, to say which files the blocks will not find (dryrun).

    started = time.perf_counter()
    try:
        env = PlanEnv.given(registry, **options)
    except BlockError as exc:
        finding = DryRunFinding(code=exc.code, message=exc.message, hint=exc.hint)
        return DryRunReport(ok=False, findings=[finding])
    validation = validate_source(source, env)
    if not validation.valid:
        keep = set(DryRunFinding.model_fields)  # code, message, node_id, path, hint, line, column
        findings = [DryRunFinding(**issue.model_dump(include=keep)) for issue in validation.errors]
        plan_id = source.raw.get("id") if isinstance(source.raw, Mapping) else None
        return DryRunReport(
            plan_id=plan_id if isinstance(plan_id, str) else None,
            ok=False,
            findings=findings,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
    plan = Plan.model_validate(source.raw)
    return dry_run(plan, env, vars_override=vars_override, file=file_key(source), files=files)
