"""The period a ledger's title rows name, and a month and day without a year read in it.

A 現金出納帳, a petty-cash book or a card statement kept by hand often writes only the month
and day (``2/3``, ``2月3日``) under a title that names the period. An accountant reads such a
date as the day of that period, and only then; this module does the same:

* A period is named by a range of two whole dates (any form ``cell_forms.read_date`` reads)
  joined by ``～``, ``〜``, ``~``, ``-``, ``から`` or ``至`` (``期間：2026/4/1～2027/3/31``,
  ``自 令和7年4月1日 至 令和8年3月31日``), or by a month followed by 分 or 度
  (``2026年2月分``, ``令和8年2月度``: that month).
* A fiscal year alone (``2025年度``, ``令和7年度``) names no period: the month a company's
  year begins with is not written. A creation or print date (``作成日 2026/3/5``) is no period.
* Every title row together must name one period; two different ones (a comparison of two
  months) name none.
* A month and day is read as the one day inside the period with that month and day (and its
  weekday, when one is written); a day outside the period, or found twice in a period longer
  than a year, is not read: ``day_problem`` says why.

``table_types`` reads a column of such dates this way only when the whole column is written
without years; a year left out of one cell of a column that writes them elsewhere is a slip
to check, listed as before.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Iterable
from typing import NamedTuple

from keiri_agent.documents.cell_forms import (
    WEEKDAYS,
    month_day,
    normalize_cell_text,
    read_date,
    read_month,
)

__all__ = ["Period", "day_in", "day_problem", "period_in"]

# A whole date inside a title's text (the forms ``read_date`` reads, era or four-digit year).
_DATE_IN_TEXT = re.compile(
    r"(?:(?:令和|平成|昭和|令|平|R|H|S)\.?\s*(?:元|[0-9]{1,2})|[0-9]{4})"
    r"\s*[-/.年]\s*[0-9]{1,2}\s*[-/.月]\s*[0-9]{1,2}(?:\s*日)?"
    r"(?:\s+00:00(?::00)?)?"  # a workbook's date cell in a title row: midnight
)
# What stands between the two dates of a range (``～`` is ``~`` after NFKC).
_RANGE_MARK = re.compile(r"\s*(?:~|〜|-|から|至)\s*")
# A month followed by 分 or 度: 2026年2月分, 令和8年2月度.
_MONTH_IN_TEXT = re.compile(
    r"(?P<ym>(?:(?:令和|平成|昭和|R|H|S)\.?\s*(?:元|[0-9]{1,2})|[0-9]{4})\s*年\s*[0-9]{1,2}\s*月)"
    r"\s*(?:分|度)"
)


class Period(NamedTuple):
    """The first and the last day of a period a title names."""

    first: dt.date
    last: dt.date

    def said(self) -> str:
        return f"{self.first:%Y/%m/%d}〜{self.last:%Y/%m/%d}"


def period_in(texts: Iterable[str]) -> Period | None:
    """The one period ``texts`` (a table's title rows) name, or None (module docstring)."""
    found: set[Period] = set()
    for text in texts:
        norm = normalize_cell_text(text)
        dates = list(_DATE_IN_TEXT.finditer(norm))
        for first, last in itertools.pairwise(dates):
            if not _RANGE_MARK.fullmatch(norm[first.end() : last.start()]):
                continue
            start, end = _whole_day(first[0]), _whole_day(last[0])
            if start is not None and end is not None and start <= end:
                found.add(Period(start, end))
        for match in _MONTH_IN_TEXT.finditer(norm):
            month = read_month(match["ym"])
            if month is not None:
                begin = month.first_day()
                after = (begin + dt.timedelta(days=31)).replace(day=1)
                found.add(Period(begin, after - dt.timedelta(days=1)))
    return found.pop() if len(found) == 1 else None


def _whole_day(text: str) -> dt.date | None:
    """The day ``text`` names (a time of midnight, as a workbook's date cell, is that day)."""
    read = read_date(text)
    if isinstance(read, dt.datetime):
        return read.date() if read.time() == dt.time(0) and read.tzinfo is None else None
    return read


def _days(text: str, period: Period) -> list[dt.date] | None:
    """The days of ``period`` a month and day ``text`` can be (None: no month and day)."""
    written = month_day(text)
    if written is None:
        return None
    month, day, weekday = written
    days = []
    for year in range(period.first.year, period.last.year + 1):
        try:
            candidate = dt.date(year, month, day)
        except ValueError:
            continue  # 2/29 in a common year
        if period.first <= candidate <= period.last:
            days.append(candidate)
    return [d for d in days if weekday is None or WEEKDAYS[d.weekday()] == weekday]


def day_in(text: str, period: Period) -> dt.date | None:
    """The one day of ``period`` a month and day (``2/3``, ``2月3日(火)``) names, or None."""
    days = _days(text, period)
    return days[0] if days is not None and len(days) == 1 else None


def day_problem(text: str, period: Period) -> str | None:
    """Why a month and day is not read in ``period`` (Japanese), or None when it is (or is
    no month and day)."""
    days = _days(text, period)
    if days is None or len(days) == 1:
        return None
    if not days:
        return (
            f"表題の期間（{period.said()}）に、この月日（曜日が書かれていればその曜日も）に"
            "当たる日がありません（年も書いてください）"
        )
    return (
        f"表題の期間（{period.said()}）が 1 年より長く、この月日に当たる日が 2 つ以上あります"
        "（年も書いてください）"
    )
