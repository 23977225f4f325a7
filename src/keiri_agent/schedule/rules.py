"""When a schedule fires: cron, or a monthly rule on the business calendar.

Four forms (``keiri-agent schedule add``):

- ``cron``: a cron expression read in ``KEIRI_TIMEZONE`` (``cronsim``); with the ``jp``
  calendar, fire times on days that are not business days are left out.
- ``business_day``: the N-th business day of every month (第N営業日), at ``at``.
- ``last_business_day``: the last business day of every month (月末最終営業日), at ``at``.
- ``day``: day D of every month (D beyond the month's end is its last day), at ``at``; when
  that day is not a business day, the business day before it (``before``), after it
  (``after``) or no run that month (``skip``).

:meth:`Rule.next_after` gives the first fire time strictly after a moment, as an aware datetime
in the zone; every fire time is a whole minute.
"""

from __future__ import annotations

import calendar as month_calendar
import re
from collections.abc import Iterator, Mapping
from datetime import date, datetime, time
from typing import Annotated, Any, Literal, TypeVar
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.llm.field_problems import details_of, field_problems
from keiri_agent.schedule.calendar import BusinessCalendar

__all__ = [
    "MAX_BUSINESS_DAY",
    "MAX_CRON_STEPS",
    "RULE_HINT",
    "BusinessDayRule",
    "CronRule",
    "DayRule",
    "LastBusinessDayRule",
    "Rule",
    "describe",
    "parse_at",
    "parse_rule",
    "read_fields",
]

_T = TypeVar("_T")

# The N of 第N営業日: every month has at least this many business days (February with its
# holidays has 17 or more), so such a schedule fires every month.
MAX_BUSINESS_DAY = 15
# How many cron fire times may be passed over looking for one on a business day (a cron that
# only matches holidays, e.g. "0 9 1 1 *", must end with an error, not loop).
MAX_CRON_STEPS = 2000
_AT = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


def parse_at(text: str) -> time:
    """``HH:MM`` as a time of day (``INPUT_VALIDATION_FAILED`` otherwise)."""
    match = _AT.match(text.strip())
    if match is None:
        raise BlockError(
            f"時刻「{text}」を読めません。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="--at は 24 時間制の HH:MM で指定してください（例: 09:00）。",
        )
    return time(int(match[1]), int(match[2]))


