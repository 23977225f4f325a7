"""Adding schedules and triggers: what the CLI, the API and the app share.

:func:`add_schedule` checks a schedule before it is stored (the plan exists, the version pin
names a version this plan has and approval allows it, the rule has a next fire time) and
stores it; what is asked for comes as one ``ScheduleRequest`` (``requests``), whose fields
keep their own limits. :func:`add_trigger` does the same for a trigger. How they are shown is
``views``.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path

from keiri_agent.config import Settings
from keiri_agent.errors import input_error
from keiri_agent.plan import PLAN_ID_RE, resolve_plan_file
from keiri_agent.schedule.due import left_out_text, months_left_out, next_fire
from keiri_agent.schedule.pins import check_pin, default_pin
from keiri_agent.schedule.requests import ScheduleRequest, TriggerRequest
from keiri_agent.schedule.rules import CronRule
from keiri_agent.schedule.store import Schedule, ScheduleStore, Trigger, new_id
from keiri_agent.versions import VersionStore, plan_not_found
from keiri_agent.workspace import confine

__all__ = ["SECRET_BYTES", "add_schedule", "add_trigger"]

SECRET_BYTES = 32  # a webhook's HMAC key: 256 bits, as long as the SHA-256 block needs


def _check_plan(settings: Settings, plan_id: str) -> None:
    if not PLAN_ID_RE.match(plan_id):  # no plan can have it: each run would fail on it
        raise input_error(
            f"Plan の id「{plan_id}」では予定・トリガーを登録できません"
            "（Plan の id は英数字・_・- と / で書きます）。",
            "Plan ファイルの id を英数字の名前にして登録し直してください"
            "（例: keiri/monthly_close。日本語の説明は Plan の description に書けます）。",
            plan=plan_id,
        )
    known = resolve_plan_file(plan_id, Path(settings.keiri_designs_dir)) is not None
    if not known and not VersionStore.of(settings).versions(plan_id):
        raise plan_not_found(plan_id)


def add_schedule(
    settings: Settings,
    request: ScheduleRequest,
    *,
    created_by: str,
    now: datetime | None = None,
) -> Schedule:
    """Check and store a new schedule (nothing is stored when a check fails)."""
    _check_plan(settings, request.plan_id)
    if request.calendar == "none" and not isinstance(request.rule, CronRule):
        raise input_error(
            "営業日で決める予定（第N営業日・最終営業日・D日）には営業日カレンダーが要ります。",
            "--calendar jp を指定してください（--calendar none は --cron だけに使えます）。",
        )
    pin = check_pin(settings, request.plan_id, request.version or default_pin(settings))
    moment = now or datetime.now(UTC)
    schedule = Schedule(
        **request.model_dump(exclude={"rule", "version"}),
        rule=request.rule,
        id=new_id("s"),
        version=pin,
        created_by=created_by,
        created_at=moment.replace(microsecond=0),
    )
    next_fire(schedule, moment, settings)  # a rule that never fires is refused now
    _check_every_month(schedule, moment, settings)
    return ScheduleStore.of(settings).schedules.add(schedule)


def _check_every_month(schedule: Schedule, moment: datetime, settings: Settings) -> None:
    """A monthly rule that would leave a month out without being asked to is refused: the
    month would pass with no run and nobody told."""
    missing = months_left_out(schedule, moment, settings)
    if missing:
        raise input_error(
            left_out_text(schedule.rule, missing),
            "N を小さくするか、--last-business-day（最終営業日）にするか、"
            "KEIRI_COMPANY_HOLIDAYS の会社休日を確かめてください。",
            months=[f"{m:%Y-%m}" for m in missing],
        )


def add_trigger(settings: Settings, request: TriggerRequest, *, created_by: str) -> Trigger:
    """Check and store a new trigger; a webhook trigger gets a new secret (shown once)."""
    _check_plan(settings, request.plan_id)
    pin = check_pin(settings, request.plan_id, request.version or default_pin(settings))
    folder = None
    if request.kind == "folder":
        if not request.folder:
            raise input_error(
                "フォルダのトリガーには見張るフォルダが要ります。",
                "--folder に KEIRI_WORKSPACE_ROOT からの相対パスを指定してください"
                "（例: inbox/bank）。",
            )
        root = Path(settings.keiri_workspace_root)
        # PathEscapeError (a BlockError) for ../ and the like
        target = confine(root, request.folder)
        target.mkdir(parents=True, exist_ok=True)
        folder = target.relative_to(root.resolve()).as_posix()
    trigger = Trigger(
        **request.model_dump(exclude={"folder", "version"}),
        id=new_id("t"),
        version=pin,
        folder=folder,
        secret=secrets.token_hex(SECRET_BYTES) if request.kind == "webhook" else None,
        created_by=created_by,
        created_at=datetime.now(UTC).replace(microsecond=0),
    )
    return ScheduleStore.of(settings).triggers.add(trigger)
