"""Dollar amounts among yen: an expense list with a trip abroad (``$120.50`` beside ``¥3,300``
and ``1,200``) lists each ``$`` cell at its line, with why, instead of adding dollars to yen;
a column of dollars alone is read as its numbers. CSV and workbook (``table.aggregate``'s stop
at such a cell: tests/blocks/test_table_aggregate.py)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from keiri_agent.documents.tables import read_table
from tests.documents.test_yen_dash import READERS, column_rows, utf8_csv

FILES = 40  # drawn expense lists per format (well under 30 s)


def expense_list(rng: random.Random) -> tuple[list[str], set[int]]:
    """The 金額 cells of an expense list in yen with some dollar lines, and the 0-based rows
    of the dollar cells."""
    cells, dollars = [], set()
    for row in range(rng.randint(3, 15)):
        value = rng.randint(1, 500_000)
        if rng.random() < 0.25:
            cents = rng.choice(["", ".50", ".05", ".99"])
            cells.append(rng.choice(["$", "＄", "$ ", "-$", "▲$"]) + f"{value:,}{cents}")
            dollars.add(row)
        else:
            cells.append(rng.choice([f"{value:,}", f"¥{value:,}", f"{value:,}円", f"▲{value:,}"]))
    if not dollars:
        cells[0], dollars = f"${cells[0].lstrip('¥▲').removesuffix('円')}", {0}
    if len(dollars) == len(cells):
        cells[-1] = "1,200"
        dollars.discard(len(cells) - 1)
    return cells, dollars


@pytest.mark.parametrize("fmt", list(READERS))
def test_no_dollar_amount_is_read_among_yen(fmt: str) -> None:
    rng = random.Random(f"dollars-{fmt}")
    wrong: list[Any] = []
    for _ in range(FILES):
        cells, dollars = expense_list(rng)
        result = read_table(READERS[fmt](column_rows(cells)), name=f"経費.{fmt}")
        listed = {u["position"] - 2 for u in result.info.unreadable if u["column"] == "金額"}
        if listed != dollars or "金額" in result.info.converted:
            wrong.append((cells, sorted(listed)))
    assert wrong == []


def test_each_dollar_cell_is_named_with_why() -> None:
    result = read_table(utf8_csv(column_rows(["¥3,300", "$120.50", "1,200円"])), name="経費.csv")

    [cell] = result.info.unreadable
    assert (cell["position"], cell["value"]) == (3, "$120.50")
    assert "ドル" in cell["reason"]
    assert "合計できません" in cell["reason"]


@pytest.mark.parametrize("fmt", list(READERS))
def test_a_column_of_dollars_is_read_as_its_numbers(fmt: str) -> None:
    cells = ["$1,200.50", "＄80", "-", "$0", "▲$15"]
    result = read_table(READERS[fmt](column_rows(cells)), name=f"USD.{fmt}")

    assert result.info.unreadable == []
    assert result.df["金額"].tolist() == [1200.5, 80, 0, 0, -15]
