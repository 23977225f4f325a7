"""Plan versions over the API: save, list, compare, approve and reject (``keiri_agent.versions``).

=======  =====================================================  ==================================
GET      ``/agent/plans/{plan_id}/versions``                     the plan's versions, oldest first
POST     ``/agent/plans/{plan_id}/versions``                     save ``{"yaml", "message"}``
GET      ``/agent/plans/{plan_id}/diff?from=&to=``                what changed, in plan terms
POST     ``/agent/plans/{plan_id}/versions/{version}/approve``   ``{"comment"}``
POST     ``/agent/plans/{plan_id}/versions/{version}/reject``    ``{"comment"}``
=======  =====================================================  ==================================

``plan_id`` may contain ``/`` (``keiri/invoice_check``); a version is named as the CLI names it
(a hash prefix, ``v3``, ``latest``, ``approved``). A save validates the plan, keeps it as a
version authored by the caller, and writes it as the working copy ``<designs>/<plan_id>.yaml``
that plan tasks run (``{"kind": "plan", "plan": "<plan_id>"}``). Reviews follow the four-eyes
rules of ``versions.review`` with the key's user; a server without keys knows nobody and
refuses them. Every route needs a key once users are configured, like the rest of ``/agent``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio.to_thread
from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.config import Settings
from keiri_agent.errors import ErrorCode, input_error
from keiri_agent.plan import MAX_PLAN_BYTES, PlanEnv
from keiri_agent.server.auth import Access, Authenticator, Caller
from keiri_agent.server.errors import ApiError
from keiri_agent.server.plan_task import ANONYMOUS_CALLER
from keiri_agent.versions import MAX_MESSAGE_CHARS, SaveNote, VersionStore, review, reviewer_for
from keiri_agent.workspace import atomic_path, confine

__all__ = ["ReviewRequest", "SaveRequest", "plan_routes"]


class SaveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    yaml: str = Field(min_length=1, max_length=MAX_PLAN_BYTES)
    message: str = Field(default="", max_length=MAX_MESSAGE_CHARS)


class ReviewRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    comment: str = Field(default="", max_length=MAX_MESSAGE_CHARS)


def _write_working_copy(settings: Settings, plan_id: str, text: str) -> Path:
    designs = Path(settings.keiri_designs_dir)
    target = confine(designs, f"{plan_id}.yaml")
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target, durable=settings.keiri_run_log_fsync) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target


def plan_routes(settings: Settings, auth: Authenticator) -> APIRouter:
    """The routes above, for an app whose ``state.auth`` is ``auth``."""
    api = APIRouter(prefix="/agent/plans")
    store = VersionStore.of(settings)

    @api.get("/{plan_id:path}/versions")
    def list_versions(plan_id: str, access: Caller) -> dict[str, Any]:
        auth.signed_in(access)
        return {"plan_id": plan_id, "versions": [v.to_dict() for v in store.versions(plan_id)]}

    @api.post("/{plan_id:path}/versions", status_code=201)
    async def save(plan_id: str, body: SaveRequest, access: Caller) -> dict[str, Any]:
        auth.signed_in(access)
        return await anyio.to_thread.run_sync(_save, plan_id, body, access.owner)

    def _save(plan_id: str, body: SaveRequest, owner: str | None) -> dict[str, Any]:
        from keiri_agent.control.changes import save_version
        from keiri_agent.plan import parse_source

        raw = parse_source(body.yaml).raw
        given = raw.get("id") if isinstance(raw, dict) else None
        if given != plan_id:
            raise input_error(
                f"Plan の id（{given}）が URL の Plan（{plan_id}）と違います。",
                "YAML の id と URL の plan_id をそろえてください。",
                plan_id=plan_id,
                id=given,
            )
        target = confine(Path(settings.keiri_designs_dir), f"{plan_id}.yaml")
        version, created = save_version(
            body.yaml,
            PlanEnv.of(settings=settings),
            SaveNote(
                author=owner or ANONYMOUS_CALLER,
                source="api",
                message=body.message,
                file=str(target),
            ),
        )
        _write_working_copy(settings, plan_id, body.yaml)
        return {"created": created, "version": version.to_dict()}

    @api.get("/{plan_id:path}/diff")
    def diff(
        plan_id: str,
        access: Caller,
        old: Annotated[str, Query(alias="from", min_length=1, max_length=80)],
        new: Annotated[str, Query(alias="to", min_length=1, max_length=80)],
    ) -> dict[str, Any]:
        from keiri_agent.control.changes import compare

        auth.signed_in(access)
        if old.endswith((".yaml", ".yml")) or new.endswith((".yaml", ".yml")):
            raise input_error(
                "API で比べられるのは登録された版どうしだけです。",
                "from と to には版（v1・ハッシュの先頭・latest・approved）を指定してください。",
            )
        found = compare(settings, plan_id, old, new)
        sides = {
            "from": found.old.version.to_dict() if found.old.version else None,
            "to": found.new.version.to_dict() if found.new.version else None,
        }
        return {"plan_id": plan_id, **sides, **found.diff.to_dict(), "lines": found.diff.lines()}

    def _review(
        plan_id: str,
        ref: str,
        kind: Literal["approve", "reject"],
        comment: str,
        access: Access,
    ) -> Any:
        if access.open:
            raise ApiError(
                403,
                ErrorCode.PERMISSION_DENIED,
                "API キーのないサーバーでは、誰が承認したかを確かめられないため承認・却下できません。",
                hint="利用者ファイル（KEIRI_API_KEYS_FILE）で承認者（role: approver）のキーを"
                "用意するか、CLI（keiri-agent plan approve）かアプリで承認してください。",
            )
        reviewer = reviewer_for(auth.users, access.user)
        return review(store, plan_id, ref, kind, reviewer, settings, comment=comment)

    def _decide(decision: Literal["approve", "reject"]) -> Callable[..., dict[str, Any]]:
        def decide(
            plan_id: str, version: str, access: Caller, body: ReviewRequest | None = None
        ) -> dict[str, Any]:
            comment = body.comment if body is not None else ""
            return {"version": _review(plan_id, version, decision, comment, access).to_dict()}

        return decide

    decisions: tuple[Literal["approve", "reject"], ...] = ("approve", "reject")
    for decision in decisions:
        api.post(f"/{{plan_id:path}}/versions/{{version}}/{decision}", name=decision)(
            _decide(decision)
        )

    return api
