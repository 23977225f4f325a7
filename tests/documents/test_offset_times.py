"""Times written with a UTC offset (``2026-02-03T10:00:00+09:00``, ``…Z``, ``…-05:00``) are read
as the wall-clock time of ``KEIRI_TIMEZONE``: the same moment reads the same whatever offset it
was written with, and ``info`` says how many cells were converted and how many changed their
clock time (never a silent shift, never an offset silently dropped)."""

from __future__ import annotations

import datetime as dt
import io
from zoneinfo import ZoneInfo

import pytest
from openpyxl import Workbook

from keiri_agent.documents.tables import read_table

CELLS = [
    ("2026-02-03T10:00:00+09:00", dt.datetime(2026, 2, 3, 10, 0)),  # Tokyo's own offset
    ("2026-02-03T01:00:00Z", dt.datetime(2026, 2, 3, 10, 0)),  # the same moment in UTC
    ("2026-02-02T20:00:00-05:00", dt.datetime(2026, 2, 3, 10, 0)),  # and in New York
    ("2026/02/03 18:30", dt.datetime(2026, 2, 3, 18, 30)),  # no offset: as written
]


def offset_csv() -> bytes:
    return ("登録日時,金額\r\n" + "".join(f"{c},100\r\n" for c, _ in CELLS)).encode("utf-8")


def _xlsx() -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["登録日時", "金額"])
    for written, _ in CELLS:
        sheet.append([written, 100])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


@pytest.mark.parametrize(("fmt", "data"), [("csv", offset_csv), ("xlsx", _xlsx)])
def test_offsets_are_read_in_the_local_zone_with_a_note(fmt: str, data: object) -> None:
    assert callable(data)
    result = read_table(data(), name=f"ログ.{fmt}", zone=ZoneInfo("Asia/Tokyo"))

    assert result.df["登録日時"].tolist() == [expected for _, expected in CELLS]
    assert result.info.converted["登録日時"] == "datetime"
    note = next(w for w in result.info.warnings if "登録日時" in w)
    assert "時差" in note
    assert "3 個" in note
    assert "Asia/Tokyo" in note
    assert "うち 2 個は時刻が変わりました" in note


def test_another_zone_gives_its_own_clock_time() -> None:
    result = read_table(offset_csv(), name="ログ.csv", zone=ZoneInfo("America/New_York"))

    assert result.df["登録日時"].tolist()[:3] == [dt.datetime(2026, 2, 2, 20, 0)] * 3
    assert result.df["登録日時"].tolist()[3] == dt.datetime(2026, 2, 3, 18, 30)
    note = next(w for w in result.info.warnings if "登録日時" in w)
    assert "America/New_York" in note
    assert "うち 2 個は時刻が変わりました" in note
