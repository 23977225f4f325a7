"""Identifier columns (取引先コード, 口座番号, 法人番号, 照会番号, 電話番号...) come back as the
file shows them: read by ``read_table``, written by ``excel.write_report`` and the Markdown
``table`` filter, never with a digit lost, a separator added or an exponent shown.

``damage`` counts, over the seeded ledgers of ``id_ledgers``, the identifier cells whose text
differs from the file's at each step: read (a leading zero lost, a long number rounded, a
float's ``.0``, a file that cannot be read at all), the Excel report (``1,001``,
``1.23457E+12``), ``excel.write``'s sheet and the Markdown table. Plain
codes stay numbers (a plan compares 取引先コード to 1001), so the golden outputs do not move.
Run ``python -m tests.documents.test_id_columns`` to print the counts.
"""

from __future__ import annotations

import io
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import Workbook, load_workbook

from keiri_agent.blocks.excel.report_layout import ReportSheet, write_sheet
from keiri_agent.blocks.report.markdown import markdown_table
from keiri_agent.documents import read_table
from keiri_agent.documents.excel import ExcelManager
from keiri_agent.documents.table_value import Table
from tests.documents.id_ledgers import IdTable, id_table

# 60 tables hold every shape x encoding x number format of the 240 once drawn (18 of 18), and
# on the code before identifiers were kept each of the four steps damaged cells in them (read
# 1419, Excel report 3174, excel.write 2125, Markdown 2468, 5 tables unread).
TABLES = 60
CHUNK = 20  # tables per test, so that each stays short on a busy machine
_GENERAL_DIGITS = 11  # Excel's General format shows a longer number as 1.23457E+12


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return repr(value)  # 1001.0: a code read as a float shows so in a CSV or a prompt
    return str(value)


def _excel_shown(value: Any, number_format: str) -> str:
    """What Excel shows for a cell (the formats the report writer gives identifiers)."""
    if value is None:
        return ""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return str(value)
    if "#,##0" in number_format:
        return f"{value:,}"
    if re.fullmatch(r"0+", number_format):
        return str(int(value)).zfill(len(number_format))
    if number_format == "General" and len(str(abs(int(value)))) > _GENERAL_DIGITS:
        return f"{value:.5E}"
    return _as_text(value)


def _excel_report(table: Table) -> list[dict[str, str]]:
    book = Workbook(write_only=True)
    ws = book.create_sheet("台帳")
    sheet = ReportSheet("台帳", "台帳", table, list(table.columns), None, {}, False)
    write_sheet(ws, sheet, lambda: None)
    out = io.BytesIO()
    book.save(out)
    rows = list(load_workbook(out).worksheets[0].iter_rows())
    header = [str(c.value) for c in rows[0]]
    return [
        {h: _excel_shown(c.value, c.number_format) for h, c in zip(header, row, strict=True)}
        for row in rows[1:]
    ]


def _edited(table: Table) -> list[dict[str, str]]:
    """The table written by ``excel.write``'s writer (``ExcelEdit``, in memory) as a new sheet."""
    with tempfile.TemporaryDirectory() as folder:
        blank, out = Path(folder, "元.xlsx"), Path(folder, "出力.xlsx")
        Workbook().save(blank)
        with ExcelManager(blank).edit(out) as edit:
            edit.append_sheet("台帳", table.records(), headers=list(table.columns))
        rows = list(load_workbook(out)["台帳"].iter_rows())
    header = [str(c.value) for c in rows[0]]
    return [
        {h: _excel_shown(c.value, c.number_format) for h, c in zip(header, row, strict=True)}
        for row in rows[1:]
    ]


def _markdown(table: Table) -> list[dict[str, str]]:
    lines = markdown_table(table).splitlines()
    header = [h.strip() for h in lines[0].strip("|").split("|")]
    return [
        dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
        for line in lines[2:]
    ]


def damage(ledger: IdTable) -> Counter[str]:
    """Identifier cells whose text is not the file's: ``read``, ``excel``, ``markdown``."""
    found: Counter[str] = Counter()
    try:
        table = read_table(ledger.data(), name=ledger.name).table()
    except Exception:  # counted: the file could not be read at all
        found["cells"] += sum(len(c.shown) for c in ledger.identifiers)
        found["unread tables"] += 1
        return found
    records = table.records()
    written = {
        "excel": _excel_report(table),
        "excel_edit": _edited(table),
        "markdown": _markdown(table),
    }
    for column in ledger.identifiers:
        for row, shown in enumerate(column.shown):
            found["cells"] += 1
            found["read"] += _as_text(records[row][column.header]) != shown
            for writer, rows in written.items():
                found[writer] += rows[row][column.header] != shown
    return found


def measure(seeds: range = range(TABLES)) -> Counter[str]:
    total: Counter[str] = Counter()
    for seed in seeds:
        total += damage(id_table(seed))
    return total


