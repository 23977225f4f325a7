"""Schedules and triggers over the API (``keiri_agent.schedule``), and the webhook door.

=======  ==========================================  ==========================================
GET      ``/agent/schedules``                        schedules, next fire times in JST, warnings
POST     ``/agent/schedules``                        add ``{plan_id, rule, calendar, vars, ...}``
DELETE   ``/agent/schedules/{id}``                   remove
POST     ``/agent/schedules/{id}/run-now``           start the schedule's plan now (a task)
GET      ``/agent/triggers``                         triggers (never their secrets)
POST     ``/agent/triggers``                         add ``{kind, plan_id, folder, ...}``
DELETE   ``/agent/triggers/{id}``                    remove
POST     ``/agent/triggers/{id}``                    a webhook call: signed (``webhook``), no key
=======  ==========================================  ==========================================

Managing schedules and triggers needs a user's key once users are configured (a task's token
is not enough), like the plan routes. A webhook call needs no key: its signature proves it; its
JSON body's ``vars`` are given to the run over the trigger's own.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from keiri_agent.config import Settings
from keiri_agent.errors import ErrorCode, input_error
from keiri_agent.schedule import (
    ScheduleRequest,
    ScheduleStore,
    TriggerRequest,
    add_schedule,
    add_trigger,
    schedule_view,
    schedule_views,
    trigger_view,
    trigger_views,
)
from keiri_agent.server.auth import Access, Authenticator, Caller
from keiri_agent.server.errors import ApiError
from keiri_agent.server.plan_task import ANONYMOUS_CALLER
from keiri_agent.server.scheduler import Scheduler
from keiri_agent.server.webhook import SIGNATURE_HEADER, TIMESTAMP_HEADER, check_signature

__all__ = ["WebhookBody", "schedule_routes"]


class WebhookBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    vars: dict[str, Any] = Field(default_factory=dict)


def schedule_routes(settings: Settings, auth: Authenticator, scheduler: Scheduler) -> APIRouter:
    """The routes above; runs start through ``scheduler`` (and its clock)."""
    api = APIRouter(prefix="/agent")
    store = ScheduleStore.of(settings)

    def signed_in(access: Access) -> str:
        return auth.signed_in(access).owner or ANONYMOUS_CALLER

    @api.get("/schedules")
    def list_schedules(access: Caller) -> dict[str, Any]:
        signed_in(access)
        now = scheduler.clock()
        return {"schedules": schedule_views(settings, now)}

    @api.post("/schedules", status_code=201)
    def create_schedule(body: ScheduleRequest, access: Caller) -> dict[str, Any]:
        owner = signed_in(access)
        now = scheduler.clock()
        schedule = add_schedule(settings, body, created_by=owner, now=now)
        scheduler.wake()
        return schedule_view(settings, schedule, now)

    @api.delete("/schedules/{schedule_id}")
    def delete_schedule(schedule_id: str, access: Caller) -> dict[str, Any]:
        signed_in(access)
        return {"removed": store.schedules.remove(schedule_id).id}

    @api.post("/schedules/{schedule_id}/run-now", status_code=202)
    def run_now(schedule_id: str, access: Caller) -> dict[str, Any]:
        owner = signed_in(access)
        task = scheduler.run_now(schedule_id, None if access.open else owner)
        return {"task_id": task.id, "status": str(task.status)}

    @api.get("/triggers")
    def list_triggers(access: Caller) -> dict[str, Any]:
        signed_in(access)
        return {"triggers": trigger_views(settings)}

    @api.post("/triggers", status_code=201)
    def create_trigger(body: TriggerRequest, access: Caller) -> dict[str, Any]:
        owner = signed_in(access)
        trigger = add_trigger(settings, body, created_by=owner)
        return {**trigger_view(settings, trigger), "secret": trigger.secret}

    @api.delete("/triggers/{trigger_id}")
    def delete_trigger(trigger_id: str, access: Caller) -> dict[str, Any]:
        signed_in(access)
        return {"removed": store.triggers.remove(trigger_id).id}

    @api.post("/triggers/{trigger_id}", status_code=202)
    async def call_webhook(trigger_id: str, request: Request) -> dict[str, Any]:
        body = await request.body()
        headers = request.headers
        return await anyio.to_thread.run_sync(
            _call, trigger_id, body, headers.get(TIMESTAMP_HEADER), headers.get(SIGNATURE_HEADER)
        )

    def _call(
        trigger_id: str, body: bytes, timestamp: str | None, signature: str | None
    ) -> dict[str, Any]:
        trigger = store.triggers.get(trigger_id)
        if trigger.kind != "webhook":
            raise ApiError(
                404,
                ErrorCode.DEPENDENCY_NOT_FOUND,
                f"トリガー {trigger_id} は Webhook のトリガーではありません。",
                hint="keiri-agent trigger list で種類を確かめてください。",
            )
        check_signature(store, trigger, timestamp, signature, body, scheduler.clock())
        try:
            given = WebhookBody.model_validate_json(body or b"{}")
        except ValidationError as exc:
            raise input_error(
                'Webhook の本文は {"vars": {...}} の JSON にしてください。',
                "vars の名前と値のマッピングを送ってください。",
                errors=exc.errors(include_url=False, include_context=False),
            ) from None
        label = f"Webhook {trigger.id}"
        task = scheduler.start_run(
            trigger.plan_id,
            trigger.version,
            {**trigger.vars, **given.vars},
            trigger.created_by,
            label,
        )
        return {"task_id": task.id, "status": str(task.status)}

    return api
