"""excel.read_data: a known sheet or range as records; formulas as values, dates as ISO."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from openpyxl import Workbook

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("excel.read_data")


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """表紙 (cover) and 入金 (deposits): a title block, header in row 3, a blank row, a total."""
    book = Workbook()
    cover = book.active
    assert cover is not None
    cover.title = "表紙"
    cover["A1"] = "2025年1月 入金明細"
    sheet = book.create_sheet("入金")
    sheet["A1"] = "入金明細"
    sheet.append([])
    sheet.append(["入金日", "振込依頼人", "入金額", None, "メモ"])
    sheet.append([dt.datetime(2025, 1, 10), "カ）エーシヨウジ", 110000, None, None])
    sheet.append([])
    sheet.append([dt.datetime(2025, 1, 25, 15, 30), "ビ-コウギヨウ", 55000.0, None, "一部入金"])
    sheet["F20"].number_format = "#,##0"  # formatting beyond the table
    path = tmp_path / "入金.xlsx"
    book.save(path)
    return path


def test_sheet_with_a_header_row_below_a_title(
    block: Block, make_ctx: ContextFactory, ledger: Path
) -> None:
    inputs = {"path": str(ledger), "sheet": "入金", "header_row": 3}
    out = run_like_runner(block, inputs, make_ctx())
    assert out["rows"] == [
        {"入金日": "2025-01-10", "振込依頼人": "カ）エーシヨウジ", "入金額": 110000, "メモ": None},
        {
            "入金日": "2025-01-25T15:30:00",
            "振込依頼人": "ビ-コウギヨウ",
            "入金額": 55000,
            "メモ": "一部入金",
        },
    ]
    assert out["summary"] == {
        "path": str(ledger),
        "sheet": "入金",
        "range": None,
        "header_row": 3,
        "rows": 2,
        "columns": ["入金日", "振込依頼人", "入金額", "メモ"],
        "warnings": [],
    }


def test_range_by_sheet_index_keeps_empty_rows_on_request(
    block: Block, make_ctx: ContextFactory, ledger: Path
) -> None:
    inputs = {
        "path": str(ledger),
        "sheet": 1,
        "range": "b3:c6",
        "skip_empty_rows": False,
    }
    out = run_like_runner(block, inputs, make_ctx())
    assert out["rows"] == [
        {"振込依頼人": "カ）エーシヨウジ", "入金額": 110000},
        {"振込依頼人": None, "入金額": None},
        {"振込依頼人": "ビ-コウギヨウ", "入金額": 55000},
    ]
    assert out["summary"]["sheet"] == "入金"
    assert out["summary"]["range"] == "B3:C6"
    # Rows remember their sheet rows: B3 is the header, data from row 4, column C is 入金額.
    rows = out["rows"]
    assert [rows.position(i) for i in range(3)] == [4, 5, 6]
    assert rows.where(2, "入金額") == "入金.xlsx のシート「入金」の 6 行目の列「入金額」（C6 セル）"


def test_blank_and_repeated_headers_are_named_and_reported(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["科目", "金額", None, "金額"])
    sheet.append(["会議費", 5000, "税込", 5500])
    path = tmp_path / "科目.xlsx"
    book.save(path)
    out = run_like_runner(block, {"path": str(path)}, make_ctx())
    assert out["rows"] == [{"科目": "会議費", "金額": 5000, "列3": "税込", "金額_2": 5500}]
    assert "列3" in out["summary"]["warnings"][0]
    assert "金額_2" in out["summary"]["warnings"][0]


def test_missing_sheet_lists_the_available_sheets(
    block: Block, make_ctx: ContextFactory, ledger: Path
) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"path": str(ledger), "sheet": "出金"}, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "出金" in info.value.message
    assert "入金.xlsx" in info.value.message
    assert "表紙, 入金" in info.value.hint


def test_header_row_beyond_the_sheet_is_refused(
    block: Block, make_ctx: ContextFactory, ledger: Path
) -> None:
    inputs = {"path": str(ledger), "sheet": "入金", "header_row": 50}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "見出し行 50" in info.value.message
    assert "header_row" in info.value.hint


def test_blank_header_row_is_refused(block: Block, make_ctx: ContextFactory, ledger: Path) -> None:
    inputs = {"path": str(ledger), "sheet": "入金", "header_row": 2}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert "見出し行 2 が空" in info.value.message
    assert "「入金」" in info.value.message


def test_missing_file_and_wrong_format_are_named(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"path": str(tmp_path / "ない.xlsx")}, make_ctx())
    assert "ない.xlsx" in info.value.message
    assert info.value.hint
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"path": str(tmp_path / "古い.xls")}, make_ctx())
    assert info.value.code == ErrorCode.UNSUPPORTED_FORMAT
    assert ".xlsx" in info.value.hint


def test_bad_range_is_refused(block: Block, make_ctx: ContextFactory, ledger: Path) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"path": str(ledger), "range": "A1:"}, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "A1:D20" in info.value.hint
