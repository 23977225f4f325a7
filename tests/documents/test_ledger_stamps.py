"""Every date and time ``tests/support/ledger_stamps`` draws is read right or listed with why,
in every file form (CSV UTF-8, UTF-8 with a BOM and CP932, workbooks), and a column whose every
time is midnight is a date column in a CSV as in a workbook.

Property ("every common date form is read, nothing wrong silently"): ``date(1)``'s
``Tue Feb 3 10:15:00 JST 2026``, ISO 8601 with ``Z``/``+09:00``/fractions, RFC 2822, Japanese
forms with times, 和暦, full-width digits, Excel serial numbers with or without a time are read
(times with an offset as Asia/Tokyo's wall clock); a column whose cells show both orders of the
year-last date lists every such cell; ``2026/02/03 0:00`` makes a ``date`` column as a
workbook's midnight date cells do.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pandas as pd
import pytest

from keiri_agent.documents.tables import read_table
from tests.support.ledger_stamps import FILES, KINDS, Stamps, draw, ledger_file

SEEDS = 10  # columns of each kind in each file form
GENERIC = "日付の書き方として読めません"


def _same(read: object, want: object) -> bool:
    if not isinstance(want, dt.date) or not isinstance(read, dt.datetime):
        return False
    whole = want if isinstance(want, dt.datetime) else dt.datetime(want.year, want.month, want.day)
    return abs(pd.Timestamp(read).to_pydatetime() - whole) < dt.timedelta(milliseconds=1)


def outcomes(drawn: Stamps, seed: int, form: str) -> Counter[str]:
    """How each cell of ``drawn`` read from a ``form`` file: ``right``, ``wrong`` (another
    value, not listed), ``generic`` (listed with the generic reason), ``silent`` (kept as
    written, not listed), ``unread`` (a value it must read to, listed), ``refused`` (listed,
    as it must be); and once per column ``kind`` where the column's kind is not the one it must
    be (``date`` for midnights)."""
    data, name = ledger_file(drawn, seed, form)
    result = read_table(data, name=name)
    reasons = {
        u["position"]: u["reason"] for u in result.info.unreadable if u["column"] == drawn.header
    }
    assert result.positions is not None
    cells = zip(
        result.positions.tolist(), result.df[drawn.header].tolist(), drawn.want, strict=True
    )
    found = Counter(_outcome(reasons.get(line), read, want) for line, read, want in cells)
    if (
        drawn.column_kind is not None
        and result.info.converted.get(drawn.header) != drawn.column_kind
    ):
        found["kind"] += 1
    return found


def _outcome(reason: str | None, read: object, want: object) -> str:
    if reason is not None:
        return "generic" if reason == GENERIC else "unread" if want is not None else "refused"
    if want is not None and _same(read, want):
        return "right"
    if isinstance(read, str) or read is None:
        return "silent"
    return "wrong"


def _files(kind: str, seeds: int = SEEDS) -> dict[tuple[int, str], Counter[str]]:
    """The outcomes of each drawn file of ``kind``, by its seed and form."""
    return {
        (seed, form): outcomes(draw(seed, kind), seed, form)
        for seed in range(seeds)
        for form in FILES
    }


def measure(seeds: int = SEEDS) -> dict[str, Counter[str]]:
    """The outcomes of every kind over ``seeds`` columns in every file form."""
    return {kind: sum(_files(kind, seeds).values(), Counter()) for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_every_drawn_stamp_is_read_right_or_listed_with_why(kind: str) -> None:
    found = _files(kind)
    bad = {at: dict(c) for at, c in found.items() if set(c) - {"right", "refused"}}
    assert bad == {}, list(bad.items())[:5]


@pytest.mark.parametrize("header", ["日当", "出張日当", "日給", "営業日数", "延滞日数"])
def test_money_by_the_day_and_counts_of_days_are_not_serial_dates(header: str) -> None:
    """日 in 日当 (a daily allowance) or 営業日数 does not name a date: 25,000 yen a day is not
    the serial number of 1968-06-11."""
    result = read_table(f"氏名,{header}\r\na,25000\r\nb,30000.5\r\n".encode(), name="a.csv")
    assert result.df[header].tolist() == [25000, 30000.5]
    assert result.info.converted[header] == "number"
