"""``file.read_table`` stops at a 合計 its rows do not add up to: no plan doubles a group.

A hand-kept ledger often writes a subtotal under each department with no label (the amount
alone, the department's name beside it or not). Read as data, it is summed again by
``table.aggregate``: the department's figure doubles in the report without a word. The file's
own grand total tells (``TableResult.amount_differences``), so the block stops
with the total's cell, both sums and the difference.

The property runs a generator of ledgers as back offices keep them (円 or 千円 named in the
header or in a title row, 千円 rounded or cut, amounts with commas, ￥ or △, CSV in CP932 and
xlsx, with and without unlabelled subtotals, a trailing 合計 row) through a real plan,
``file.read_table`` → ``table.aggregate``: the plan either gives the clean ledger's department
sums or stops with the error, never a doubled group; a ledger without unlabelled subtotals
never stops (a 千円 total that differs from its rows by rounding is noted only).
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from openpyxl import Workbook

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import PlanRunner, load_source

REGISTRY = BlockRegistry()
CASES = 48  # seeded ledgers; every fourth one is a workbook
DEPARTMENTS = ("営業部", "総務部", "経理部", "製造部", "開発部", "東京支店")
PARTNERS = ("大空物産株式会社", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "北斗運輸", "山田商事", "さくら精作所")


@dataclass
class Ledger:
    """A generated ledger: its rows as written, the department sums of its data rows (in the
    unit written), how many unlabelled subtotals it holds and where its 合計 row is."""

    rows: list[list[Any]]
    clean: dict[str, Decimal]
    column: str
    subtotals: int = 0
    total_line: int = 0
    shape: dict[str, Any] = field(default_factory=dict)


def _written(yen: int, unit: str, mode: str) -> Decimal:
    if unit == "円":
        return Decimal(yen)
    rounding = ROUND_HALF_UP if mode == "round" else ROUND_FLOOR
    return (Decimal(yen) / 1000).quantize(Decimal(1), rounding=rounding)


def _form(value: Decimal, rng: random.Random) -> str:
    text = f"{abs(int(value)):,}" if rng.random() < 0.8 else str(abs(int(value)))
    if value < 0:
        return rng.choice(("△", "▲", "-")) + text
    return rng.choice(("", "", "", "￥")) + text


def make_ledger(rng: random.Random, *, subtotals: bool) -> Ledger:
    unit = rng.choice(("円", "千円"))
    mode = rng.choice(("round", "cut"))
    in_header = rng.random() < 0.5
    column = f"金額（{unit}）" if in_header and unit != "円" else "金額"
    rows: list[list[Any]] = [["2026年4月 部門別経費台帳"]]
    if not in_header:
        rows.append([f"（単位：{unit}）"])
    rows.append(["日付", "部門", "取引先", column, "摘要"])
    clean: dict[str, Decimal] = {}
    all_yen = 0
    inserted = 0
    named = rng.random() < 0.5  # the subtotal repeats the department's name
    for department in rng.sample(DEPARTMENTS, rng.randint(2, 4)):
        group_yen = 0
        for _ in range(rng.randint(2, 6)):
            yen = rng.randint(20_000, 3_000_000)
            if rng.random() < 0.1:
                yen = -rng.randint(20_000, 200_000)  # a return, written △
            value = _written(yen, unit, mode)
            day = rng.randint(1, 30)
            rows.append([f"2026/4/{day}", department, rng.choice(PARTNERS), _form(value, rng), ""])
            clean[department] = clean.get(department, Decimal(0)) + value
            group_yen += yen
        all_yen += group_yen
        if subtotals and (rng.random() < 0.6 or inserted == 0):
            subtotal = clean[department] if unit == "円" else _written(group_yen, unit, mode)
            rows.append(["", department if named else "", "", _form(subtotal, rng), ""])
            inserted += 1
    total = sum(clean.values(), Decimal(0)) if unit == "円" else _written(all_yen, unit, mode)
    rows.append(["合計", "", "", _form(total, rng), ""])
    shape = {"unit": unit, "mode": mode, "in_header": in_header, "named": named}
    return Ledger(rows, clean, column, inserted, len(rows), shape)


def write_ledger(path: Path, rows: list[list[Any]]) -> None:
    if path.suffix == ".csv":
        lines = (",".join(f'"{c}"' if "," in str(c) else str(c) for c in row) for row in rows)
        path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp932"))
        return
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "経費"
    for row in rows:
        sheet.append([None if c == "" else c for c in row])
    out = io.BytesIO()
    book.save(out)
    path.write_bytes(out.getvalue())


def plan(column: str, total_check: str | None = None) -> dict[str, Any]:
    read: dict[str, Any] = {"path": "${vars.ledger}"}
    if total_check is not None:
        read["total_check"] = total_check
    return {
        "apiVersion": "v1",
        "id": "ledger_by_department",
        "version": "0.1.0",
        "vars": {"ledger": ""},
        "graph": [
            {"id": "read", "block": "file.read_table", "in": read},
            {
                "id": "by_department",
                "block": "table.aggregate",
                "in": {
                    "table": "${read.rows}",
                    "group_by": ["部門"],
                    "aggregations": [{"column": column, "func": "sum", "as": "計上額"}],
                },
            },
        ],
    }


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[PlanRunner]:
    with PlanRunner(REGISTRY, runs_dir=tmp_path / "runs", designs_dir=tmp_path) as plan_runner:
        yield plan_runner


def run(runner: PlanRunner, folder: Path, ledger: Path, column: str, **options: Any) -> Any:
    path = folder / "plan.yaml"
    path.write_text(yaml.safe_dump(plan(column, **options), allow_unicode=True), "utf-8")
    return runner.run(load_source(path), vars={"ledger": str(ledger)})


def department_sums(result: Any) -> dict[Any, Decimal]:
    rows = result.outputs["by_department"]["rows"].records()
    sums: dict[Any, Decimal] = {}
    for row in rows:
        (amount,) = (v for k, v in row.items() if k != "部門")
        sums[row["部門"]] = Decimal(repr(amount))
    return sums


def where(ledger: Ledger, path: Path) -> str:
    if path.suffix == ".csv":
        return f"{path.name} の {ledger.total_line} 行目の列「{ledger.column}」"
    return f"{path.name} のシート「経費」の {ledger.total_line} 行目の列「{ledger.column}」（D"


def test_no_plan_doubles_a_group_of_a_ledger_with_unlabelled_subtotals(
    runner: PlanRunner, tmp_path: Path
) -> None:
    rng = random.Random(3402)
    wrong: list[str] = []
    stopped = passed = 0
    for case in range(CASES):
        subtotals = case % 2 == 0
        ledger = make_ledger(rng, subtotals=subtotals)
        folder = tmp_path / f"case{case}"
        folder.mkdir()
        path = folder / ("台帳.xlsx" if case % 4 == 3 else "台帳.csv")
        write_ledger(path, ledger.rows)
        result = run(runner, folder, path, ledger.column)
        said = f"case {case} {path.suffix} {ledger.shape} subtotals={ledger.subtotals}"
        if result.status == "success":
            passed += 1
            if department_sums(result) != ledger.clean:
                wrong.append(f"{said}: {department_sums(result)} != {ledger.clean}")
            continue
        stopped += 1
        error = result.error
        assert error is not None
        if not ledger.subtotals:
            wrong.append(f"{said}: a clean ledger stopped: {error.message}")
        elif where(ledger, path) not in error.message or "一致しません" not in error.message:
            wrong.append(f"{said}: the error does not name the total's cell: {error.message}")
        elif error.code != ErrorCode.INPUT_VALIDATION_FAILED or "by_department" in result.outputs:
            wrong.append(f"{said}: {error.code} / ran on after the stop")
    assert not wrong, "\n".join(wrong)
    # Every ledger with an unlabelled subtotal stopped; every clean one was aggregated.
    assert (stopped, passed) == (CASES // 2, CASES // 2)


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_the_error_names_the_total_cell_both_sums_and_the_difference(
    runner: PlanRunner, tmp_path: Path, suffix: str
) -> None:
    rows = [
        ["日付", "部門", "取引先", "金額", "摘要"],
        ["2026/4/1", "営業部", "山田商事", "120,000", ""],
        ["2026/4/2", "営業部", "北斗運輸", "30,000", ""],
        ["", "営業部", "", "150,000", ""],  # the subtotal nobody labelled
        ["2026/4/3", "総務部", "山田商事", "8,000", ""],
        ["合計", "", "", "158,000", ""],
    ]
    path = tmp_path / f"経費{suffix}"
    write_ledger(path, rows)
    result = run(runner, tmp_path, path, "金額")

    assert result.status == "failed"
    assert result.error is not None
    message = result.error.message
    cell = "経費.csv の 6 行目の列「金額」" if suffix == ".csv" else "（D6 セル）"
    assert cell in message
    assert "合計 158,000 が、明細の行の合計 308,000 と一致しません" in message
    assert "明細の方が 150,000 多い" in message
    assert "見出しのない小計" in message
    assert "total_check に warn" in (result.error.hint or "")
    assert "by_department" not in result.outputs


def test_warn_goes_on_with_the_rows_and_says_so(runner: PlanRunner, tmp_path: Path) -> None:
    rows = [
        ["日付", "部門", "金額"],
        ["2026/4/1", "営業部", "1,000"],
        ["2026/4/2", "総務部", "2,000"],
        ["合計", "", "3,500"],  # the file's total is wrong, and the author knows it
    ]
    path = tmp_path / "経費.csv"
    write_ledger(path, rows)
    result = run(runner, tmp_path, path, "金額", total_check="warn")

    assert result.status == "success", result.error and result.error.to_dict()
    assert department_sums(result) == {"営業部": Decimal(1000), "総務部": Decimal(2000)}
    (difference,) = result.outputs["read"]["info"]["total_differences"]
    assert difference == {
        "column": "金額",
        "position": 4,
        "stated": 3500,
        "summed": 3000,
        "difference": -500,
        "rounding": False,
    }


def test_a_rounding_difference_in_thousands_is_noted_only(
    runner: PlanRunner, tmp_path: Path
) -> None:
    # 1,400 + 1,400 + 1,400 yen: each row 1 千円 rounded, the total 4 千円 (4,200 yen).
    rows = [
        ["日付", "部門", "金額（千円）"],
        ["2026/4/1", "営業部", "1"],
        ["2026/4/2", "営業部", "1"],
        ["2026/4/3", "総務部", "1"],
        ["合計", "", "4"],
    ]
    path = tmp_path / "経費.csv"
    write_ledger(path, rows)
    result = run(runner, tmp_path, path, "金額（千円）")

    assert result.status == "success", result.error and result.error.to_dict()
    (difference,) = result.outputs["read"]["info"]["total_differences"]
    assert difference["rounding"] is True


def test_a_rate_a_unit_price_or_a_balance_need_not_add_up(
    runner: PlanRunner, tmp_path: Path
) -> None:
    rows = [
        ["日付", "部門", "数量", "単価", "金額", "残高", "利益率"],
        ["2026/4/1", "営業部", "2", "500", "1,000", "1,000", "20%"],
        ["2026/4/2", "総務部", "1", "2,000", "2,000", "3,000", "30%"],
        ["合計", "", "3", "", "3,000", "3,000", "25%"],
    ]
    path = tmp_path / "売上.csv"
    write_ledger(path, rows)
    result = run(runner, tmp_path, path, "金額")

    assert result.status == "success", result.error and result.error.to_dict()
    assert department_sums(result) == {"営業部": Decimal(1000), "総務部": Decimal(2000)}


def test_an_unknown_total_check_is_refused_in_japanese(runner: PlanRunner, tmp_path: Path) -> None:
    path = tmp_path / "経費.csv"
    write_ledger(path, [["部門", "金額"], ["営業部", "1,000"]])
    with pytest.raises(BlockError) as refused:
        run(runner, tmp_path, path, "金額", total_check="ignore")

    assert refused.value.code == ErrorCode.PLAN_INVALID
    assert "total_check" in refused.value.message
    assert '"ignore" は使えません（使える値: "stop"、"warn"）' in refused.value.message
