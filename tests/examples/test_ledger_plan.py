"""A ledger as an accounting team keeps it, through a plan: read → aggregate → Excel report.

The ledger has a title row and a unit row, every amount form (``1,234``, ``¥``, ``\\`` of
CP932, ``円``, ``(1,200)``, ``▲``/``△``, full-width digits), every date form (``2026/2/3``,
``令和8年2月3日``, ``R8.2.3``, ``20260203``, ISO, with weekday), blank cells, subtotal rows and a
trailing 合計 row. It is written as CP932 CSV and as a workbook; the plan aggregates it by
department and month and writes a report, whose cells must hold the exact totals computed here
from the values the ledger means (not from the blocks' own output). A typo in one amount must
stop the plan with the file line (CSV) or the sheet row and cell (xlsx) of that amount.
"""

from __future__ import annotations

import datetime as dt
import io
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from openpyxl import Workbook, load_workbook

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import PlanRunner, load_source

REGISTRY = BlockRegistry()

# (date as written, department, partner, amount as written, the amount it means)
ENTRIES: list[tuple[str, str, str, str, int | None]] = [
    ("2026/2/3", "営業部", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "1,200", 1200),
    ("令和8年2月4日", "営業部", "大空物産株式会社", "￥35,000", 35000),
    ("R8.2.5", "総務部", "北斗運輸", "(1,200)", -1200),
    ("20260206", "総務部", "山田商事", "▲500", -500),
    ("2026-02-07", "営業部", "山田商事", "１２，３４５円", 12345),
    ("2026/2/9(月)", "経理部", "さくら精作所", "", None),  # blank amount: skipped by sum
    ("2026年2月27日", "経理部", "さくら精作所", "△2,000", -2000),
    ("2026/03/02", "営業部", "大空物産株式会社", "\\88,000", 88000),
    ("R8.3.3", "総務部", "北斗運輸", " 4,400 ", 4400),
    ("令和8年3月31日", "経理部", "山田商事", "100", 100),
]
TITLE = "2026年度 部門別経費台帳"
UNIT = "（単位：円）"
HEADER = ["日付", "部門", "取引先", "金額", "備考"]


def expected_totals() -> dict[tuple[str, str], int]:
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for written, department, _partner, _amount, value in ENTRIES:
        month = {"2": "2026-02", "3": "2026-03"}[_month(written)]
        totals[(department, month)] += value or 0
    return dict(totals)


def _month(written: str) -> str:
    for form in ("2026/2", "令和8年2", "R8.2", "202602", "2026-02", "2026年2"):
        if written.startswith(form):
            return "2"
    return "3"


def ledger_rows(typo_at: int | None = None) -> list[list[Any]]:
    """Title, unit, blank, header, entries with a 部門計 after February, a trailing 合計."""
    rows: list[list[Any]] = [[TITLE], [UNIT], [], HEADER]
    total = 0
    for index, (date, department, partner, amount, value) in enumerate(ENTRIES):
        if index == typo_at:
            amount = "1,2O0"  # the letter O for a zero
        rows.append([date, department, partner, amount, ""])
        total += value or 0
        if index == 6:
            rows.append(["2月 小計", "", "", "", ""])
    rows.append(["合計", "", "", f"{total:,}", ""])
    return rows


def write_csv(path: Path, rows: list[list[Any]]) -> None:
    text = "\r\n".join(",".join(_quoted(c) for c in row) for row in rows) + "\r\n"
    path.write_bytes(text.encode("cp932"))


def _quoted(cell: Any) -> str:
    text = str(cell)
    return f'"{text}"' if "," in text else text


def write_xlsx(path: Path, rows: list[list[Any]]) -> None:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "経費"
    for row in rows:
        sheet.append(row or [None])
    sheet.merge_cells("A1:E1")
    out = io.BytesIO()
    book.save(out)
    path.write_bytes(out.getvalue())


