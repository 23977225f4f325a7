"""When a schedule fires: cron, or a monthly rule on the business calendar.

Four forms (``keiri-agent schedule add``):

- ``cron``: a cron expression read in ``KEIRI_TIMEZONE`` (``cronsim``); with the ``jp``
  calendar, fire times on days that are not business days are left out.
- ``business_day``: the N-th business day of every month (第N営業日), at ``at``.
- ``last_business_day``: the last business day of every month (月末最終営業日), at ``at``.
- ``day``: day D of every month (D beyond the month's end is its last day), at ``at``; when
  that day is not a business day, the business day before it (``before``), after it
  (``after``) or no run that month (``skip``). With ``offset`` N (not 0) it is the N-th
  business day after day D (before it when N is negative), day D itself not counted whether
  it is a business day or not: 末日の前営業日 is ``day=31, offset=-1``.
- ``weekday``: every week on a weekday, at ``at``; when that day is not a business day, the
  business day before or after it, or no run that week (毎週月曜（祝日なら翌営業日）).
- ``nth_weekday``: the N-th such weekday of every month (``n`` 1-4) or its last (``n`` -1), at
  ``at``, moved or skipped as ``weekday`` is (毎月第2水曜、毎月最終金曜（祝日なら前営業日）).

:meth:`Rule.next_after` gives the first fire time strictly after a moment (on the clock, also in
the hour a zone with summer time repeats), as an aware datetime in the zone; every fire time is a
whole minute.
"""

from __future__ import annotations

import calendar as month_calendar
import itertools
import re
from collections.abc import Iterator, Mapping
from datetime import date, datetime, time, timedelta
from typing import Annotated, Any, Literal, TypeVar
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from keiri_agent.errors import BlockError, input_error
from keiri_agent.llm.field_problems import details_of, field_problems
from keiri_agent.schedule.calendar import MAX_SEARCH_DAYS, BusinessCalendar

