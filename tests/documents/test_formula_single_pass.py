"""Formulas saved without their result are found in the one pass in which the sheet is read.

Each reader of a workbook (``read_table``, ``excel.read_data``'s rows, text extraction) opened
the sheet's XML three times when it held formulas: openpyxl's reading, a byte search for a
formula, and a parse for the cells without a result. Now it is opened once, and the cells are
still named: computed formulas are read, uncomputed ones refused (or counted by extract) on
the sheet read, never on another.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook

from keiri_agent.documents import office, table_xlsx
from keiri_agent.documents.excel import ExcelManager
from keiri_agent.documents.table_infer import TableLimits
from keiri_agent.errors import ErrorCode, FileProcessingError
from tests.documents.arrival_corpus import _cache_formulas
from tests.documents.system_exports import _rewritten

ROWS = 3_000  # a sheet of about 150 KB of XML, read in many pieces


def _workbook(*, computed: bool) -> bytes:
    book = Workbook()
    other = book.active
    other.title = "集計"
    other.append(["合計", "=SUM(明細!D:D)"])  # never computed: not the sheet read
    ws = book.create_sheet("明細", 0)
    ws.append(["品目", "数量", "単価", "金額"])
    for row in range(2, ROWS + 2):
        ws.append([f"品目{row}", row, 100, f"=B{row}*C{row}"])
    buffer = io.BytesIO()
    book.save(buffer)
    values = {f"D{row}": row * 100 for row in range(2, ROWS + 2)} if computed else {}
    return _cache_formulas(buffer.getvalue(), values)


class _Counted:
    """A worksheet part opened from the archive, counting the bytes read from it."""

    def __init__(self, inner: Any, part: str, reads: dict[str, int]) -> None:
        self._inner, self._part, self._reads = inner, part, reads

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._inner.read(size)
        self._reads[self._part] = self._reads.get(self._part, 0) + len(data)
        return data

    def __enter__(self) -> _Counted:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def sheet_reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Bytes read from each worksheet part in this process (a sheet read once is read about
    once its size: openpyxl's read-only books also look at each sheet's head for its size)."""
    reads: dict[str, int] = {}
    real_open = zipfile.ZipFile.open

    def counting(self: zipfile.ZipFile, name: Any, mode: str = "r", *args: Any, **kw: Any) -> Any:
        handle = real_open(self, name, mode, *args, **kw)
        part = name.filename if isinstance(name, zipfile.ZipInfo) else str(name)
        if mode == "r" and part.startswith("xl/worksheets/sheet"):
            return _Counted(handle, part, reads)
        return handle

    monkeypatch.setattr(zipfile.ZipFile, "open", counting)
    return reads


def _size(data: bytes, part: str) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.getinfo(part).file_size


def _read_once(reads: dict[str, int], data: bytes, part: str = "xl/worksheets/sheet1.xml") -> None:
    assert reads[part] < 1.3 * _size(data, part), (reads, _size(data, part))


def test_read_table_reads_computed_formulas_with_one_reading_of_each_sheet(
    sheet_reads: dict[str, int],
) -> None:
    data = _workbook(computed=True)
    sheet_reads.clear()

    result = table_xlsx._read_sheet(data, "見積.xlsx", None, None, TableLimits(), None, None)

    assert result.df["金額"].tolist() == [row * 100 for row in range(2, ROWS + 2)]
    _read_once(sheet_reads, data)


def test_read_table_still_names_the_uncomputed_cells(sheet_reads: dict[str, int]) -> None:
    data = _workbook(computed=False)
    sheet_reads.clear()

    with pytest.raises(FileProcessingError) as caught:
        table_xlsx._read_sheet(data, "見積.xlsx", None, None, TableLimits(), None, None)

    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    assert f"数式のセル {ROWS:,} 個（D2、D3、D4、D5、D6 ほか）" in caught.value.message
    _read_once(sheet_reads, data)


def test_rows_of_a_sheet_or_range_are_read_in_one_pass(
    tmp_path: Path, sheet_reads: dict[str, int]
) -> None:
    path = tmp_path / "見積.xlsx"
    path.write_bytes(_workbook(computed=True))
    sheet_reads.clear()

    rows = ExcelManager(path)._read_rows(None, None, TableLimits())

    assert rows[1] == ["品目2", 2, 100, 200]
    _read_once(sheet_reads, path.read_bytes())
    path.write_bytes(_workbook(computed=False))
    with pytest.raises(FileProcessingError) as caught:
        ExcelManager(path)._read_rows(None, "A1:D3", TableLimits())
    assert "2 個（D2、D3）" in caught.value.message
    assert ExcelManager(path)._read_rows(None, "A1:C3", TableLimits())[1] == ["品目2", 2, 100]


def test_extract_counts_formulas_without_a_result_in_one_pass(sheet_reads: dict[str, int]) -> None:
    books = [_workbook(computed=True), _workbook(computed=False)]
    sheet_reads.clear()

    computed, uncomputed = (office.read_xlsx(data, "見積.xlsx") for data in books)

    assert computed.metadata["formulas_without_value"] == 0
    assert "品目2\t2\t100\t200" in computed.text
    # Those in the rows read (the first XLSX_MAX_ROWS, header included); not 集計's.
    assert uncomputed.metadata["formulas_without_value"] == office.XLSX_MAX_ROWS - 1
    assert sheet_reads["xl/worksheets/sheet1.xml"] < 1.3 * sum(
        _size(data, "xl/worksheets/sheet1.xml") for data in books
    )


def test_uncomputed_formulas_of_a_sheet_without_cell_references_are_named() -> None:
    # Web systems' writers may leave out each cell's r="D2"; the cells are still named.
    book = Workbook()
    ws = book.active
    ws.title = "見積"
    ws.append(["品目", "数量", "単価", "金額"])
    ws.append(["A", 2, 100, "=B2*C2"])
    ws.append(["B", 3, 50, "=B3*C3"])
    buffer = io.BytesIO()
    book.save(buffer)
    data = _rewritten(buffer.getvalue(), references=False, shared=False, runs=False)

    with pytest.raises(FileProcessingError) as caught:
        table_xlsx._read_sheet(data, "見積.xlsx", None, None, TableLimits(), None, None)

    assert "数式のセル 2 個（D2、D3）" in caught.value.message
