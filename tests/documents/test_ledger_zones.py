"""Every cell ``tests/support/ledger_zones`` draws is read right or refused clearly, in every
file form (CSV UTF-8, with a BOM, CP932; workbooks).

Property ("every common date form, nothing read wrong silently"): JavaScript's
``Tue Feb 03 2026 09:00:00 GMT+0900 (日本標準時)`` and ISO/RFC times with any offset or a zone's
one-offset name (``+0900``, ``[Asia/Tokyo]``, ``PST``, ``UTC+9``) are read as the moment they
write, in Tokyo's time; a name two zones use (``CST``) is listed with why; money by the day
under a header with 日 in it (``日割``, ``日額``, ``1日あたり``) stays money, never an Excel serial
date. Before this round the JavaScript and named-zone cells were all listed, and every
``日割``/``1日あたり`` column read as dates of the 1960s-2110s.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pandas as pd
import pytest

from keiri_agent.documents.cell_forms import date_problem, read_date
from keiri_agent.documents.tables import read_table
from tests.support.ledger_dates import Drawn, ledger_file
from tests.support.ledger_zones import FILES, KINDS, TOKYO, draw

SEEDS = 10  # columns of each kind in each file form
GENERIC = "日付の書き方として読めません"


def outcomes(drawn: Drawn, seed: int, form: str) -> Counter[str]:
    """How each cell of ``drawn`` read from a ``form`` file: ``right``, ``wrong`` (another
    value, not listed), ``generic`` (listed with the generic reason), ``unread`` (a value it
    must read to, listed or kept as written), ``refused`` (listed with why, as it must be)."""
    data, name = ledger_file(drawn, seed, form)
    result = read_table(data, name=name, zone=TOKYO)
    reasons = {
        u["position"]: u["reason"] for u in result.info.unreadable if u["column"] == drawn.header
    }
    assert result.positions is not None
    cells = zip(
        result.positions.tolist(), result.df[drawn.header].tolist(), drawn.want, strict=True
    )
    return Counter(_outcome(reasons.get(line), read, want) for line, read, want in cells)


def _outcome(reason: str | None, read: object, want: object) -> str:
    if reason is not None:
        return "generic" if reason == GENERIC else "unread" if want is not None else "refused"
    if isinstance(want, dt.datetime):
        right = isinstance(read, dt.datetime) and pd.Timestamp(read) == pd.Timestamp(want)
    else:
        right = not isinstance(read, (dt.date, str)) and read == want
    if right:
        return "right"
    return "unread" if isinstance(read, str) else "wrong"


@pytest.mark.parametrize("form", FILES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_drawn_cell_is_read_right_or_refused_clearly(kind: str, form: str) -> None:
    found = {seed: outcomes(draw(seed, kind), seed, form) for seed in range(SEEDS)}
    bad = {seed: dict(c) for seed, c in found.items() if c["wrong"] or c["generic"] or c["unread"]}
    assert bad == {}, list(bad.items())[:5]


def test_javascript_dates_read_as_the_moment_in_tokyo() -> None:
    csv = (
        "作成日時,金額\r\n"
        "Tue Feb 03 2026 09:00:00 GMT+0900 (日本標準時),100\r\n"
        "Mon Feb 02 2026 16:00:00 GMT-0800 (Pacific Standard Time),200\r\n"
    ).encode("cp932")
    result = read_table(csv, name="a.csv", zone=TOKYO)
    assert result.df["作成日時"].tolist() == [pd.Timestamp(2026, 2, 3, 9, 0)] * 2
    assert any("時差" in w and "作成日時" in w for w in result.info.warnings)


def test_a_zone_name_of_two_zones_is_refused_with_why() -> None:
    assert read_date("2026-02-03 10:00:00 CST") is None
    assert "CST" in date_problem("2026-02-03 10:00:00 CST")
    # The offset decides; a bracket naming another zone contradicts it.
    assert read_date("2026-02-03T10:00:00+09:00[America/New_York]") is None
    assert read_date("2026-02-03T10:00:00+25:00") is None
    assert "+14:00" in date_problem("2026-02-03T10:00:00+25:00")
    # In a file, the cell is listed (it stopped the whole read with a Python error before).
    csv = "日時,金額\r\n2026-02-03T10:00:00+25:00,1\r\n2026-02-03T10:00:00+09:00,2\r\n"
    result = read_table(csv.encode(), name="a.csv", zone=TOKYO)
    assert [u["value"] for u in result.info.unreadable] == ["2026-02-03T10:00:00+25:00"]


@pytest.mark.parametrize("header", ["日割", "1日あたり", "日計", "日商"])
def test_money_by_the_day_is_not_a_serial_date(header: str) -> None:
    csv = f"摘要,{header}\r\na,45000\r\nb,52000\r\n".encode()
    result = read_table(csv, name="a.csv")
    assert result.df[header].tolist() == [45000, 52000]
    dated = read_table("摘要,取引日2\r\na,46056\r\n".encode(), name="a.csv")
    assert dated.df["取引日2"].tolist() == [pd.Timestamp(2026, 2, 3)]


def test_a_zone_name_reads_in_any_case() -> None:
    # PHP's date('T') and some loggers write zone names in lower case; people type Jst.
    tokyo = dt.datetime(2026, 2, 3, 10, 0, tzinfo=TOKYO)
    for text in ("2026-02-03 10:00:00 jst", "2026-02-03 10:00:00 Jst", "2026-02-03 01:00:00 utc"):
        assert read_date(text) == tokyo, text
    assert read_date("2026-02-02 17:00:00 pst") == tokyo
    assert read_date("2026-02-03T01:00:00z") == tokyo
    assert "CST" in date_problem("2026-02-03 10:00:00 cst")
