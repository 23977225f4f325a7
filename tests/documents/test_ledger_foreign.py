"""Every date and amount column ``tests/support/ledger_foreign`` draws is read right or listed.

Property ("tables as accounting teams really keep them"): every common amount and date form in
a real ledger is read to its value or refused with a warning (the cell listed at its line, with
why), never read wrong silently; a column written wholly in a form no reader takes says so too.
Foreign systems' dates with a month's name (``3-Feb-2026``, ``Feb 3, 2026``, ``03/Feb/2026``)
are read; ``1.200`` is read by its column (1.2 where the column writes fractions, listed where
its other amounts are whole: 1,200 or 1.2); a column of ``02/03/2026``, ``26/2/3``,
``1.200,50`` or ``1 200`` lists every cell.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from keiri_agent.documents.tables import read_table
from tests.support.ledger_foreign import KINDS, Column, column, ledger_csv

SEEDS = 30  # columns of each kind


def _same(read: object, want: object) -> bool:
    if isinstance(want, dt.date):
        whole = (
            want if isinstance(want, dt.datetime) else dt.datetime(want.year, want.month, want.day)
        )
        return isinstance(read, pd.Timestamp) and read.to_pydatetime() == whole
    if isinstance(read, str) or pd.isna(read):  # type: ignore[arg-type]
        return False
    return float(read) == want  # type: ignore[arg-type]


def misread(drawn: Column, seed: int) -> tuple[list[str], list[str]]:
    """``(wrong, silent)``: the cells read to another value than theirs and not listed, and the
    cells kept as written without a word: not listed, in a column with no cell listed, or
    themselves unreadable. (A column with listed cells keeps its other cells as written.)"""
    result = read_table(ledger_csv(drawn, seed), name="ledger.csv")
    listed = {u["position"] for u in result.info.unreadable if u["column"] == drawn.header}
    assert result.positions is not None
    wrong, silent = [], []
    for line, read, text, want in zip(
        result.positions.tolist(),
        result.df[drawn.header].tolist(),
        drawn.cells,
        drawn.want,
        strict=True,
    ):
        if line in listed:
            continue
        if isinstance(read, str) and read == text and (want is None or not listed):
            silent.append(text)  # kept as written: right only in a column with a warning
        elif isinstance(read, str) and read == text:
            continue  # a column kept as written for its listed cells
        elif not _same(read, want):
            wrong.append(f"{text} → {read!r} (want {want})")
    return wrong, silent


@pytest.mark.parametrize("kind", KINDS)
def test_every_drawn_column_is_read_right_or_listed(kind: str) -> None:
    found = [(seed, misread(column(seed, kind), seed)) for seed in range(SEEDS)]
    wrong = [(seed, w) for seed, (w, _) in found if w]
    silent = [(seed, s) for seed, (_, s) in found if s]
    assert wrong == [], wrong[:5]
    assert silent == [], silent[:5]