PLAN = {
    "apiVersion": "v1",
    "id": "ledger_by_department",
    "version": "0.1.0",
    "vars": {"ledger": "", "out": ""},
    "graph": [
        {"id": "read", "block": "file.read_table", "in": {"path": "${vars.ledger}"}},
        {
            "id": "monthly",
            "block": "table.aggregate",
            "in": {
                "table": "${read.rows}",
                "period": {"column": "日付", "unit": "month", "as": "月"},
                "group_by": ["部門", "月"],
                "aggregations": [{"column": "金額", "func": "sum", "as": "金額合計"}],
            },
        },
        {
            "id": "report",
            "block": "excel.write_report",
            "in": {
                "sheets": [{"name": "部門別", "rows": "${monthly.rows}"}],
                "output_path": "${vars.out}",
            },
        },
    ],
}


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[PlanRunner]:
    with PlanRunner(REGISTRY, runs_dir=tmp_path / "runs", designs_dir=tmp_path) as plan_runner:
        yield plan_runner


def run_plan(runner: PlanRunner, tmp_path: Path, ledger: Path) -> Any:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(PLAN, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "部門別.xlsx"
    return runner.run(load_source(plan), vars={"ledger": str(ledger), "out": str(out)}), out


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_real_ledger_is_aggregated_to_the_exact_totals(
    runner: PlanRunner, tmp_path: Path, fmt: str
) -> None:
    ledger = tmp_path / f"経費台帳.{fmt}"
    (write_csv if fmt == "csv" else write_xlsx)(ledger, ledger_rows())
    result, out = run_plan(runner, tmp_path, ledger)
    assert result.status == "success", result.error and result.error.to_dict()

    read = result.outputs["read"]
    info = read["info"]
    assert info["units"] == {"金額": "円"}
    assert [t["label"] for t in info["totals"]] == ["2月 小計", "合計"]
    assert len(read["rows"]) == len(ENTRIES)
    assert info["converted"]["日付"] == "date"

    book = load_workbook(out)
    try:
        sheet = book["部門別"]
        rows = [tuple(r) for r in sheet.iter_rows(values_only=True)]
    finally:
        book.close()
    assert rows[0] == ("部門", "月", "金額合計（円）")
    got = {(department, month): total for department, month, total in rows[1:]}
    assert got == expected_totals()
    # Nothing that is not in the user's data reaches the report.
    for row in rows:
        for cell in row:
            assert cell not in ("<NA>", "nan", "NaT", "None")


@pytest.mark.parametrize(
    ("fmt", "where"),
    [
        ("csv", "経費台帳.csv の 13 行目の列「金額」"),
        ("xlsx", "経費台帳.xlsx のシート「経費」の 13 行目の列「金額」（D13 セル）"),
    ],
)
def test_an_unreadable_amount_is_reported_where_the_user_finds_it(
    runner: PlanRunner, tmp_path: Path, fmt: str, where: str
) -> None:
    ledger = tmp_path / f"経費台帳.{fmt}"
    # Entry 7 is line 13: title, unit, blank line, header, seven entries, the 2月 小計.
    (write_csv if fmt == "csv" else write_xlsx)(ledger, ledger_rows(typo_at=7))
    result, out = run_plan(runner, tmp_path, ledger)

    assert result.status == "failed"
    assert result.error is not None
    assert where in result.error.message
    assert "1,2O0" in result.error.message
    assert "数字以外の文字（O）" in result.error.message
    assert not out.exists()
    read_info = result.outputs["read"]["info"]
    assert read_info["unreadable"][0]["position"] == 13
    assert read_info["unreadable"][0]["value"] == "1,2O0"


def test_dates_of_every_form_land_in_their_month() -> None:
    from keiri_agent.blocks.table.cells import parse_date

    for written, *_rest in ENTRIES:
        day = parse_date(written)
        assert isinstance(day, dt.date), written
        assert day.year == 2026
        assert f"{day.month}" == _month(written)