__all__ = [
    "MAX_BUSINESS_DAY",
    "MAX_CRON_STEPS",
    "MAX_OFFSET",
    "RULE_HINT",
    "WEEKDAYS",
    "AnyRule",
    "BusinessDayRule",
    "CronRule",
    "DayRule",
    "LastBusinessDayRule",
    "NthWeekdayRule",
    "Rule",
    "WeekdayRule",
    "describe",
    "months_without_run",
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
# The N of D日のN営業日前/後: payment files go in a few business days before the pay day;
# two weeks of business days is the farthest such a notice runs.
MAX_OFFSET = 10
# How far back the search for the next fire time starts: a rule's day in an earlier period
# may be moved forward past the moment (休日なら翌営業日, N営業日後), by no more than the
# longest run of holidays (MAX_SEARCH_DAYS) plus MAX_OFFSET business days' weeks.
_LOOKBACK = timedelta(days=MAX_SEARCH_DAYS + 3 * MAX_OFFSET)
_HORIZON = timedelta(days=2 * 366)  # a rule with no fire time within two years is an error
WEEKDAYS: dict[str, str] = {
    "mon": "月",
    "tue": "火",
    "wed": "水",
    "thu": "木",
    "fri": "金",
    "sat": "土",
    "sun": "日",
}
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
IfHoliday = Literal["before", "after", "skip"]
_AT = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


def parse_at(text: str) -> time:
    """``HH:MM`` as a time of day (``INPUT_VALIDATION_FAILED`` otherwise)."""
    match = _AT.match(text.strip())
    if match is None:
        raise input_error(
            f"時刻「{text}」を読めません。",
            "--at は 24 時間制の HH:MM で指定してください（例: 09:00）。",
        )
    return time(int(match[1]), int(match[2]))


def _after(fire: datetime, moment: datetime) -> bool:
    """Whether ``fire`` is later than ``moment`` on the clock, not on the wall: in the hour a
    zone with summer time repeats in autumn, 01:30 (the first one) is before 01:10 (the second),
    and a time compared by its wall reading (as Python compares two in one zone) would fire
    before the moment it was asked after (before the schedule was made)."""
    return fire.timestamp() > moment.timestamp()


class _Dated(BaseModel):
    """A rule that fires on one day of each period (a month, a week) at ``at``."""

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

    def days_from(self, first: date, cal: BusinessCalendar) -> Iterator[date | None]:
        """The rule's day in each period from the one holding ``first`` on, in order (None: no
        run that period). Later periods never give an earlier day."""
        raise NotImplementedError

    def next_after(self, moment: datetime, cal: BusinessCalendar, zone: ZoneInfo) -> datetime:
        local = moment.astimezone(zone)
        at = parse_at(self.at)
        for day in self.days_from(local.date() - _LOOKBACK, cal):
            if day is None:
                continue
            fire = datetime.combine(day, at, tzinfo=zone)
            if _after(fire, moment):
                return fire
            if day > local.date() + _HORIZON:
                break
        raise input_error(
            "2 年先まで実行日がありません。",
            "予定の条件と KEIRI_COMPANY_HOLIDAYS を確かめてください。",
        )


class _Monthly(_Dated):
    def day_in(self, year: int, month: int, cal: BusinessCalendar) -> date | None:
        raise NotImplementedError

    def months_without_run(self, first: date, cal: BusinessCalendar) -> list[date]:
        """The first day of each month, from the one holding ``first`` to two years on, in
        which the rule has no day although it was not asked to skip any (第15営業日 in a month
        the company holidays leave 14 business days)."""
        if getattr(self, "if_holiday", None) == "skip":
            return []
        months = itertools.islice(self.days_from(first, cal), 25)
        start = first.replace(day=1)
        return [
            date(start.year + (start.month - 1 + n) // 12, (start.month - 1 + n) % 12 + 1, 1)
            for n, day in enumerate(months)
            if day is None
        ]

    def days_from(self, first: date, cal: BusinessCalendar) -> Iterator[date | None]:
        year, month = first.year, first.month
        last = first + _LOOKBACK + _HORIZON
        while (year, month) <= (last.year, last.month):
            yield self.day_in(year, month, cal)
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)


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


def _moved(target: date, if_holiday: IfHoliday, cal: BusinessCalendar) -> date | None:
    """``target``, or where a day that is not a business day moves to (None: skipped)."""
    if cal.is_business_day(target):
        return target
    if if_holiday == "skip":
        return None
    return cal.shift(target, -1 if if_holiday == "before" else 1)


class DayRule(_Monthly):
    kind: Literal["day"] = "day"
    day: int = Field(ge=1, le=31)
    # None: "before" (the default); not allowed with an offset, which never looks at it.
    if_holiday: IfHoliday | None = None
    offset: int = Field(default=0, ge=-MAX_OFFSET, le=MAX_OFFSET)

    @field_validator("offset")
    @classmethod
    def _one_way(cls, value: int, info: ValidationInfo) -> int:
        if value and info.data.get("if_holiday") is not None:
            raise ValueError(
                "休日のときの扱い（--if-holiday）と一緒には指定できません"
                "（ずらすときは D 日が休日でも D 日から数えます）"
            )
        return value

    def day_in(self, year: int, month: int, cal: BusinessCalendar) -> date | None:
        last = month_calendar.monthrange(year, month)[1]
        target = date(year, month, min(self.day, last))
        if not self.offset:
            return _moved(target, self.if_holiday or "before", cal)
        step: Literal[-1, 1] = -1 if self.offset < 0 else 1
        for _ in range(abs(self.offset)):
            target = cal.shift(target + timedelta(days=step), step)
        return target


class WeekdayRule(_Dated):
    kind: Literal["weekday"] = "weekday"
    weekday: Weekday
    if_holiday: IfHoliday = "after"

    def days_from(self, first: date, cal: BusinessCalendar) -> Iterator[date | None]:
        target = first + timedelta(days=(list(WEEKDAYS).index(self.weekday) - first.weekday()) % 7)
        while target <= first + _LOOKBACK + _HORIZON:
            yield _moved(target, self.if_holiday, cal)
            target += timedelta(days=7)


class NthWeekdayRule(_Monthly):
    kind: Literal["nth_weekday"] = "nth_weekday"
    weekday: Weekday
    n: Literal[1, 2, 3, 4, -1]  # -1: the month's last such weekday (a fifth is not in every month)
    if_holiday: IfHoliday = "after"

    def day_in(self, year: int, month: int, cal: BusinessCalendar) -> date | None:
        first = date(year, month, 1)
        ahead = (list(WEEKDAYS).index(self.weekday) - first.weekday()) % 7
        days = range(1 + ahead, month_calendar.monthrange(year, month)[1] + 1, 7)
        target = date(year, month, days[self.n - 1] if self.n > 0 else days[-1])
        return _moved(target, self.if_holiday, cal)


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
            if _after(fire, moment) and cal.is_business_day(fire.date()):
                return fire
            if count >= MAX_CRON_STEPS:
                break
        raise input_error(
            f"cron 式「{self.expr}」は営業日に当たりません。",
            "営業日に当たる式にするか、--calendar none で休日も実行してください。",
        )


AnyRule = CronRule | BusinessDayRule | LastBusinessDayRule | DayRule | WeekdayRule | NthWeekdayRule
Rule = Annotated[AnyRule, Field(discriminator="kind")]
_FIELD_LABELS = {  # a rule's fields as the CLI's options and the 予定 page name them
    "kind": "実行の条件",
    "expr": "cron 式",
    "n": "第N（営業日・曜日）",
    "day": "日",
    "if_holiday": "休日のとき",
    "offset": "営業日のずらし",
    "weekday": "曜日",
    "at": "時刻",
}


def months_without_run(
    rule: AnyRule,
    first: date,
    cal: BusinessCalendar,
) -> list[date]:
    """The months (their first days) in the two years from ``first`` that a monthly rule
    leaves out without being asked to; empty for the other rules."""
    return rule.months_without_run(first, cal) if isinstance(rule, _Monthly) else []


_RULE: TypeAdapter[AnyRule] = TypeAdapter(Rule)
RULE_HINT = (
    "cron は 5 項目（分 時 日 月 曜日）、第N営業日は 1〜15、日は 1〜31、"
    f"営業日のずらしは -{MAX_OFFSET}〜{MAX_OFFSET}、曜日は mon〜sun、第N曜日の N は 1〜4 か -1（最終）、"
    "時刻は HH:MM です。"
)


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
        raise input_error(
            f"{what}を読めません（{problems}）。", hint, problems=details_of(found)
        ) from None


def parse_rule(
    raw: dict[str, Any],
) -> AnyRule:
    """The rule ``raw`` describes (as the CLI, the API and the app's 予定 page send it), or a
    BlockError that says in Japanese which field is wrong and why."""
    return read_fields(_RULE, raw, what="実行の条件", labels=_FIELD_LABELS, hint=RULE_HINT)


_IF_HOLIDAY = {
    "before": "休日なら前営業日",
    "after": "休日なら翌営業日",
    "skip": "休日なら実行しない",
}


def describe(rule: AnyRule) -> str:
    """The rule as a person reads it (毎月第3営業日 09:00)."""
    if isinstance(rule, CronRule):
        return f"cron「{rule.expr}」"
    if isinstance(rule, BusinessDayRule):
        return f"毎月第{rule.n}営業日 {rule.at}"
    if isinstance(rule, LastBusinessDayRule):
        return f"毎月最終営業日 {rule.at}"
    if isinstance(rule, NthWeekdayRule):
        nth = "最終" if rule.n == -1 else f"第{rule.n}"
        return f"毎月{nth}{WEEKDAYS[rule.weekday]}曜 {rule.at}（{_IF_HOLIDAY[rule.if_holiday]}）"
    if isinstance(rule, WeekdayRule):
        return f"毎週{WEEKDAYS[rule.weekday]}曜 {rule.at}（{_IF_HOLIDAY[rule.if_holiday]}）"
    day = "末日" if rule.day == 31 else f"{rule.day}日"
    if rule.offset:
        way = "前" if rule.offset < 0 else "後"
        count = "" if abs(rule.offset) == 1 else str(abs(rule.offset))
        shifted = {"前": "前営業日", "後": "翌営業日"}[way] if not count else f"{count}営業日{way}"
        return f"毎月{day}の{shifted} {rule.at}"
    return f"毎月{day} {rule.at}（{_IF_HOLIDAY[rule.if_holiday or 'before']}）"
