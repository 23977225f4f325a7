"""Every date-and-time and amount cell ``cell_shapes`` draws is read to its value or listed.

Property: "every common date form and amount form in a ledger is read to the right value or
listed as unreadable with its row; never a wrong value". Cell by cell (``read_date``,
``read_amount``), then as whole files (CSV in UTF-8 and workbooks, ``read_table``): a clean
file reads every cell to its value; a file with doubtful cells among them lists exactly those
at their lines, with why, and reads the date column's other cells to their values.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable

import pandas as pd
import pytest

from keiri_agent.documents.cell_forms import amount_problem, date_problem, read_amount, read_date
from keiri_agent.documents.tables import read_table
from tests.documents.cell_shapes import Cell, amount_cell, date_cell, doubtful_cell, misread
from tests.documents.test_table_footer import xlsx_bytes

CELLS = 3000  # drawn cells of each kind (a few seconds)
FILES = 24  # drawn files of each format
ROWS = 30  # data rows a drawn file holds
HEADER = ["日時", "摘要", "金額"]


@pytest.mark.parametrize(
    ("draw", "reader"), [(date_cell, read_date), (amount_cell, read_amount)], ids=["date", "amount"]
)
def test_every_drawn_cell_reads_to_its_value(
    draw: Callable[[random.Random], Cell], reader: Callable[[str], object]
) -> None:
    # Seeded by name: the same cells every run. Each kind is asked of its own reader (a bare
    # 8-digit amount such as 19901106 is a date only in a column its header names a date).
    wrong = misread(draw, reader, f"cells-{draw.__name__}", CELLS)
    assert wrong == [], f"{len(wrong)} of {CELLS}: {wrong[:10]}"


def test_a_cell_whose_value_cannot_be_known_is_never_read() -> None:
    rng = random.Random("doubtful")
    for _ in range(CELLS):
        cell = doubtful_cell(rng)
        assert read_date(cell.text) is None, cell
        assert read_amount(cell.text) is None, cell
        assert cell.why in date_problem(cell.text) + amount_problem(cell.text), cell


def _file(seed: int, fmt: str, doubtful: bool) -> tuple[bytes, list[list[Cell]], set[int]]:
    """A drawn ledger (title line, header, ``ROWS`` rows), its cells and the file lines of
    the doubtful ones (in the date column only, so that the amount column is read)."""
    rng = random.Random(f"{seed}-{fmt}-{doubtful}")
    cells = [[date_cell(rng), Cell(f"摘要{n}", f"摘要{n}"), amount_cell(rng)] for n in range(ROWS)]
    bad: set[int] = set()
    if doubtful:
        for row in rng.sample(range(ROWS), 2):
            cell = doubtful_cell(rng)
            while cell.why not in ("午前・午後", "年が書かれていない"):
                cell = doubtful_cell(rng)
            cells[row][0] = cell
            bad.add(row + 3)  # title line, header line, then rows from 1
    rows = [["入出金明細（2026年度）"], HEADER, *([c.text for c in row] for row in cells)]
    if fmt == "xlsx":
        return xlsx_bytes(rows), cells, bad
    lines = [",".join(f'"{c}"' if "," in c else c for c in row) for row in rows]
    return ("\r\n".join(lines) + "\r\n").encode("utf-8-sig"), cells, bad


def _same(read: object, want: object) -> bool:
    if isinstance(want, dt.datetime):
        return isinstance(read, pd.Timestamp) and read.to_pydatetime() == want
    return read == want and isinstance(read, str) == isinstance(want, str)


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
@pytest.mark.parametrize("doubtful", [False, True], ids=["clean", "doubtful"])
def test_drawn_files_read_every_cell_or_list_it_at_its_line(fmt: str, doubtful: bool) -> None:
    for seed in range(FILES):
        data, cells, bad = _file(seed, fmt, doubtful)
        result = read_table(data, name=f"明細{seed}.{fmt}")
        listed = {(u["column"], u["position"]) for u in result.info.unreadable}
        assert listed == {("日時", line) for line in bad}, (seed, result.info.unreadable)
        assert result.positions is not None
        for line, row, record in zip(
            result.positions.tolist(), cells, result.df.itertuples(index=False), strict=True
        ):
            for cell, read in zip(row, record, strict=True):
                if line in bad and cell is row[0]:
                    assert pd.isna(read), (seed, line, cell)  # blank, and listed
                else:
                    assert _same(read, cell.value), (seed, line, cell, read)


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_point_between_thousands_makes_every_such_cell_doubtful(fmt: str) -> None:
    rows = [["摘要", "金額"], ["文具", "1.200"], ["交通費", "15.000,50"], ["会議費", "300"]]
    data = xlsx_bytes(rows) if fmt == "xlsx" else "\n".join(map(",".join, rows)).encode()
    if fmt == "csv":
        data = data.replace(b"15.000,50", b'"15.000,50"')
    result = read_table(data, name=f"経費.{fmt}")
    listed = {u["value"]: u["reason"] for u in result.info.unreadable}
    assert set(listed) == {"1.200", "15.000,50"}  # 1,200 or 1.2: never read as 1.2
    assert "点を桁区切りに使うセル" in listed["1.200"]
    assert "どちらが小数点か決められない" in listed["15.000,50"]
    assert result.df["金額"].tolist() == ["1.200", "15.000,50", "300"]  # as written
    plain = read_table("摘要,単価\na,1.235\nb,300\n".encode(), name="単価.csv")
    assert plain.df["単価"].tolist() == [1.235, 300.0]  # without such cells: a decimal point
