"""file.read_table: CSV/TSV/XLSX as records, with every decision reported in ``info``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from openpyxl import Workbook

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner
from tests.documents.test_offset_times import offset_csv

SALES_CSV = (
    "売上明細（2025年1月）\n"
    "\n"
    "売上日,伝票番号,得意先,金額,備考\n"
    '2025/01/05,0001,株式会社A商事,"1,234,000",\n'
    "2025/01/20,0002,B工業,55000,値引きあり\n"
)


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("file.read_table")


@pytest.fixture
def sales_csv(tmp_path: Path) -> Path:
    path = tmp_path / "売上.csv"
    path.write_bytes(SALES_CSV.encode("cp932"))
    return path


@pytest.fixture
def book(tmp_path: Path) -> Path:
    workbook = Workbook()
    first = workbook.active
    assert first is not None
    first.title = "表紙"
    first["A1"] = "月次資料"
    sheet = workbook.create_sheet("明細")
    sheet.append(["日付", "科目", "金額"])
    sheet.append([dt.datetime(2025, 1, 31), "旅費交通費", 12800])
    sheet.append([dt.datetime(2025, 2, 3), "消耗品費", 3300.0])
    path = tmp_path / "経費.xlsx"
    workbook.save(path)
    return path


def test_cp932_csv_with_a_title_row(
    block: Block, make_ctx: ContextFactory, sales_csv: Path
) -> None:
    out = run_like_runner(block, {"path": str(sales_csv)}, make_ctx())
    assert out["rows"] == [
        {
            "売上日": "2025-01-05",
            "伝票番号": "0001",
            "得意先": "株式会社A商事",
            "金額": 1234000,
            "備考": None,
        },
        {
            "売上日": "2025-01-20",
            "伝票番号": "0002",
            "得意先": "B工業",
            "金額": 55000,
            "備考": "値引きあり",
        },
    ]
    info = out["info"]
    assert info["encoding"] == "cp932"
    assert info["delimiter"] == ","
    assert info["header_row"] == 3  # 1-based: the line the user sees in an editor
    assert info["skipped_title_rows"] == ["売上明細（2025年1月）"]
    assert info["converted"] == {"売上日": "date", "金額": "number"}
    assert info["columns"] == ["売上日", "伝票番号", "得意先", "金額", "備考"]
    assert any("タイトル行" in w for w in info["warnings"])


def test_columns_keep_the_given_order(
    block: Block, make_ctx: ContextFactory, sales_csv: Path
) -> None:
    inputs = {"path": str(sales_csv), "columns": ["金額", "得意先"]}
    out = run_like_runner(block, inputs, make_ctx())
    assert out["rows"] == [
        {"金額": 1234000, "得意先": "株式会社A商事"},
        {"金額": 55000, "得意先": "B工業"},
    ]
    assert out["info"]["columns"] == ["金額", "得意先"]


def test_missing_columns_are_named_with_the_ones_that_exist(
    block: Block, make_ctx: ContextFactory, sales_csv: Path
) -> None:
    inputs = {"path": str(sales_csv), "columns": ["金額", "税額", "部門"]}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "税額, 部門" in info.value.message
    assert "売上.csv" in info.value.message
    assert "売上日, 伝票番号, 得意先, 金額, 備考" in info.value.hint


def test_header_row_is_one_based(block: Block, make_ctx: ContextFactory, tmp_path: Path) -> None:
    path = tmp_path / "data.tsv"
    path.write_text("注記\t\n科目\t金額\n会議費\t5000\n", encoding="utf-8")
    out = run_like_runner(block, {"path": str(path), "header_row": 2}, make_ctx())
    assert out["rows"] == [{"科目": "会議費", "金額": 5000}]
    assert out["info"]["header_row"] == 2
    assert out["info"]["delimiter"] == "\t"


def test_excel_sheet_by_name_with_dates_as_iso(
    block: Block, make_ctx: ContextFactory, book: Path
) -> None:
    out = run_like_runner(block, {"path": str(book), "sheet": "明細"}, make_ctx())
    assert out["rows"] == [
        {"日付": "2025-01-31", "科目": "旅費交通費", "金額": 12800},
        {"日付": "2025-02-03", "科目": "消耗品費", "金額": 3300},
    ]
    assert out["info"]["sheet"] == "明細"
    assert out["info"]["sheets"] == ["表紙", "明細"]
    assert out["info"]["format"] == "xlsx"


def test_missing_sheet_lists_the_sheets(block: Block, make_ctx: ContextFactory, book: Path) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"path": str(book), "sheet": "集計"}, make_ctx())
    text = info.value.message + info.value.hint
    assert "集計" in text
    assert "表紙" in text
    assert "明細" in text


def test_missing_file_is_named(block: Block, make_ctx: ContextFactory, tmp_path: Path) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"path": str(tmp_path / "ない.csv")}, make_ctx())
    assert info.value.code == ErrorCode.FILE_UNREADABLE
    assert "ない.csv" in info.value.message
    assert info.value.hint


def test_unsupported_format_passes_through(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    path = tmp_path / "資料.pdf"
    path.write_bytes(b"%PDF-1.4\n")
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"path": str(path)}, make_ctx())
    assert info.value.code == ErrorCode.UNSUPPORTED_FORMAT
    assert "資料.pdf" in info.value.message


@pytest.mark.parametrize(
    "inputs",
    [{"path": ""}, {"path": "a.csv", "header_row": 0}, {"path": "a.csv", "columns": []}],
    ids=["empty-path", "header-row-0", "no-columns"],
)
def test_bad_inputs_are_refused_before_reading(block: Block, inputs: dict[str, object]) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs(inputs)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert info.value.hint


def test_times_with_an_offset_are_read_in_keiri_timezone(
    block: Block, make_ctx: ContextFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_TIMEZONE", "UTC")
    path = tmp_path / "ログ.csv"
    path.write_bytes(offset_csv())
    out = run_like_runner(block, {"path": str(path)}, make_ctx())

    assert [r["登録日時"] for r in out["rows"]][:3] == ["2026-02-03T01:00:00"] * 3
    assert any("UTC の時刻に直し" in w for w in out["info"]["warnings"])
