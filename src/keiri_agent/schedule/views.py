"""Schedules and triggers as people read them: what the CLI lists, the API returns, the app shows.

:func:`schedule_view` is a schedule with its rule in words, its next fire time in
``KEIRI_TIMEZONE`` (JST), its last fires (``outcome_text``: what became of each, in words), each
with the versions its run ran (``versions_text``: as the versions page names them,
``keiri/close v3（1a2b3c4d5e6f）``), and a warning when the working copy has unapproved changes,
a subflow its version calls has no approved version (its start would be refused:
``pins.subflow_refusal``), or the company holidays of today's settings leave a month ahead
without its day (``months_left_out``); :func:`trigger_view` a trigger with its pin in words,
its webhook path (never its secret), and for a folder trigger its last files, each with the
versions its run ran. :func:`schedule_views` and :func:`trigger_views` are every stored one so.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.localtime import shown_time, utc_text
from keiri_agent.schedule.due import left_out_text, months_left_out, next_fire
from keiri_agent.schedule.pins import subflow_refusal, working_drift
from keiri_agent.schedule.rules import describe
from keiri_agent.schedule.store import Schedule, ScheduleStore, Trigger
from keiri_agent.versions import VersionStore

__all__ = [
    "OUTCOME_LABELS",
    "schedule_view",
    "schedule_views",
    "trigger_view",
    "trigger_views",
    "versions_text",
]

# What became of a fire time, as a person reads it (the stored word stays ``outcome``).
OUTCOME_LABELS = {"started": "実行開始", "skipped": "実行せず", "failed": "開始できず"}


def _pin_label(pin: str) -> str:
    if pin == "latest-approved":
        return "最新の承認済みの版"
    if pin == "working":
        return "作業コピー"
    return f"版 {pin[:12]}"


def versions_text(settings: Settings, versions: Mapping[str, str] | None) -> str:
    """What a run ran (plan id -> version hash, the plan first), as the versions page names
    each version: ``keiri/close v3（1a2b3c4d5e6f）、double v1（…）`` ("" when none is kept)."""
    store = VersionStore.of(settings)
    said = []
    for plan_id, vid in (versions or {}).items():
        version = store.get(plan_id, vid)
        said.append(f"{plan_id} {version.label if version is not None else f'版 {vid[:12]}'}")
    return "、".join(said)


def _file_row(settings: Settings, row: Mapping[str, Any]) -> dict[str, Any]:
    """A folder trigger's file row as people read it: when it was taken, in the zone, and the
    versions its run ran."""
    claimed = datetime.fromisoformat(str(row["claimed_at"]))
    return {
        **row,
        "claimed_at_local": shown_time(claimed, settings.keiri_timezone, seconds=False),
        "outcome_text": OUTCOME_LABELS["started" if row["task_id"] else "failed"]
        if row["task_id"] or row["error"]
        else "実行を始めています",
        "versions_text": versions_text(settings, row["versions"]),
    }


def _joined(warnings: list[str | None]) -> str | None:
    return " ".join(text for text in warnings if text) or None


def schedule_view(
    settings: Settings, schedule: Schedule, now: datetime | None = None
) -> dict[str, Any]:
    """A schedule as ``schedule list`` and the API show it (times in UTC and in the zone)."""
    store = ScheduleStore.of(settings)
    zone = settings.keiri_timezone
    moment = now or datetime.now(UTC)
    last = store.last_fire(schedule.id)
    start = max(moment, last) if last is not None else moment
    upcoming = next_fire(schedule, start, settings)
    fires = store.fires(schedule.id, limit=5)
    # The company holidays may have changed since the schedule was added (checked then).
    left_out = months_left_out(schedule, moment, settings)
    warnings = [
        working_drift(settings, schedule.plan_id, schedule.version),
        subflow_refusal(settings, schedule.plan_id, schedule.version),
        left_out_text(schedule.rule, left_out) if left_out else None,
    ]
    return {
        **schedule.model_dump(mode="json"),
        "rule_text": describe(schedule.rule),
        "version_text": _pin_label(schedule.version),
        "misfire_text": "停止中に過ぎたら 1 回実行"
        if schedule.misfire == "run_once"
        else "停止中に過ぎたら実行しない",
        "next_fire": utc_text(upcoming),
        "next_fire_local": shown_time(upcoming, zone, seconds=False),
        "recent_fires": [
            {
                **fire.model_dump(mode="json"),
                "fire_time_local": shown_time(fire.fire_time, zone, seconds=False),
                "outcome_text": OUTCOME_LABELS[fire.outcome],
                "versions_text": versions_text(settings, fire.versions),
            }
            for fire in fires
        ],
        "months_left_out": [f"{m:%Y-%m}" for m in left_out],
        "warning": _joined(warnings),
    }


def schedule_views(settings: Settings, now: datetime | None = None) -> list[dict[str, Any]]:
    """Every stored schedule as :func:`schedule_view` shows it (the lists of CLI, API and app)."""
    return [schedule_view(settings, s, now) for s in ScheduleStore.of(settings).schedules.all()]


def trigger_view(settings: Settings, trigger: Trigger) -> dict[str, Any]:
    """A trigger as ``trigger list`` and the API show it: never its secret."""
    data = trigger.model_dump(mode="json", exclude={"secret"})
    data["version_text"] = _pin_label(trigger.version)
    data["url"] = f"/agent/triggers/{trigger.id}" if trigger.kind == "webhook" else None
    warnings = [
        working_drift(settings, trigger.plan_id, trigger.version),
        subflow_refusal(settings, trigger.plan_id, trigger.version),
    ]
    data["warning"] = _joined(warnings)
    files = (
        ScheduleStore.of(settings).files(trigger.id, limit=5) if trigger.kind == "folder" else []
    )
    data["recent_files"] = [_file_row(settings, row) for row in reversed(files)]  # newest first
    return data


def trigger_views(settings: Settings) -> list[dict[str, Any]]:
    """Every stored trigger as :func:`trigger_view` shows it (the lists of CLI, API and app)."""
    return [trigger_view(settings, t) for t in ScheduleStore.of(settings).triggers.all()]
