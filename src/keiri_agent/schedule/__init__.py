"""Plans that run by themselves: schedules on the Japanese business calendar, and triggers.

``calendar`` says which days are 営業日; ``rules`` when a schedule fires (cron, 第N営業日,
最終営業日, D日 with what to do on a holiday). The server (``keiri_agent.server.scheduler``)
fires them.
"""

from __future__ import annotations

from keiri_agent.schedule.calendar import (
    CALENDARS,
    MAX_SEARCH_DAYS,
    BusinessCalendar,
    CalendarName,
    parse_company_holidays,
)
from keiri_agent.schedule.rules import (
    MAX_BUSINESS_DAY,
    MAX_CRON_STEPS,
    BusinessDayRule,
    CronRule,
    DayRule,
    LastBusinessDayRule,
    Rule,
    describe,
    parse_at,
)

__all__ = [
    "CALENDARS",
    "MAX_BUSINESS_DAY",
    "MAX_CRON_STEPS",
    "MAX_SEARCH_DAYS",
    "BusinessCalendar",
    "BusinessDayRule",
    "CalendarName",
    "CronRule",
    "DayRule",
    "LastBusinessDayRule",
    "Rule",
    "describe",
    "parse_at",
    "parse_company_holidays",
]