class _Monthly(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    at: str = "09:00"

    @field_validator("at")
    @classmethod
    def _at(cls, value: str) -> str:
        try:
            parsed = parse_at(value)
        except BlockError as exc:
            raise ValueError(exc.message) from None
        return f"{parsed.hour:02d}:{parsed.minute:02d}"

    def day_in(self, year: int, month: int, cal: BusinessCalendar) -> date | None:
        raise NotImplementedError

    def next_after(self, moment: datetime, cal: BusinessCalendar, zone: ZoneInfo) -> datetime:
        local = moment.astimezone(zone)
        year, month = local.year, local.month - 1  # a month's day may fall in the one before
        if month == 0:
            year, month = year - 1, 12
        at = parse_at(self.at)
        for _ in range(26):
            day = self.day_in(year, month, cal)
            if day is not None:
                fire = datetime.combine(day, at, tzinfo=zone)
                if fire > local:
                    return fire
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        raise BlockError(
            "2 年先まで実行日がありません。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="予定の条件と KEIRI_COMPANY_HOLIDAYS を確かめてください。",
        )


class BusinessDayRule(_Monthly):
    kind: Literal["business_day"] = "business_day"
    n: int = Field(ge=1, le=MAX_BUSINESS_DAY)

    def day_in(self, year: int, month: int, cal: BusinessCalendar) -> date | None:
        days = cal.business_days(year, month)
        return days[self.n - 1] if len(days) >= self.n else None


class LastBusinessDayRule(_Monthly):
    kind: Literal["last_business_day"] = "last_business_day"

    def day_in(self, year: int, month: int, cal: BusinessCalendar) -> date | None:
        days = cal.business_days(year, month)
        return days[-1] if days else None


class DayRule(_Monthly):
    kind: Literal["day"] = "day"
    day: int = Field(ge=1, le=31)
    if_holiday: Literal["before", "after", "skip"] = "before"

    def day_in(self, year: int, month: int, cal: BusinessCalendar) -> date | None:
        last = month_calendar.monthrange(year, month)[1]
        target = date(year, month, min(self.day, last))
        if cal.is_business_day(target):
            return target
        if self.if_holiday == "skip":
            return None
        return cal.shift(target, -1 if self.if_holiday == "before" else 1)


class CronRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["cron"] = "cron"
    expr: str = Field(min_length=1, max_length=200)

    @field_validator("expr")
    @classmethod
    def _expr(cls, value: str) -> str:
        from cronsim import CronSim, CronSimError

        try:
            CronSim(value, datetime(2000, 1, 1))
        except CronSimError:
            raise ValueError(
                f"cron 式「{value}」を読めません（5 項目の「分 時 日 月 曜日」で書きます）"
            ) from None
        return value.strip()

    def times(self, moment: datetime, zone: ZoneInfo) -> Iterator[datetime]:
        from cronsim import CronSim

        return iter(CronSim(self.expr, moment.astimezone(zone)))

    def next_after(self, moment: datetime, cal: BusinessCalendar, zone: ZoneInfo) -> datetime:
        for count, fire in enumerate(self.times(moment, zone)):
            if cal.is_business_day(fire.date()):
                return fire
            if count >= MAX_CRON_STEPS:
                break
        raise BlockError(
            f"cron 式「{self.expr}」は営業日に当たりません。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="営業日に当たる式にするか、--calendar none で休日も実行してください。",
        )


Rule = Annotated[
    CronRule | BusinessDayRule | LastBusinessDayRule | DayRule, Field(discriminator="kind")
]
_FIELD_LABELS = {  # a rule's fields as the CLI's options and the 予定 page name them
    "kind": "実行の条件",
    "expr": "cron 式",
    "n": "第N営業日",
    "day": "日",
    "if_holiday": "休日のとき",
    "at": "時刻",
}
_RULE: TypeAdapter[CronRule | BusinessDayRule | LastBusinessDayRule | DayRule] = TypeAdapter(Rule)
RULE_HINT = "cron は 5 項目（分 時 日 月 曜日）、第N営業日は 1〜15、日は 1〜31、時刻は HH:MM です。"


def read_fields(
    adapter: TypeAdapter[_T],
    raw: Mapping[str, Any],
    *,
    what: str,
    labels: Mapping[str, str],
    hint: str,
) -> _T:
    """``raw`` read by ``adapter``, or a BlockError that names each wrong field in Japanese
    (``labels``: a field's name as the CLI's options and the 予定 page say it)."""
    try:
        return adapter.validate_python(raw)
    except ValidationError as exc:
        found = field_problems(exc, data=raw)
        problems = "、".join(p.at(labels.get(str(p.loc[-1]), p.field)) for p in found)
        raise BlockError(
            f"{what}を読めません（{problems}）。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint=hint,
            details={"problems": details_of(found)},
        ) from None


def parse_rule(raw: dict[str, Any]) -> CronRule | BusinessDayRule | LastBusinessDayRule | DayRule:
    """The rule ``raw`` describes (as the CLI, the API and the app's 予定 page send it), or a
    BlockError that says in Japanese which field is wrong and why."""
    return read_fields(_RULE, raw, what="実行の条件", labels=_FIELD_LABELS, hint=RULE_HINT)


_IF_HOLIDAY = {
    "before": "休日なら前営業日",
    "after": "休日なら翌営業日",
    "skip": "休日なら実行しない",
}


def describe(rule: CronRule | BusinessDayRule | LastBusinessDayRule | DayRule) -> str:
    """The rule as a person reads it (毎月第3営業日 09:00)."""
    if isinstance(rule, CronRule):
        return f"cron「{rule.expr}」"
    if isinstance(rule, BusinessDayRule):
        return f"毎月第{rule.n}営業日 {rule.at}"
    if isinstance(rule, LastBusinessDayRule):
        return f"毎月最終営業日 {rule.at}"
    return f"毎月{rule.day}日 {rule.at}（{_IF_HOLIDAY[rule.if_holiday]}）"
