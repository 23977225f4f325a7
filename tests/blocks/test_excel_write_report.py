"""excel.write_report: a new workbook people can read, read back cell by cell with openpyxl."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from openpyxl.worksheet.worksheet import Worksheet
from PIL import Image

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

SUMMARY = [
    {"取引先": "株式会社エー商事", "伝票番号": 1001, "件数": 3, "金額": 1234567},
    {"取引先": "B工業", "伝票番号": 1002, "件数": 1, "金額": -5500},
]
EMU_PER_INCH = 914_400
DETAILS = [
    {"日付": "2025-01-31", "取引先": "A", "摘要": "=SUM(A1:A9)", "率": 0.1},
    {"日付": "2025-02-30", "取引先": "B", "摘要": "請求書\nの再発行", "率": None},
]


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("excel.write_report")


def sheet_of(path: Path, name: str) -> Worksheet:
    book = load_workbook(path)
    ws = book[name]
    assert isinstance(ws, Worksheet)
    return ws


def png(path: Path, size: tuple[int, int] = (300, 150), dpi: int = 150) -> Path:
    buffer = io.BytesIO()
    Image.new("RGB", size, "white").save(buffer, format="PNG", dpi=(dpi, dpi))
    path.write_bytes(buffer.getvalue())
    return path


def test_tables_become_formatted_sheets(block: Block, make_ctx: ContextFactory) -> None:
    ctx = make_ctx("write")
    sheets = [
        {"name": "取引先別", "title": "2025年1月 取引先別支払額", "rows": SUMMARY},
        {"name": "明細", "rows": {"items": DETAILS}},
    ]
    out = run_like_runner(block, {"sheets": sheets}, ctx)
    report = out["report"]
    path = Path(report["output_path"])
    assert path == ctx.work_dir() / "report.xlsx"
    assert report["sheets"] == [
        {"name": "取引先別", "rows": 2, "columns": ["取引先", "伝票番号", "件数", "金額"]},
        {"name": "明細", "rows": 2, "columns": ["日付", "取引先", "摘要", "率"]},
    ]
    assert report["warnings"] == []
    assert load_workbook(path).sheetnames == ["取引先別", "明細"]

    ws = sheet_of(path, "取引先別")
    assert ws["A1"].value == "2025年1月 取引先別支払額"
    assert ws["A1"].font.b
    assert [c.value for c in ws[2]] == ["取引先", "伝票番号", "件数", "金額"]
    assert all(c.font.b and c.fill.fgColor.rgb.endswith("DDEBF7") for c in ws[2])
    assert [c.value for c in ws[3]] == ["株式会社エー商事", 1001, 3, 1234567]
    assert ws["D4"].value == -5500
    assert ws["D3"].number_format == '#,##0;"△"#,##0'  # △5,500, as ledgers write it
    assert ws["C3"].number_format == '#,##0;"△"#,##0'
    assert ws["B3"].number_format == "General"  # a slip number is not an amount
    assert ws.freeze_panes == "A3"
    assert ws.auto_filter.ref == "A2:D4"
    # 8 full-width characters count 16, plus padding; "1,234,567" is 9 wide.
    assert ws.column_dimensions["A"].width == 18
    assert ws.column_dimensions["D"].width == 11

    ws = sheet_of(path, "明細")
    assert ws.freeze_panes == "A2"
    assert ws["A2"].value == dt.datetime(2025, 1, 31)
    assert ws["A2"].number_format == "yyyy-mm-dd"
    assert ws["A3"].value == "2025-02-30"  # not a real date: stays text
    assert ws["C2"].value == "=SUM(A1:A9)"
    assert ws["C2"].data_type == "s"  # text from the data is never run as a formula
    assert ws["C3"].value == "請求書\nの再発行"
    assert ws["D2"].value == 0.1
    assert ws["D3"].value is None


def test_columns_choose_and_order_and_number_formats_override(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "集計.xlsx"
    sheets = [
        {
            "name": "集計",
            "rows": SUMMARY,
            "columns": ["金額", "取引先"],
            "number_formats": {"金額": "#,##0;[Red]-#,##0"},
        }
    ]
    out = run_like_runner(block, {"sheets": sheets, "output_path": str(target)}, make_ctx())
    assert out["report"]["output_path"] == str(target)
    ws = sheet_of(target, "集計")
    assert [[c.value for c in row] for row in ws.iter_rows()] == [
        ["金額", "取引先"],
        [1234567, "株式会社エー商事"],
        [-5500, "B工業"],
    ]
    assert ws["A3"].number_format == "#,##0;[Red]-#,##0"


def test_empty_tables_get_a_note(block: Block, make_ctx: ContextFactory) -> None:
    sheets = [
        {"name": "差異", "title": "金額が合わないもの", "rows": []},
        {"name": "未入金", "rows": [], "columns": ["取引先", "金額"]},
    ]
    out = run_like_runner(block, {"sheets": sheets}, make_ctx())
    path = Path(out["report"]["output_path"])
    ws = sheet_of(path, "差異")
    assert [[c.value for c in row] for row in ws.iter_rows()] == [
        ["金額が合わないもの"],
        ["（該当なし）"],
    ]
    ws = sheet_of(path, "未入金")
    assert [[c.value for c in row] for row in ws.iter_rows()] == [
        ["取引先", "金額"],
        ["（該当なし）", None],
    ]
    assert out["report"]["sheets"][0] == {"name": "差異", "rows": 0, "columns": []}


def test_sheet_names_are_made_valid_and_unique_with_warnings(
    block: Block, make_ctx: ContextFactory
) -> None:
    long_name = "取引先別・勘定科目別の支払額の集計表（2025年1月分）最終確定版"
    sheets = [
        {"name": "1/2月", "rows": SUMMARY},
        {"name": "1:2月", "rows": SUMMARY},
        {"name": long_name, "rows": SUMMARY},
        {"name": "明細", "rows": SUMMARY},
        {"name": "明細", "rows": SUMMARY},
    ]
    out = run_like_runner(block, {"sheets": sheets}, make_ctx())
    names = [s["name"] for s in out["report"]["sheets"]]
    assert names == ["1_2月", "1_2月_2", long_name[:31], "明細", "明細_2"]
    assert load_workbook(out["report"]["output_path"]).sheetnames == names
    warnings = out["report"]["warnings"]
    assert len(warnings) == 4
    assert "「1/2月」" in warnings[0]
    assert "使えない文字" in warnings[0]
    assert "31 文字" in warnings[2]
    assert "重複" in warnings[3]


def test_images_are_embedded_at_their_cells(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    chart = png(tmp_path / "chart.png", (1200, 675), dpi=150)
    sheets = [{"name": "月別", "rows": SUMMARY}, {"name": "グラフ"}]
    images = [
        {"sheet": "月別", "path": str(chart), "cell": "F2"},
        {"sheet": "グラフ", "path": str(chart)},
    ]
    out = run_like_runner(block, {"sheets": sheets, "images": images}, make_ctx())
    assert out["report"]["images"] == 2
    path = Path(out["report"]["output_path"])
    ws = sheet_of(path, "月別")
    assert len(ws._images) == 1
    anchor = ws._images[0].anchor._from
    assert (anchor.col, anchor.row) == (5, 1)  # F2, 0-based
    # Shown at its physical size (8 × 4.5 inches), not at 1200 screen pixels.
    extent = ws._images[0].anchor.ext
    assert (extent.cx, extent.cy) == (8 * EMU_PER_INCH, 4.5 * EMU_PER_INCH)
    chart_sheet = sheet_of(path, "グラフ")
    assert len(chart_sheet._images) == 1
    assert chart_sheet["A1"].value is None  # an image-only sheet has no "（該当なし）" note


def test_an_existing_file_is_not_overwritten_unless_asked(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    target = tmp_path / "報告.xlsx"
    target.write_bytes(b"keep me")
    inputs: dict[str, Any] = {
        "sheets": [{"name": "表", "rows": SUMMARY}],
        "output_path": str(target),
    }
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert str(target) in info.value.message
    assert "overwrite: true" in info.value.hint
    assert target.read_bytes() == b"keep me"
    run_like_runner(block, {**inputs, "overwrite": True}, make_ctx())
    assert sheet_of(target, "表")["A2"].value == "株式会社エー商事"


def test_a_failure_leaves_no_file_behind(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    ctx = make_ctx()
    svg = tmp_path / "chart.svg"
    svg.write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    inputs = {"sheets": [{"name": "表", "rows": SUMMARY}], "images": [{"path": str(svg)}]}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, ctx)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "chart.svg" in info.value.message
    assert "format: png" in info.value.hint
    assert list(ctx.work_dir().iterdir()) == []

    broken = tmp_path / "壊れた.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    inputs = {"sheets": [{"name": "表", "rows": SUMMARY}], "images": [{"path": str(broken)}]}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, ctx)
    assert "壊れた.png" in info.value.message
    assert list(ctx.work_dir().iterdir()) == []

    inputs = {
        "sheets": [{"name": "表", "rows": SUMMARY}],
        "images": [{"path": str(tmp_path / "ない.png")}],
    }
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, ctx)
    assert info.value.code == ErrorCode.FILE_UNREADABLE
    assert "ない.png" in info.value.message
    assert list(ctx.work_dir().iterdir()) == []


def test_missing_columns_are_named(block: Block) -> None:
    sheets = [{"name": "集計", "rows": SUMMARY, "columns": ["取引先", "税額"]}]
    with pytest.raises(BlockError) as info:
        block.check_inputs({"sheets": sheets})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "「集計」" in info.value.message
    assert "税額" in info.value.message
    assert "取引先, 伝票番号, 件数, 金額" in info.value.hint


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ({"sheets": []}, "sheets"),
        ({"sheets": [{"name": "表", "rows": [1, 2]}]}, "items / records / rows"),
        ({"sheets": [{"name": "表", "rows": SUMMARY}], "output_path": "報告.xls"}, ".xlsx"),
        (
            {
                "sheets": [{"name": "表", "rows": SUMMARY}],
                "images": [{"sheet": "図", "path": "a.png"}],
            },
            "表",
        ),
        (
            {
                "sheets": [{"name": "表", "rows": SUMMARY}],
                "images": [{"path": "a.png", "cell": "上"}],
            },
            "H2",
        ),
    ],
    ids=["no-sheets", "rows-not-records", "xls", "image-sheet", "image-cell"],
)
def test_bad_inputs_are_refused_with_a_hint(
    block: Block, inputs: dict[str, Any], words: str
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs(inputs)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert words in info.value.hint