@pytest.mark.parametrize("first", range(0, TABLES, CHUNK))
def test_no_identifier_cell_is_damaged_on_the_way_through(first: int) -> None:
    found = measure(range(first, first + CHUNK))
    assert found["cells"] > 1_000
    assert found - Counter(cells=found["cells"]) == Counter()


if __name__ == "__main__":
    print(dict(measure()))


def _workbook(rows: list[list[Any]], formats: dict[int, str]) -> bytes:
    """An .xlsx of ``rows``; ``formats`` gives a column (from 0) of data cells a number format."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    for col, number_format in formats.items():
        for (cell,) in sheet.iter_rows(min_row=2, min_col=col + 1, max_col=col + 1):
            cell.number_format = number_format
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_a_reference_number_longer_than_a_number_keeps_is_read_as_written() -> None:
    """A bank's 照会番号 of 16-20 digits is a code: a float would round it, an int64 overflow
    (a CSV of them could not be read at all)."""
    numbers = ["12345678901234567890", "9949538156135941", "847447210008453764"]
    text = "照会番号,金額\r\n" + "".join(f"{n},{i + 1}00\r\n" for i, n in enumerate(numbers))
    book = _workbook([["照会番号", "金額"], *([n, 100] for n in numbers)], {})
    for data, name in ((text.encode("cp932"), "入金.csv"), (book, "入金.xlsx")):
        result = read_table(data, name=name)
        assert result.df["照会番号"].tolist() == numbers
        assert "照会番号" not in result.info.converted
        assert result.info.converted["金額"] == "number"


def test_plain_codes_stay_numbers_blanks_and_all() -> None:
    """取引先コード 1001 stays the number 1001 (a plan compares it to 1001), a blank among them
    turns nothing into a float, and nothing is said about it."""
    text = "取引先コード,取引先ＣＤ,金額\r\n1001,2001,500\r\n,,600\r\n1003,2003,700\r\n"
    book = _workbook(
        [["取引先コード", "取引先ＣＤ", "金額"], [1001, 2001, 500], [None, None, 600]], {}
    )
    for data, name in ((text.encode(), "台帳.csv"), (book, "台帳.xlsx")):
        result = read_table(data, name=name)
        records = result.table().records()
        assert (records[0]["取引先コード"], records[0]["取引先ＣＤ"]) == (1001, 2001)
        assert records[1]["取引先コード"] is None
        assert result.info.converted["取引先コード"] == "number"
        assert (result.info.warnings, result.info.notes) == ([], [])


def test_a_code_a_workbook_shows_with_leading_zeros_is_read_as_shown() -> None:
    """口座番号 12345 under the format ``0000000`` is the 0012345 the user sees, and the column's
    other numbers are its codes as text too, with one note; a month under ``00`` (04) is no
    identifier and stays the number 4."""
    rows = [["口座番号", "月", "金額"], [12345, 4, 100], [1234567, 12, 200], [None, 5, 300]]
    result = read_table(_workbook(rows, {0: "0000000", 1: "00"}), name="口座.xlsx")

    assert result.df["口座番号"].tolist()[:2] == ["0012345", "1234567"]
    assert result.df["月"].tolist() == [4, 12, 5]
    assert result.info.warnings == []
    assert result.info.notes == [
        "列「口座番号」: 表示形式で先頭に 0 を付けて表示されている番号 1 個を、表示のとおりの"
        "文字として読みました（12345 → 0012345）"
    ]
    assert "notes" not in read_table(_workbook(rows, {}), name="口座.xlsx").info.to_dict()


def test_writers_show_codes_without_separators_and_long_numbers_with_every_digit() -> None:
    """Excel report, ``excel.write``'s sheet and Markdown: 取引先ＣＤ 1001 (not 1,001), 法人番号
    1234567890123 in the format ``0`` (General shows 1.23457E+12); the report's 金額 with
    separators (``excel.write`` writes into a template's formats and adds none)."""
    frame = pd.DataFrame(
        {"取引先ＣＤ": [1001, 1002], "法人番号": [1234567890123, 9876543210987], "金額": [1200, 3]}
    )
    table = Table(frame)
    expected = {"取引先ＣＤ": "1001", "法人番号": "1234567890123"}
    for rows in (_excel_report(table), _edited(table), _markdown(table)):
        assert {k: rows[0][k] for k in expected} == expected
    assert _excel_report(table)[0]["金額"] == _markdown(table)[0]["金額"] == "1,200"
    book = Workbook(write_only=True)
    sheet = ReportSheet("台帳", "台帳", table, list(table.columns), None, {}, False)
    write_sheet(book.create_sheet("台帳"), sheet, lambda: None)
    out = io.BytesIO()
    book.save(out)
    cells = next(load_workbook(out).worksheets[0].iter_rows(min_row=2, max_row=2))
    assert [c.number_format for c in cells] == ["General", "0", '#,##0;"△"#,##0']
