"""Dates with the year last are read by the column they are in, wherever a date column is read:
a bank statement's date column (``read_bank_table``) and a table block's date cells
(``column_values.read_dates``), as ``read_table`` reads them (``table_date_order``); a single
value (a condition's value) in the one order it can be read in, refused naming both readings
where it reads as two days.

Property (``tests/support/ledger_statements``, statements x shapes x files): a column that
shows its order (a day above 12) reads every line in it; one that shows none, or both, is
refused with why. Before this round (integ 060f7aa) a block's date column of ``13/02/2026``
was refused cell by cell, a single ``13/02/2026`` was no date, and a statement of two pasted
exports was refused with "every day is 12 or below".
"""

from __future__ import annotations

import pandas as pd
import pytest

from keiri_agent.blocks.table.cells import column_date_problem, parse_date, two_readings
from keiri_agent.blocks.table.column_values import read_dates
from keiri_agent.blocks.table.filter import _conditions
from keiri_agent.documents.bank_table import read_bank_table
from keiri_agent.errors import BlockError
from tests.support.ledger_statements import FILES, REASONS, SHAPES, draw, statement_file

SEEDS = 2  # statements of each shape in each file form


@pytest.mark.parametrize("form", FILES)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_statement_reads_its_dates_in_the_order_its_column_shows(shape: str, form: str) -> None:
    wrong = []
    for seed in range(SEEDS):
        drawn = draw(seed, shape)
        data, name = statement_file(drawn, seed, form)
        try:
            got: list[object] = [line.date for line in read_bank_table(data, name=name).lines]
        except BlockError as exc:
            got = [None] * len(drawn.cells)
            if REASONS[shape] not in str(exc):
                wrong.append((seed, drawn.cells, str(exc)))
                continue
        if got != drawn.want:
            wrong.append((seed, drawn.cells, got))
    assert wrong == []


@pytest.mark.parametrize("shape", SHAPES)
def test_a_block_reads_a_date_column_in_the_order_it_shows(shape: str) -> None:
    for seed in range(5 * SEEDS):
        drawn = draw(seed, shape)
        column = pd.Series(drawn.cells, dtype=object)
        days, bad = read_dates(column)
        if shape == "shows":
            assert not bad.any(), drawn.cells
            assert [d.date() for d in days] == drawn.want
        else:  # each refused cell is listed by the blocks with the column's reason
            assert bad.all(), drawn.cells
            said = [column_date_problem(c, column) for c in drawn.cells]
            assert all(REASONS[shape] in why for why in said), said


def test_a_single_value_reads_in_the_one_order_it_can() -> None:
    assert str(parse_date("13/02/2026")) == "2026-02-13"
    assert str(parse_date("02/13/2026 10:15")) == "2026-02-13"
    assert str(parse_date("05/05/2026")) == "2026-05-05"  # one day either way
    assert parse_date("02/03/2026") is None
    said = two_readings("02/03/2026")
    assert said is not None
    assert "2026年2月3日" in said
    assert "2026年3月2日" in said
    with pytest.raises(BlockError, match="2026年3月2日"):
        _conditions([{"column": "日付", "op": "ge", "value": "02/03/2026"}], False)
    (condition,) = _conditions([{"column": "日付", "op": "ge", "value": "13/02/2026"}], False)
    assert condition.typed[0] is not None
