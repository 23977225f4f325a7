"""What a schedule should do now: its next fire time, and the fire time that is due.

A schedule's fire times come after the newest one handled (``ScheduleStore.last_fire``; for a
new schedule, after it was made). :func:`due` finds the newest fire time that has passed;
only that one is handled (fire times missed during a downtime are coalesced into it). It is
*late* when it passed more than ``KEIRI_SCHEDULE_GRACE_S`` ago: then the schedule's misfire
policy says whether it still runs once (``run_once``) or is recorded as skipped (``skip``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from keiri_agent.config import Settings
from keiri_agent.schedule.calendar import BusinessCalendar
from keiri_agent.schedule.store import Schedule

__all__ = ["MAX_MISSED_SCAN", "calendar_of", "due", "next_fire"]

# Fire times walked through to find the newest missed one (a one-minute cron over a week's
# downtime is 10,080); beyond it, the walk restarts from a day before now.
MAX_MISSED_SCAN = 20_000


def calendar_of(schedule: Schedule, settings: Settings) -> BusinessCalendar:
    return BusinessCalendar.of(schedule.calendar, settings.keiri_company_holidays)


def next_fire(schedule: Schedule, after: datetime, settings: Settings) -> datetime:
    """The first fire time of ``schedule`` strictly after ``after`` (in KEIRI_TIMEZONE)."""
    zone = settings.keiri_timezone
    return schedule.rule.next_after(after, calendar_of(schedule, settings), zone)


def due(
    schedule: Schedule, since: datetime, now: datetime, settings: Settings
) -> tuple[datetime, bool] | None:
    """The newest fire time in (``since``, ``now``] and whether it is late; None when none."""
    cal = calendar_of(schedule, settings)
    zone = settings.keiri_timezone
    start = since
    if (now - since) > timedelta(days=1):
        start = max(since, now - timedelta(days=400))  # monthly rules: a year back is enough
    newest: datetime | None = None
    moment = start
    for _ in range(MAX_MISSED_SCAN):
        fire = schedule.rule.next_after(moment, cal, zone)
        if fire > now:
            break
        newest = moment = fire
    else:
        return due(schedule, now - timedelta(days=1), now, settings)
    if newest is None:
        return None
    late = (now - newest).total_seconds() > settings.keiri_schedule_grace_s
    return newest, late
