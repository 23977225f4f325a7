"""What a schedule should do now: its next fire time, and the fire time that is due.

A schedule's fire times come after the newest one handled (``ScheduleStore.last_fire``; for a
new schedule, after it was made). :func:`due` finds the newest fire time that has passed, and
the older ones that passed with it (``missed``: a downtime, or a tick late by more than a fire
time's spacing). The newest is *late* when it passed more than ``KEIRI_SCHEDULE_GRACE_S`` ago:
then the schedule's misfire policy says whether it still runs once (``run_once``) or is recorded
as skipped (``skip``). The missed ones never run (``run_once`` runs the newest once for all of
them): each is recorded as skipped with :func:`missed_reason`, so that no fire time passes with
no record and no reason.

:func:`months_left_out` are the months a monthly rule has no day in under *today's* calendar
(第20営業日 in a month the company holidays leave 19 business days), said by
:func:`left_out_text`: a schedule is refused when added with such a month ahead, and as
``KEIRI_COMPANY_HOLIDAYS`` may change afterwards, the lists warn of them and the scheduler
records such a month as skipped and tells the notify URL when the month begins -- a month
never passes with no run and nobody told.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import NamedTuple

from keiri_agent.config import Settings
from keiri_agent.localtime import shown_time
from keiri_agent.schedule.calendar import BusinessCalendar
from keiri_agent.schedule.rules import Rule, describe, months_without_run
from keiri_agent.schedule.store import Schedule

__all__ = [
    "COMPANY_HOLIDAYS_NOTE",
    "MAX_MISSED_SCAN",
    "SHOWN_MONTHS",
    "Due",
    "calendar_of",
    "due",
    "left_out_text",
    "missed_reason",
    "months_left_out",
    "next_fire",
]

# Fire times walked through to find the newest missed one (a one-minute cron over a week's
# downtime is 10,080); beyond it, the walk restarts from a day before now.
MAX_MISSED_SCAN = 20_000
SHOWN_MONTHS = 6  # months named in a message; the rest are in its details / the list's field
COMPANY_HOLIDAYS_NOTE = (
    "会社休日（KEIRI_COMPANY_HOLIDAYS）を確かめ、必要ならその月は手で実行するか、"
    "予定を最終営業日や小さい N で登録し直してください。"
)


def calendar_of(schedule: Schedule, settings: Settings) -> BusinessCalendar:
    return BusinessCalendar.of(schedule.calendar, settings.keiri_company_holidays)


def next_fire(schedule: Schedule, after: datetime, settings: Settings) -> datetime:
    """The first fire time of ``schedule`` strictly after ``after`` (in KEIRI_TIMEZONE)."""
    zone = settings.keiri_timezone
    return schedule.rule.next_after(after, calendar_of(schedule, settings), zone)


class Due(NamedTuple):
    """The fire time to handle now, and the older ones that passed with it."""

    fire: datetime
    late: bool  # passed more than KEIRI_SCHEDULE_GRACE_S ago
    missed: tuple[datetime, ...] = ()  # oldest first; they are recorded as skipped


def due(schedule: Schedule, since: datetime, now: datetime, settings: Settings) -> Due | None:
    """The newest fire time in (``since``, ``now``], whether it is late, and the fire times in
    between (those within 400 days; past :data:`MAX_MISSED_SCAN` of them, a one-minute cron
    over weeks of downtime, the first ones walked and the last day's); None when none passed."""
    start = since
    if (now - since) > timedelta(days=1):
        start = max(since, now - timedelta(days=400))  # monthly rules: a year back is enough
    passed = _walk(schedule, start, now, settings)
    if len(passed) >= MAX_MISSED_SCAN:  # too many to walk: the walked ones, then the last day's
        day_before = now - timedelta(days=1)
        passed = [f for f in passed if f <= day_before] + _walk(schedule, day_before, now, settings)
    if not passed:
        return None
    late = (now - passed[-1]).total_seconds() > settings.keiri_schedule_grace_s
    return Due(passed[-1], late, tuple(passed[:-1]))


def _walk(schedule: Schedule, since: datetime, now: datetime, settings: Settings) -> list[datetime]:
    """The fire times in (``since``, ``now``], oldest first, at most :data:`MAX_MISSED_SCAN`."""
    cal = calendar_of(schedule, settings)
    passed: list[datetime] = []
    moment = since
    while len(passed) < MAX_MISSED_SCAN:
        moment = schedule.rule.next_after(moment, cal, settings.keiri_timezone)
        if moment > now:
            break
        passed.append(moment)
    return passed


def missed_reason(schedule: Schedule, fire: datetime, settings: Settings) -> str:
    """Why a fire time that passed was not run (``fire``: the one handled in its stead)."""
    if schedule.misfire == "skip":
        return (
            "サーバーが止まっていた（または確認が遅れた）間に過ぎたため、実行しませんでした"
            "（停止中に過ぎたら実行しない設定）。必要なら keiri-agent schedule run-now で"
            "実行してください。"
        )
    at = shown_time(fire, settings.keiri_timezone, seconds=False)
    return (
        "サーバーが止まっていた（または確認が遅れた）間に過ぎた回です。"
        f"{at} の回にまとめて 1 回だけ実行します（停止中に過ぎたら 1 回実行する設定）。"
    )


def months_left_out(schedule: Schedule, now: datetime, settings: Settings) -> list[date]:
    """The months (their first days), from the one holding ``now`` in KEIRI_TIMEZONE to two
    years on, in which the schedule's monthly rule has no day under the calendar of today's
    settings although it was not asked to skip any; empty for the other rules."""
    start = now.astimezone(settings.keiri_timezone).date()
    return months_without_run(schedule.rule, start, calendar_of(schedule, settings))


def left_out_text(rule: Rule, months: list[date]) -> str:
    """What a person is told of ``months`` (non-empty) that ``rule`` leaves out."""
    named = "、".join(f"{m:%Y年%-m月}" for m in months[:SHOWN_MONTHS])
    more = f"ほか {len(months) - SHOWN_MONTHS} か月" if len(months) > SHOWN_MONTHS else ""
    return f"{describe(rule)} は、{named}{more}に当たる日がなく、その月は実行されません。"
