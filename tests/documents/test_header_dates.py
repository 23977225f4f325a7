"""Header detection reads each cell of the rows it scans as a date at most once: a journal
export without a header (its first row of dates over more dates) is told from a header over
data by the date columns below the first wide row (``table_infer._dated_like_below``).

Measured on main e730bc5: already once per cell (the first wide row is the only one asked);
this guards it for a 30-row header area of date columns.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

from keiri_agent.documents import table_infer
from keiri_agent.documents.table_infer import HEADER_SCAN_ROWS, detect_header


def _rows(headed: bool) -> list[list[str]]:
    start = dt.date(2026, 1, 1)
    rows = [
        [
            f"{start + dt.timedelta(days=i):%Y/%m/%d}",
            f"{start + dt.timedelta(days=100 + i):%Y-%m-%d}",
            f"取引先{i}",
            f"{1200 * (i + 1):,}",
            f"令和8年{(i % 12) + 1}月{(i % 28) + 1}日"
            if i % 2
            else f"R8.{(i % 12) + 1}.{i % 28 + 1}",
        ]
        for i in range(HEADER_SCAN_ROWS + 5)
    ]
    if headed:
        rows.insert(0, ["取引日", "支払日", "取引先", "金額", "計上日"])
    return [["仕訳日記帳 2026年1月"], *rows]


@pytest.mark.parametrize("headed", [False, True])
def test_each_scanned_cell_is_read_as_a_date_once(
    headed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: Counter[str] = Counter()
    read_date = table_infer.read_date

    def counted(text: str) -> dt.date | dt.datetime | None:
        reads[text] += 1
        return read_date(text)

    monkeypatch.setattr(table_infer, "read_date", counted)
    rows = _rows(headed)

    assert detect_header(rows) == ((1, 2) if headed else (None, 1))
    assert reads, "no date was read"
    assert max(reads.values()) == 1, reads.most_common(3)
    assert sum(reads.values()) <= HEADER_SCAN_ROWS * len(rows[1])
