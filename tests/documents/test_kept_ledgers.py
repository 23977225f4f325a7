"""read_table and the table blocks on paged printouts drawn by ``kept_ledgers`` (fixed seeds).

Property: each drawn file reads to the values of its clean source -- every entry's date,
amount and rate, the same sums by department and by month, each total row (頁計, 小計, 合計,
累計, at the top, the bottom, merged or under another column) set aside and equal to the sum
it states, the rows between pages (header and titles again, page numbers) and a unit line
under the table set aside with their places -- or, for a cell that cannot be read without a
guess (a rate typed as a plain number beside percentages, a date without a year), lists the
cell with why in Japanese, and a block that needs it stops with a BlockError naming its
line or row. Never a silently wrong number or date.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.cell_forms import read_amount_unit
from keiri_agent.documents.tables import TableResult, read_table
from keiri_agent.errors import BlockError
from tests.documents.conftest import run_block
from tests.documents.fresh_ledgers import FileFormat
from tests.documents.kept_ledgers import COLUMNS, Printed, printed

SEEDS = range(16)
FORMATS: tuple[FileFormat, ...] = ("csv-cp932", "csv-utf8-bom", "xlsx")
CASES = [pytest.param(seed, fmt, id=f"{seed}-{fmt}") for seed in SEEDS for fmt in FORMATS]


@functools.cache
def _read(seed: int, fmt: FileFormat, doubtful: bool = False) -> tuple[Printed, TableResult]:
    drawn = printed(seed, fmt, doubtful=doubtful)
    return drawn, read_table(drawn.data(), name=drawn.name)


def _records(drawn: Printed, result: TableResult) -> list[dict[str, Any]]:
    """The rows read, keyed by ``COLUMNS`` (a two-row header names them 売上_金額...), each
    date as its day (a column with ``0:00`` times is a datetime one)."""
    rows = [
        {plain: r[name] for plain, name in zip(COLUMNS, drawn.columns, strict=True)}
        for r in result.table().records()
    ]
    return [
        {**r, "日付": r["日付"][:10] if isinstance(r["日付"], str) else r["日付"]} for r in rows
    ]


def _stated(value: Any) -> int | None:
    """A total row's 金額 as the file states it (its raw cell: text or a number)."""
    if value is None or value != value:
        return None
    if isinstance(value, int):
        return value
    read = read_amount_unit(str(value))  # 1,200千円 in a 千円 report: 1200, as written
    return None if read is None else read[0]  # type: ignore[return-value]


@pytest.mark.parametrize(("seed", "fmt"), CASES)
def test_printed_ledgers_read_back_as_their_source(seed: int, fmt: FileFormat) -> None:
    drawn, result = _read(seed, fmt)
    info = result.info
    assert info.columns == drawn.columns
    assert _records(drawn, result) == drawn.records
    assert result.positions is not None
    assert result.positions.tolist() == drawn.positions()
    assert [t["label"] for t in info.totals] == drawn.totals
    assert [row["position"] for row in info.layout] == drawn.layout
    assert info.units == drawn.units
    assert info.unreadable == []
    totals = result.totals_table().frame
    assert [_stated(v) for v in totals[drawn.columns[4]].tolist()] == drawn.stated
    assert not [w for w in info.warnings if "一致しません" in w]  # the grand total checks out
    noted = [w for w in info.warnings if "元号の期間外" in w]
    assert len(noted) == (1 if drawn.era_notes else 0)
    if drawn.era_notes:
        assert f"日付 {drawn.era_notes:,} 個" in noted[0]


@pytest.mark.parametrize(("seed", "fmt"), CASES[::2])
def test_sums_by_department_and_month_are_the_sources(
    registry: BlockRegistry, tmp_path: Path, seed: int, fmt: FileFormat
) -> None:
    drawn, result = _read(seed, fmt)
    out = run_block(
        registry,
        "table.aggregate",
        tmp_path,
        table=result.table(),
        group_by=[drawn.columns[2], "月"],
        period={"column": "日付", "unit": "month", "as": "月"},
        aggregations=[{"column": drawn.columns[4], "func": "sum", "as": "売上"}],
    )
    expected: dict[tuple[str, str], int] = {}
    for record in drawn.records:
        key = (record["部門"], record["日付"][:7])
        expected[key] = expected.get(key, 0) + (record["金額"] or 0)
    got = {(r[drawn.columns[2]], str(r["月"])[:7]): r["売上"] for r in out["rows"]}
    assert got == expected
    assert sum(got.values()) == drawn.grand
    assert drawn.grand in drawn.stated


@pytest.mark.parametrize(("seed", "fmt"), CASES)
def test_cells_that_would_need_a_guess_are_refused_naming_the_cell(
    registry: BlockRegistry, tmp_path: Path, seed: int, fmt: FileFormat
) -> None:
    """A rate typed as a plain number among percentages and a date without a year are listed
    at their line or row with why; the rate column is kept as written (never a blank a sum
    skips), a tax computed on it stops with a BlockError naming its column; every other value
    is the source's; the month aggregation stops at the date with a BlockError naming its
    line."""
    drawn, result = _read(seed, fmt, doubtful=True)
    listed = {(u["column"], u["position"]): u["reason"] for u in result.info.unreadable}
    assert set(listed) == {(column, position) for column, position, _ in drawn.refused}
    for column, position, why in drawn.refused:
        assert why in listed[column, position]
    assert "税率" not in result.info.converted
    records = _records(drawn, result)
    assert [{**r, "税率": None} for r in records] == [{**r, "税率": None} for r in drawn.records]

    def stopped(block: str, **inputs: Any) -> BlockError:
        with pytest.raises(BlockError) as raised:
            run_block(registry, block, tmp_path, table=result.table(), **inputs)
        return raised.value

    tax = [{"name": "税額", "expr": f"[{drawn.columns[4]}] * [税率]"}]
    assert "税率" in stopped("table.compute", columns=tax).message
    date_at = next(p for c, p, _ in drawn.refused if c == "日付")
    refused = stopped(
        "table.aggregate",
        group_by=["月"],
        period={"column": "日付", "unit": "month", "as": "月"},
        aggregations=[{"column": drawn.columns[4], "func": "sum", "as": "売上"}],
    )
    assert f"{date_at} 行目" in refused.message
    assert "日付" in refused.hint
