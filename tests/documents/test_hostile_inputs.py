"""Hostile files, small on disk and huge once read: each is refused with a Japanese error and
a hint, and the process that read it stayed within a stated memory bound.

Memory is the peak resident size of a fresh interpreter that imports the file layer and reads
one file (its bounded parser child included), minus the same interpreter's peak after the
imports (``hostile.peak_rss``). Files are generated here (``hostile``), never shipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.documents import read_table
from keiri_agent.documents.bounded import run_bounded
from keiri_agent.documents.limits import MAX_PARSE_MEMORY_BYTES, TableLimits
from keiri_agent.errors import ErrorCode, FileProcessingError
from tests.documents import hostile
from tests.documents.corpus import docx_bytes, pptx_bytes

# What reading one hostile file may add to the reader's peak memory, when a check refuses the
# file before it is parsed (archive limits, table limits, XML entities).
REFUSED_GROWTH_BOUND_MB = 400
# When only the parser child's limit stops the file (a PDF stream), the child may reach it.
PARSER_GROWTH_BOUND_MB = MAX_PARSE_MEMORY_BYTES / hostile.MiB + 150


def _refused(measured: hostile.Measured) -> dict[str, Any]:
    assert "error" in measured.outcome, measured.outcome
    error: dict[str, Any] = measured.outcome["error"]
    assert error["message"], error
    assert error["hint"], error
    return error


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_stray_cell_at_xfd1048576_is_refused_with_the_used_range(tmp_path: Path) -> None:
    path = _write(tmp_path, "売上.xlsx", hostile.far_cell_xlsx())
    assert path.stat().st_size < 10_000
    for reader in ("table", "rows"):
        measured = hostile.peak_rss(reader, path)
        error = _refused(measured)
        assert error["code"] == ErrorCode.FILE_TOO_LARGE
        assert "A1:XFD1048576" in error["message"] or "1,048,576 行" in error["message"]
        assert "Ctrl+End" in error["hint"]
        assert measured.growth_mb < REFUSED_GROWTH_BOUND_MB, (reader, measured)


def test_a_lying_saved_dimension_reads_only_the_cells_that_exist(tmp_path: Path) -> None:
    # A1 and A100000 exist; the sheet claims A1:XFD1048576. Reading must not pad to that range.
    path = _write(tmp_path, "台帳.xlsx", hostile.lying_dimension_xlsx())
    measured = hostile.peak_rss("rows", path)
    assert measured.outcome == {"ok": True}
    assert measured.growth_mb < REFUSED_GROWTH_BOUND_MB, measured
    table = read_table(path)
    assert table.df["見出し"].tolist() == [42]


@pytest.mark.parametrize("reader", ["table", "extract"])
def test_a_shared_strings_bomb_is_refused_before_openpyxl_opens_it(
    tmp_path: Path, reader: str
) -> None:
    path = _write(tmp_path, "bomb.xlsx", hostile.shared_strings_bomb_xlsx(432))
    assert path.stat().st_size < 2 * hostile.MiB
    measured = hostile.peak_rss(reader, path)
    error = _refused(measured)
    assert error["code"] in (ErrorCode.ARCHIVE_UNSAFE, ErrorCode.FILE_TOO_LARGE)
    assert "xl/sharedStrings.xml" in error["message"]
    assert "圧縮爆弾" in error["hint"]
    assert measured.growth_mb < REFUSED_GROWTH_BOUND_MB, measured


@pytest.mark.parametrize(
    ("name", "document", "part", "element"),
    [
        ("契約書.docx", docx_bytes, "word/document.xml", b"<w:p><w:r><w:t>a</w:t></w:r></w:p>"),
        ("説明.pptx", pptx_bytes, "ppt/slides/slide1.xml", b"<a:t>a</a:t>"),
    ],
)
def test_word_and_powerpoint_bombs_get_the_archive_limits(
    tmp_path: Path, name: str, document: Any, part: str, element: bytes
) -> None:
    data = hostile.office_part_bomb(document(), part, element, expanded_mb=150)
    path = _write(tmp_path, name, data)
    measured = hostile.peak_rss("extract", path)
    error = _refused(measured)
    assert error["code"] == ErrorCode.ARCHIVE_UNSAFE
    assert part in error["message"]
    assert "圧縮率" in error["message"]
    assert measured.growth_mb < REFUSED_GROWTH_BOUND_MB, measured


def test_an_office_file_with_too_many_parts_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "部品.xlsx", hostile.many_parts_xlsx(6_000))
    with pytest.raises(FileProcessingError) as caught:
        read_table(path)
    assert caught.value.code == ErrorCode.ARCHIVE_UNSAFE
    assert "エントリー数が多すぎます" in caught.value.message
    assert caught.value.hint


@pytest.mark.parametrize("part", ["sheet", "strings"])
def test_extract_reports_a_billion_laughs_workbook_in_japanese(tmp_path: Path, part: str) -> None:
    path = _write(tmp_path, "laughs.xlsx", hostile.billion_laughs_xlsx(part))
    result = CliRunner().invoke(app, ["extract", str(path)])
    assert result.exit_code == 1
    assert "XML 爆弾" in result.output
    assert "Traceback" not in result.output
    assert "ParseError" not in result.output
    with pytest.raises(FileProcessingError) as caught:
        read_table(path)
    assert caught.value.code == ErrorCode.ARCHIVE_UNSAFE
    assert "DTD" in caught.value.hint


def test_a_pdf_stream_that_inflates_to_gigabytes_is_reported_as_too_large(tmp_path: Path) -> None:
    path = _write(tmp_path, "請求書.pdf", hostile.flate_bomb_pdf(1536))
    assert path.stat().st_size < 2 * hostile.MiB
    measured = hostile.peak_rss("extract", path)
    error = _refused(measured)
    assert error["code"] == ErrorCode.FILE_TOO_LARGE
    assert "メモリが上限" in error["message"]
    assert measured.growth_mb < PARSER_GROWTH_BOUND_MB, measured


def test_a_csv_100000_columns_wide_is_refused_by_the_column_limit(tmp_path: Path) -> None:
    path = _write(tmp_path, "wide.csv", hostile.wide_csv(100_000))
    assert path.stat().st_size < hostile.MiB
    measured = hostile.peak_rss("table", path)
    error = _refused(measured)
    assert error["code"] == ErrorCode.FILE_TOO_LARGE
    assert "列数 100,000 > 上限 16,384" in error["message"]
    assert measured.growth_mb < REFUSED_GROWTH_BOUND_MB, measured


def test_table_limits_bound_rows_and_cells() -> None:
    data = hostile.wide_csv(columns=20, rows=60)
    table = read_table(data, name="ok.csv", limits=TableLimits(max_cells=20 * 61))
    assert table.df.shape == (60, 20)
    with pytest.raises(FileProcessingError) as caught:
        read_table(data, name="big.csv", limits=TableLimits(max_cells=20 * 50))
    assert caught.value.code == ErrorCode.FILE_TOO_LARGE
    assert "セル数" in caught.value.message
    assert caught.value.hint
    with pytest.raises(FileProcessingError) as caught:
        read_table(data, name="long.csv", limits=TableLimits(max_rows=10))
    assert "行数" in caught.value.message


def _allocate(megabytes: int) -> int:
    return len(bytearray(megabytes * hostile.MiB))


def _refuse(label: str) -> None:
    raise FileProcessingError(label, "読めません。", code=ErrorCode.FILE_UNREADABLE, hint="直す")


def test_the_parser_child_turns_exhaustion_into_an_error_and_passes_results_back() -> None:
    assert run_bounded(_allocate, 8, label="小.bin", memory_bytes=256 * hostile.MiB) == 8 * 2**20
    with pytest.raises(FileProcessingError) as caught:
        run_bounded(_allocate, 1024, label="大.bin", memory_bytes=256 * hostile.MiB)
    assert caught.value.code == ErrorCode.FILE_TOO_LARGE
    assert "大.bin" in caught.value.message
    assert caught.value.hint
    with pytest.raises(FileProcessingError) as refused:
        run_bounded(_refuse, "壊.bin", label="壊.bin")
    assert refused.value.code == ErrorCode.FILE_UNREADABLE
    assert refused.value.details["file"] == "壊.bin"
    with pytest.raises(KeyError):
        run_bounded({}.__getitem__, "missing", label="x")


def test_ordinary_office_files_still_read_after_the_checks() -> None:
    from keiri_agent.documents import extract_text

    assert "見出し" in extract_text(hostile.minimal_xlsx(), name="ok.xlsx").text
    assert extract_text(docx_bytes(), name="ok.docx").text
