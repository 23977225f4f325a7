"""Which version of a plan a schedule or trigger runs, and whether the working copy differs.

A schedule pins ``latest-approved`` (the newest approved version at the time it fires), a
version's hash, or ``working`` (the working copy ``<designs>/<plan_id>.yaml``, only where
approval is not required: ``keiri_agent.versions.approval_required``). The version is
resolved when the run starts (a pinned hash whose approval was withdrawn is refused there, with
the one ``APPROVAL_REQUIRED`` error). A version's run calls saved versions of its subflows, at
any depth, whatever the working copies say, each resolved once at the task's door and run as
resolved there (``PlanEnv.saved_subflows``, ``plan._graph.saved``): the newest approved one
where approval is required or the plan version is approved, else (approval off, a hash pinned
to a version nobody approved) the newest saved one; a call's versions are those of the plan id
written in the file it names. A subflow with none refuses the start at the door, naming it.
Subflows have no pin of their own. Under ``working`` the plan and its subflows alike are the
working copies.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import Plan, PlanEnv, load_source, parse_source, resolve_plan_file
from keiri_agent.users import load_users
from keiri_agent.versions import (
    VersionStore,
    approval_required,
    approved_text,
    plan_not_found,
    unapproved_error,
)

__all__ = [
    "LATEST_APPROVED",
    "WORKING",
    "check_pin",
    "default_pin",
    "resolve_pin",
    "subflow_refusal",
    "working_drift",
]

LATEST_APPROVED = "latest-approved"
WORKING = "working"


def default_pin(settings: Settings) -> str:
    """``latest-approved`` where approval is required, else the working copy."""
    return LATEST_APPROVED if approval_required(settings) else WORKING


def check_pin(settings: Settings, plan_id: str, pin: str) -> str:
    """The pin as stored: a hash (prefix, ``v3``) becomes the full hash of an existing
    version; ``working`` is refused where approval is required."""
    if resolve_plan_file(plan_id, Path(settings.keiri_designs_dir)) is None and pin == WORKING:
        raise plan_not_found(plan_id)
    if pin == WORKING:
        if approval_required(settings):
            raise BlockError(
                "承認が必要な環境では、予定とトリガーは作業コピーを実行できません。",
                code=ErrorCode.APPROVAL_REQUIRED,
                hint="--version latest-approved か、承認済みの版のハッシュを指定してください。",
                details={"plan_id": plan_id},
            )
        return WORKING
    if pin == LATEST_APPROVED:
        return pin
    return VersionStore.of(settings).find(plan_id, pin).id


def resolve_pin(settings: Settings, plan_id: str, pin: str) -> str | None:
    """The full hash of the version to run now (None: the working copy)."""
    if pin == WORKING:
        check_pin(settings, plan_id, pin)  # approval may have been switched on since
        return None
    store = VersionStore.of(settings)
    if pin == LATEST_APPROVED:
        return approved_text(settings, plan_id)[0].id
    version = store.find(plan_id, pin)
    if version.status != "approved" and approval_required(settings):
        # A pinned version whose approval was withdrawn (rejected) no longer runs by itself.
        raise unapproved_error(plan_id, version.id, version, load_users(settings), settings)
    return version.id


def working_drift(settings: Settings, plan_id: str, pin: str) -> str | None:
    """A warning when the working copy has changes that are not approved (the schedule runs
    another version than the file people edit); None when there is nothing to say."""
    if pin == WORKING:
        return None
    path = resolve_plan_file(plan_id, Path(settings.keiri_designs_dir))
    if path is None:
        return None
    store = VersionStore.of(settings)
    current, version = store.of_text(plan_id, load_source(path).text)
    if version is not None and version.status == "approved":
        if pin in (LATEST_APPROVED, current):
            return None
        return "作業コピーは承認済みですが、この予定は固定した別の版を実行します。"
    state = "版として登録されていません" if version is None else f"{version.label} は未承認です"
    return f"作業コピーに未承認の変更があります（{state}）。予定は承認済みの版を実行します。"


def subflow_refusal(settings: Settings, plan_id: str, pin: str) -> str | None:
    """Why a start now would be refused for a subflow the version calls (one with no version
    to run), for the lists to warn of before the fire time; None when there is none to say
    (the working copy, or a plan that cannot start for reasons of its own: its start says so)."""
    if pin == WORKING:
        return None
    try:
        store = VersionStore.of(settings)
        version = store.get(plan_id, resolve_pin(settings, plan_id, pin) or "")
        if version is None:
            return None
        source = parse_source(store.text(version))
        plan = Plan.model_validate(source.raw)
        env = PlanEnv.of(settings=settings, config={}, env={}).saved_subflows(source)
        env.subflows.called(plan)
    except BlockError as exc:
        return exc.message if exc.details.get("subflow") else None
    except ValidationError:
        return None
    return None
