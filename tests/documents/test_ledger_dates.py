"""Every date and amount cell ``tests/support/ledger_dates`` draws is read right or refused
clearly, in every file form (CSV UTF-8 and CP932, workbooks with text and real date cells).

Property ("every common date form and amount form in a real ledger is read right or refused
clearly, never wrong silently"): a weekday first (``Tue, 3 Feb 2026``), ordinals
(``3rd Feb 2026``), Excel's saved times (``2026/2/3 0:00:00``), 和暦 (``R08/02/03``,
``令和８年２月３日（火）``, ``H31.4.30``) are read; the year last (``2/3/2026``) is read in the
order its column shows and listed, with why, where the column cannot tell; a weekday that is not
the date's is listed; a 金額 column of words (``未定``, ``別途``) is kept as written with a
warning naming it. Never the generic "cannot read this form" for a form the generator draws.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pandas as pd
import pytest

from keiri_agent.documents.tables import read_table
from tests.support.ledger_dates import FILES, KINDS, Drawn, draw, ledger_file

SEEDS = 8  # columns of each kind in each file form
GENERIC = ("日付の書き方として読めません", "金額の書き方として読めません")


def _same(read: object, want: object) -> bool:
    if isinstance(want, dt.date):
        whole = (
            want if isinstance(want, dt.datetime) else dt.datetime(want.year, want.month, want.day)
        )
        # A workbook's real date cell stays a datetime in a column kept as written.
        return isinstance(read, dt.datetime) and pd.Timestamp(read).to_pydatetime() == whole
    return False


def outcomes(drawn: Drawn, seed: int, form: str) -> Counter[str]:
    """How each cell of ``drawn`` read from a ``form`` file: ``right``, ``wrong`` (another
    value, not listed), ``generic`` (listed with the generic reason), ``silent`` (kept as
    written, not listed, its column named in no warning), ``unread`` (a value it must read to,
    listed or kept), ``refused`` (listed or warned, as it must be)."""
    data, name = ledger_file(drawn, seed, form)
    result = read_table(data, name=name)
    mine = [u for u in result.info.unreadable if u["column"] == drawn.header]
    reasons = {u["position"]: u["reason"] for u in mine}
    warned = any(f"「{drawn.header}」" in w for w in result.info.warnings)
    assert result.positions is not None
    cells = zip(
        result.positions.tolist(), result.df[drawn.header].tolist(), drawn.want, strict=True
    )
    return Counter(_outcome(reasons.get(line), read, want, warned) for line, read, want in cells)


def _outcome(reason: str | None, read: object, want: object, warned: bool) -> str:
    """One cell's outcome (``outcomes``): ``reason`` why it was listed (None: not listed)."""
    if reason is not None:
        return "generic" if reason in GENERIC else "unread" if want is not None else "refused"
    if want is not None and _same(read, want):
        return "right"
    if isinstance(read, str) or (want is None and read is None):
        return "unread" if want is not None else "refused" if warned else "silent"
    return "wrong"


def measure(seeds: int = SEEDS) -> dict[str, Counter[str]]:
    """The outcomes of every kind over ``seeds`` columns in every file form."""
    return {
        kind: sum(
            (outcomes(draw(seed, kind), seed, form) for seed in range(seeds) for form in FILES),
            Counter(),
        )
        for kind in KINDS
    }


@pytest.mark.parametrize("kind", KINDS)
def test_every_drawn_cell_is_read_right_or_refused_clearly(kind: str) -> None:
    bad = {}
    for seed in range(SEEDS):
        for form in FILES:
            found = outcomes(draw(seed, kind), seed, form)
            if found["wrong"] or found["generic"] or found["silent"] or found["unread"]:
                bad[(seed, form)] = dict(found)
    assert bad == {}, list(bad.items())[:5]


def test_the_year_last_is_read_in_the_order_its_column_shows() -> None:
    csv = "日付,金額\r\n2/3/2026,1\r\n13/2/2026,2\r\n".encode()
    result = read_table(csv, name="a.csv")
    assert result.df["日付"].tolist() == [pd.Timestamp(2026, 3, 2), pd.Timestamp(2026, 2, 13)]
    assert any("13/2/2026 から 日/月/年" in w for w in result.info.warnings)
    both = read_table("日付\r\n2/3/2026\r\n13/2/2026\r\n2/13/2026\r\n".encode(), name="a.csv")
    assert [u["value"] for u in both.info.unreadable] == ["2/3/2026", "13/2/2026", "2/13/2026"]
    assert "両方" in both.info.unreadable[0]["reason"]


def test_an_amount_column_of_words_says_so() -> None:
    result = read_table(
        "摘要,金額,支払方法\r\na,未定,振込\r\nb,別途,現金\r\n".encode(), name="a.csv"
    )
    assert result.df["金額"].tolist() == ["未定", "別途"]
    said = [w for w in result.info.warnings if "「金額」" in w]
    assert said
    assert "未定・別途" in said[0]
    assert not any("「支払方法」" in w for w in result.info.warnings)
