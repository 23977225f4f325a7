"""read_table and the table blocks on ledgers drawn by ``fresh_ledgers`` (fixed seeds).

Each drawn file must read back as an accountant reads it: every value, every row's place in
the file, the 小計/合計 rows set aside, the unit of a report's month columns from its title
row, and the dates a reader must not guess (no year, a weekday that is not the date's) listed
as unreadable with why in Japanese. Then table.aggregate, table.compute and table.reconcile
must give the figures the file itself states (its 合計 row and column) or implies (debit =
credit, a ledger reconciled against itself saved in another format).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.table_value import Table
from keiri_agent.documents.tables import TableResult, read_table
from tests.documents.conftest import run_block
from tests.documents.fresh_ledgers import Drawn, FileFormat, journal, monthly

SEEDS = range(8)
FORMATS: tuple[FileFormat, ...] = ("csv-cp932", "csv-utf8-bom", "xlsx")
CASES = [pytest.param(seed, fmt, id=f"{seed}-{fmt}") for seed in SEEDS for fmt in FORMATS]


@functools.cache
def _drawn(kind: str, seed: int, fmt: FileFormat) -> tuple[Drawn, TableResult]:
    drawn = {
        "journal": lambda: journal(seed, fmt),
        "doubtful": lambda: journal(seed, fmt, doubtful=True),
        "monthly": lambda: monthly(seed, fmt),
    }[kind]()
    return drawn, read_table(drawn.data(), name=drawn.name)


def _check_read(drawn: Drawn, result: TableResult) -> None:
    assert result.info.columns == drawn.columns
    assert result.table().records() == drawn.records
    assert result.positions is not None
    assert result.positions.tolist() == drawn.positions()
    assert [t["label"] for t in result.info.totals] == drawn.totals
    assert result.info.units == drawn.units


@pytest.mark.parametrize(("seed", "fmt"), CASES)
@pytest.mark.parametrize("kind", ["journal", "monthly"])
def test_drawn_ledgers_read_back_as_written(kind: str, seed: int, fmt: FileFormat) -> None:
    drawn, result = _drawn(kind, seed, fmt)
    _check_read(drawn, result)
    assert result.info.unreadable == []


@pytest.mark.parametrize(("seed", "fmt"), CASES)
def test_a_report_title_unit_is_the_unit_of_its_month_columns(seed: int, fmt: FileFormat) -> None:
    drawn, result = _drawn("monthly", seed, fmt)
    months = drawn.columns[1:-1]
    unit = drawn.units[months[0]]  # 千円, or 円 where the cells hold yen shown in 千円
    assert {result.info.units.get(m) for m in months} == {unit}
    warning = next(w for w in result.info.warnings if w.startswith("金額の単位"))
    assert f"「{months[0]}」は{unit}" in warning
    shown = [w for w in result.info.warnings if "1,000 で割って表示" in w]
    assert len(shown) == (len(drawn.columns) - 1 if unit == "円" else 0)


@pytest.mark.parametrize(("seed", "fmt"), CASES)
def test_dates_that_would_need_a_guess_are_listed_with_why(seed: int, fmt: FileFormat) -> None:
    drawn, result = _drawn("doubtful", seed, fmt)
    _check_read(drawn, result)
    listed = [(u["column"], u["value"], u["reason"]) for u in result.info.unreadable]
    assert [(c, v) for c, v, _ in listed] == [(c, v) for c, v, _ in drawn.unreadable]
    for (_, _, reason), (_, _, words) in zip(listed, drawn.unreadable, strict=True):
        assert words in reason
    warning = next(w for w in result.info.warnings if w.startswith("列「日付」"))
    assert "日付として読めないため空欄にしました" in warning


# --- the table blocks on what read_table gave ----------------------------------------------------


def _computed(registry: BlockRegistry, tmp_path: Path, result: TableResult, expr: str) -> list[Any]:
    """The column table.compute makes of ``expr`` on the table read."""
    out = run_block(
        registry,
        "table.compute",
        tmp_path,
        table=result.table(),
        columns=[{"name": "検算", "expr": expr}],
    )
    return [r["検算"] for r in out["rows"]]


def _stated_totals(result: TableResult) -> dict[str, Any]:
    """The file's own last total row (合計), column by column."""
    return Table(result.totals_table().frame.iloc[[-1]]).records()[0]


@pytest.mark.parametrize(("seed", "fmt"), CASES)
def test_monthly_sums_agree_with_the_total_row_and_column(
    registry: BlockRegistry, tmp_path: Path, seed: int, fmt: FileFormat
) -> None:
    drawn, result = _drawn("monthly", seed, fmt)
    amounts = drawn.columns[1:]
    out = run_block(
        registry,
        "table.aggregate",
        tmp_path,
        table=result.table(),
        aggregations=[{"column": c, "func": "sum", "as": c} for c in amounts],
    )
    stated = _stated_totals(result)
    assert out["rows"] == [{c: _amount(stated[c]) for c in amounts}]
    months = " + ".join(f"[{c}]" for c in amounts[:-1])
    check = _computed(registry, tmp_path, result, f"[合計] - ({months})")
    assert check == [0] * len(drawn.records)


@pytest.mark.parametrize(("seed", "fmt"), CASES)
def test_journal_sums_debit_credit_and_reconciles_with_its_csv_copy(
    registry: BlockRegistry, tmp_path: Path, seed: int, fmt: FileFormat
) -> None:
    drawn, result = _drawn("journal", seed, fmt)
    debit, credit = drawn.columns[5], drawn.columns[8]
    out = run_block(
        registry,
        "table.aggregate",
        tmp_path,
        table=result.table(),
        group_by=["借方勘定科目"],
        aggregations=[{"column": debit, "func": "sum", "as": "借方計"}],
    )
    expected: dict[str, int] = {}
    for record in drawn.records:
        expected[record["借方勘定科目"]] = expected.get(record["借方勘定科目"], 0) + record[debit]
    assert {r["借方勘定科目"]: r["借方計"] for r in out["rows"]} == expected
    assert sum(expected.values()) == _amount(_stated_totals(result)[debit])
    assert set(_computed(registry, tmp_path, result, f"[{debit}] - [{credit}]")) == {0}
    # The same entries saved in another format, every cell written another way: each entry
    # is ticked off against its twin, nothing is left over.
    _, twin = _drawn("journal", seed, "csv-cp932" if fmt == "xlsx" else "xlsx")
    out = run_block(
        registry,
        "table.reconcile",
        tmp_path,
        left=result.table(),
        right=twin.table(),
        keys=[{"left": "伝票番号", "right": "伝票番号"}],
        amount={"left": debit, "right": twin.info.columns[5]},
        date={"left": "日付", "right": "日付"},
    )
    assert out["summary"]["matched"] == len(drawn.records)
    assert out["summary"]["left_total"] == out["summary"]["right_total"] == sum(expected.values())
    left_over = ("differences", "unmatched_left", "unmatched_right")
    assert [out["summary"][k] for k in left_over] == [0, 0, 0]


def _amount(value: Any) -> int:
    """A total row's cell as the file states it (raw text of a CSV, a number in a workbook)."""
    from keiri_agent.documents.cell_forms import read_amount_unit

    read = value if isinstance(value, int) else (read_amount_unit(str(value)) or (None,))[0]
    assert isinstance(read, int), value
    return read
