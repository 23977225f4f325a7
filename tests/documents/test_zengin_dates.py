"""Six-digit 全銀協 dates: 令和 and 平成 in 和暦, the Western-year variant, and which a file uses."""

from __future__ import annotations

import datetime as dt

import pytest

from keiri_agent.documents.zengin_dates import choose_year_style, read_yymmdd

TODAY = dt.date(2026, 12, 6)


@pytest.mark.parametrize(
    ("text", "style", "expected"),
    [
        ("080203", "wareki", dt.date(2026, 2, 3)),  # 令和8年
        ("010501", "wareki", dt.date(2019, 5, 1)),  # 令和元年の初日
        ("010430", "wareki", dt.date(1989, 4, 30)),  # no 令和元年4月: 平成元年
        ("010107", "wareki", None),  # 平成 began on 1989-01-08
        ("310430", "wareki", dt.date(2019, 4, 30)),  # 平成31年の最終日
        ("310601", "wareki", dt.date(2019, 6, 1)),  # 平成31年 still written after the change
        ("280503", "wareki", dt.date(2016, 5, 3)),  # 令和28年 is too far ahead: 平成28年
        ("260203", "seireki", dt.date(2026, 2, 3)),
        ("080230", "wareki", None),  # no such day
        ("08 203", "wareki", None),
        ("280203", "seireki", None),  # 2028: more than a year after today
    ],
)
def test_read_yymmdd(text: str, style: str, expected: dt.date | None) -> None:
    assert read_yymmdd(text, style, TODAY) == expected  # type: ignore[arg-type]


def test_the_style_of_a_file_is_the_one_nearest_to_today() -> None:
    assert choose_year_style(["081201", "080105"], TODAY) == "wareki"
    assert choose_year_style(["261201", "260105"], TODAY) == "seireki"
    # A 平成 file read years later is still 和暦.
    assert choose_year_style(["300115", "300301"], TODAY) == "wareki"
    # A date that reads in no style: neither.
    assert choose_year_style(["081301"], TODAY) is None
    assert choose_year_style([], TODAY) == "wareki"
