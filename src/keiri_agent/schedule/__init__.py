"""Plans that run by themselves: schedules on the Japanese business calendar, and triggers.

``calendar`` says which days are 営業日; ``rules`` when a schedule fires (cron, 第N営業日,
最終営業日, D日 with what to do on a holiday). The server (``keiri_agent.server.scheduler``)
fires them. ``store`` keeps schedules, triggers and the claims that make each start happen
once in one SQLite file under the workspace; ``requests`` what a person asks for when adding
one (the CLI, the API and the app alike); ``manage`` checks and adds them, ``views`` shows
them; ``due`` says which fire time is due now; ``pins`` which version of the plan runs.
"""

from __future__ import annotations

from keiri_agent.schedule.calendar import (
    CALENDARS,
    MAX_SEARCH_DAYS,
    BusinessCalendar,
    CalendarName,
    parse_company_holidays,
)
from keiri_agent.schedule.due import (
    COMPANY_HOLIDAYS_NOTE,
    MAX_MISSED_SCAN,
    SHOWN_MONTHS,
    calendar_of,
    due,
    left_out_text,
    months_left_out,
    next_fire,
)
from keiri_agent.schedule.manage import SECRET_BYTES, add_schedule, add_trigger
from keiri_agent.schedule.pins import (
    LATEST_APPROVED,
    WORKING,
    check_pin,
    default_pin,
    resolve_pin,
    working_drift,
)
from keiri_agent.schedule.requests import (
    MAX_FILE_VAR_CHARS,
    MAX_FOLDER_CHARS,
    MAX_PIN_CHARS,
    REQUEST_HINT,
    ScheduleRequest,
    TriggerRequest,
)
from keiri_agent.schedule.rules import (
    MAX_BUSINESS_DAY,
    MAX_CRON_STEPS,
    MAX_OFFSET,
    RULE_HINT,
    WEEKDAYS,
    BusinessDayRule,
    CronRule,
    DayRule,
    LastBusinessDayRule,
    NthWeekdayRule,
    Rule,
    WeekdayRule,
    describe,
    parse_at,
    parse_rule,
    read_fields,
)
from keiri_agent.schedule.store import (
    BUSY_TIMEOUT_S,
    MAX_PLAN_ID_CHARS,
    STORE_DIR,
    STORE_FILE,
    Fire,
    FireOutcome,
    Misfire,
    PlanId,
    Schedule,
    ScheduleStore,
    Trigger,
    new_id,
    not_found,
)
from keiri_agent.schedule.views import schedule_view, schedule_views, trigger_view, trigger_views

__all__ = [
    "BUSY_TIMEOUT_S",
    "CALENDARS",
    "COMPANY_HOLIDAYS_NOTE",
    "LATEST_APPROVED",
    "MAX_BUSINESS_DAY",
    "MAX_CRON_STEPS",
    "MAX_FILE_VAR_CHARS",
    "MAX_FOLDER_CHARS",
    "MAX_MISSED_SCAN",
    "MAX_OFFSET",
    "MAX_PIN_CHARS",
    "MAX_PLAN_ID_CHARS",
    "MAX_SEARCH_DAYS",
    "REQUEST_HINT",
    "RULE_HINT",
    "SECRET_BYTES",
    "SHOWN_MONTHS",
    "STORE_DIR",
    "STORE_FILE",
    "WEEKDAYS",
    "WORKING",
    "BusinessCalendar",
    "BusinessDayRule",
    "CalendarName",
    "CronRule",
    "DayRule",
    "Fire",
    "FireOutcome",
    "LastBusinessDayRule",
    "Misfire",
    "NthWeekdayRule",
    "PlanId",
    "Rule",
    "Schedule",
    "ScheduleRequest",
    "ScheduleStore",
    "Trigger",
    "TriggerRequest",
    "WeekdayRule",
    "add_schedule",
    "add_trigger",
    "calendar_of",
    "check_pin",
    "default_pin",
    "describe",
    "due",
    "left_out_text",
    "months_left_out",
    "new_id",
    "next_fire",
    "not_found",
    "parse_at",
    "parse_company_holidays",
    "parse_rule",
    "read_fields",
    "resolve_pin",
    "schedule_view",
    "schedule_views",
    "trigger_view",
    "trigger_views",
    "working_drift",
]
