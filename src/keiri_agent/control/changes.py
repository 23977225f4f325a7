"""Saving a plan as a version and comparing two versions: what the CLI, the API and the app share.

:func:`save_version` validates a plan's text first (an invalid plan is not a version anyone
could approve or run) and keeps it in the settings' :class:`~keiri_agent.versions.VersionStore`.
:func:`compare` names two versions of a plan (or a plan file, the working copy) and returns the
plan engine's semantic diff (``keiri_agent.plan.diff_plans``) between them, with both plans so
a page can draw either side's graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import (
    PLAN_SUFFIXES,
    Plan,
    PlanDiff,
    PlanEnv,
    PlanNames,
    diff_plans,
    load_source,
    parse_source,
    validate_source,
)
from keiri_agent.versions import SaveNote, Version, VersionStore

__all__ = ["Comparison", "Side", "compare", "save_version"]


def save_version(text: str, env: PlanEnv, note: SaveNote) -> tuple[Version, bool]:
    """Validate ``text`` (with the command's ``env``) and keep it as a version of its plan, saved
    as ``note`` says: ``(version, created)`` (``PLAN_INVALID`` with every finding in ``details``
    when it does not validate)."""
    parsed = parse_source(text, file=note.file)
    report = validate_source(parsed, env)
    plan_id = getattr(parsed.raw, "get", lambda _k: None)("id")
    report.raise_if_invalid(plan_id if isinstance(plan_id, str) else None)
    assert isinstance(report.plan, Plan)  # a valid report holds the plan it checked
    return VersionStore.of(env.settings).save(report.plan.id, text, note)


@dataclass(frozen=True)
class Side:
    """One side of a comparison: how it is named, its plan and (when it is one) its version."""

    label: str
    plan: Plan
    text: str
    version: Version | None = None


@dataclass(frozen=True)
class Comparison:
    old: Side
    new: Side
    diff: PlanDiff


def _plan(text: str, label: str) -> Plan:
    raw = parse_source(text).raw
    try:
        return Plan.model_validate(raw)
    except ValidationError as exc:
        raise BlockError(
            f"{label} は Plan として読めないため比べられません。",
            code=ErrorCode.PLAN_INVALID,
            hint="`keiri-agent plan validate` で確認してください。",
            details={"errors": exc.errors(include_url=False, include_context=False)},
        ) from None


def _side(store: VersionStore, plan_id: str, ref: str) -> Side:
    """A version ``ref`` names, or a plan file (a path ending in .yaml/.yml)."""
    if ref.endswith(PLAN_SUFFIXES) and Path(ref).is_file():
        text = load_source(ref).text
        label = f"{ref}（ファイル）"
        return Side(label, _plan(text, label), text)
    version = store.find(plan_id, ref)
    text = store.text(version)
    label = f"版 {version.label}"
    return Side(label, _plan(text, label), text, version)


def compare(settings: Settings, plan_id: str, old: str, new: str) -> Comparison:
    """What changed from ``old`` to ``new`` (each a version of ``plan_id`` as
    ``VersionStore.find`` names it, or a plan file)."""
    store = VersionStore.of(settings)
    before, after = _side(store, plan_id, old), _side(store, plan_id, new)
    names = (_var_names(before.plan), _var_names(after.plan))
    return Comparison(before, after, diff_plans(before.plan, after.plan, names))


def _var_names(plan: Plan) -> PlanNames:
    """How ``plan`` names its vars to a person (the part of its ``PlanNames`` a diff needs)."""
    return PlanNames(vars=dict(plan.ui.vars))
