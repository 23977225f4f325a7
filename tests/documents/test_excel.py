"""ExcelManager: records out of sheets and ranges; writes into a copy, never the input."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook
from openpyxl.styles import Font, PatternFill

from keiri_agent.documents.excel import ExcelManager
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """A small 売上 workbook: title row, header on row 3, a formula total and styling."""
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "売上"
    ws["A1"] = "2024年度 売上明細"
    ws.merge_cells("A1:D1")
    ws.append([])
    ws.append(["日付", "取引先", "金額", "備考"])
    ws.append(["2024-04-01", "株式会社あおば", 110000, None])
    ws.append(["2024-04-02", "ミドリ商事", 55000, "分納"])
    ws["C6"] = "=SUM(C4:C5)"
    ws["C6"].font = Font(bold=True, color="FF0000")
    ws["D3"].fill = PatternFill("solid", fgColor="FFFF00")
    wb.create_sheet("マスタ").append(["コード", "名称"])
    path = tmp_path / "売上.xlsx"
    wb.save(path)
    return path


def test_read_records_below_a_title_row(ledger: Path) -> None:
    manager = ExcelManager(ledger)
    assert manager.sheet_names() == ["売上", "マスタ"]
    records = manager.read_records("売上", cell_range="A3:D5")
    assert records == [
        {"日付": "2024-04-01", "取引先": "株式会社あおば", "金額": 110000, "備考": None},
        {"日付": "2024-04-02", "取引先": "ミドリ商事", "金額": 55000, "備考": "分納"},
    ]
    # (Rows 1-5: the sheet's C6 holds a formula openpyxl saved without its result.)
    assert (
        manager.read_records(0, cell_range="A1:D5", header_row=3)[0]["取引先"] == "株式会社あおば"
    )


def test_blank_and_repeated_headers_keep_every_value(tmp_path: Path) -> None:
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["金額", None, "金額"])
    ws.append([1, 2, 3])
    path = tmp_path / "dup.xlsx"
    wb.save(path)
    assert ExcelManager(path).read_records() == [{"金額": 1, "列2": 2, "金額_2": 3}]


def test_write_goes_to_a_copy_and_keeps_formulas_and_styles(ledger: Path, tmp_path: Path) -> None:
    before = _digest(ledger)
    out = tmp_path / "out" / "売上_更新.xlsx"
    with ExcelManager(ledger).edit(out) as book:
        book.set_cell("売上", "D4", "確認済")
        book.set_column("売上", "E", ["担当", "佐藤", "鈴木"], start_row=3)
        book.append_sheet("照合結果", [{"取引先": "ミドリ商事", "差額": -500}])
    assert _digest(ledger) == before  # the input is untouched
    wb = load_workbook(out)
    ws = wb["売上"]
    assert ws["D4"].value == "確認済"
    assert [ws[f"E{r}"].value for r in (3, 4, 5)] == ["担当", "佐藤", "鈴木"]
    assert ws["C6"].value == "=SUM(C4:C5)"  # untouched formula kept
    assert ws["C6"].font.bold is True
    assert ws["D3"].fill.fgColor.rgb.endswith("FFFF00")
    assert "A1:D1" in {str(r) for r in ws.merged_cells.ranges}
    assert [[c.value for c in row] for row in wb["照合結果"].iter_rows()] == [
        ["取引先", "差額"],
        ["ミドリ商事", -500],
    ]
    assert not list(out.parent.glob(".*"))  # no temp file left behind


def test_write_records_append_and_overwrite(ledger: Path, tmp_path: Path) -> None:
    out = tmp_path / "appended.xlsx"
    rows = [{"date": "2024-04-03", "vendor": "あさひ物産", "amount": 33000}]
    with ExcelManager(ledger).edit(out) as book:
        first = book.write_records(
            "売上", rows, start_cell="A4", columns={"date": "A", "vendor": "B", "amount": "C"}
        )
    assert first == 7  # below the formula row 6, the last used row of A:C
    ws = load_workbook(out)["売上"]
    assert [ws[f"{c}7"].value for c in "ABC"] == ["2024-04-03", "あさひ物産", 33000]

    out2 = tmp_path / "overwritten.xlsx"
    with ExcelManager(ledger).edit(out2) as book:
        assert book.write_records("売上", rows, start_cell="A4", mode="overwrite") == 4
    ws = load_workbook(out2)["売上"]
    assert [ws[f"{c}4"].value for c in "ABC"] == ["2024-04-03", "あさひ物産", 33000]
    assert ws["B5"].value == "ミドリ商事"


def test_a_failed_edit_writes_nothing(ledger: Path, tmp_path: Path) -> None:
    before = _digest(ledger)
    out = tmp_path / "never.xlsx"

    def edit_then_fail() -> None:
        with ExcelManager(ledger).edit(out) as book:
            book.set_cell("売上", "D4", "途中まで")
            book.set_cell("売上", "B1", "結合セル")  # inside the merged title A1:D1

    with pytest.raises(BlockError) as info:
        edit_then_fail()
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "結合セル" in info.value.message
    assert not out.exists()
    assert not list(tmp_path.glob(".never*"))
    assert _digest(ledger) == before


def test_refusals_are_japanese_block_errors(ledger: Path, tmp_path: Path) -> None:
    with pytest.raises(BlockError, match="上書き"):
        ExcelManager(ledger).edit(ledger)
    with pytest.raises(BlockError, match="シート 'なし' が見つかりません") as info:
        ExcelManager(ledger).read_records("なし")
    assert "売上" in info.value.hint
    with pytest.raises(BlockError, match="セル範囲"):
        ExcelManager(ledger).read_rows(cell_range="A:Z")
    fake = tmp_path / "fake.xlsx"
    fake.write_text("<html>not excel</html>", encoding="utf-8")
    with pytest.raises(FileProcessingError) as bad:
        ExcelManager(fake).read_rows()
    assert bad.value.code == ErrorCode.FILE_UNREADABLE
    assert bad.value.details["file"] == "fake.xlsx"
    with pytest.raises(FileProcessingError) as xls:
        ExcelManager(tmp_path / "old.xls")
    assert xls.value.code == ErrorCode.UNSUPPORTED_FORMAT
