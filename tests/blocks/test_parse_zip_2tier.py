"""file.parse_zip_2tier: an evidence ZIP becomes vendor groups with each file's text."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from openpyxl import Workbook

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError
from tests.blocks.conftest import ContextFactory, run_like_runner


def xlsx_bytes() -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["日付", "金額"])
    sheet.append(["2025-01-31", 55000])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


MEMBERS = {
    "A社/請求書.txt": "請求書\nA社 御中\n合計 110,000円\n".encode(),
    "B社/1月/明細.xlsx": xlsx_bytes(),
}


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("file.parse_zip_2tier")


@pytest.fixture
def evidence_zip(tmp_path: Path) -> Path:
    path = tmp_path / "evidence.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in MEMBERS.items():
            archive.writestr(name, data)
    return path


def test_zip_is_read_as_vendor_groups_with_text(
    block: Block, make_ctx: ContextFactory, evidence_zip: Path
) -> None:
    out = run_like_runner(block, {"zip_bytes": str(evidence_zip)}, make_ctx())
    evidence = out["evidence_data"]
    assert evidence["source"] == "evidence.zip"
    assert evidence["groups"] == {"A社": ["A社/請求書.txt"], "B社": ["B社/1月/明細.xlsx"]}
    assert evidence["total_files"] == 2
    assert evidence["errors"] == []
    by_path = {f["path"]: f for f in evidence["files"]}
    assert "合計 110,000円" in by_path["A社/請求書.txt"]["text"]
    assert by_path["B社/1月/明細.xlsx"]["text"] == "日付\t金額\n2025-01-31\t55000"
    assert by_path["B社/1月/明細.xlsx"]["group"] == "B社"


def test_bytes_and_folders_give_the_same_groups(
    block: Block, make_ctx: ContextFactory, evidence_zip: Path, tmp_path: Path
) -> None:
    from_bytes = run_like_runner(block, {"zip_bytes": evidence_zip.read_bytes()}, make_ctx())
    folder = tmp_path / "evidence"
    for name, data in MEMBERS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    from_folder = run_like_runner(block, {"zip_bytes": str(folder)}, make_ctx())
    for out in (from_bytes, from_folder):
        assert out["evidence_data"]["groups"] == {
            "A社": ["A社/請求書.txt"],
            "B社": ["B社/1月/明細.xlsx"],
        }


def test_listing_without_text(block: Block, make_ctx: ContextFactory, evidence_zip: Path) -> None:
    inputs = {"zip_bytes": str(evidence_zip), "include_text": False}
    files = run_like_runner(block, inputs, make_ctx())["evidence_data"]["files"]
    assert [f["name"] for f in files] == ["請求書.txt", "明細.xlsx"]
    assert all("text" not in f for f in files)


def test_missing_zip_is_the_file_layers_error(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(FileProcessingError) as info:
        run_like_runner(block, {"zip_bytes": "/nonexistent/evidence.zip"}, make_ctx())
    assert info.value.code == ErrorCode.FILE_UNREADABLE
    assert "evidence.zip" in info.value.message


def test_unsafe_zip_is_refused_unchanged(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("../../etc/cron.d/x", b"boom")
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"zip_bytes": str(path)}, make_ctx())
    assert info.value.code == ErrorCode.ARCHIVE_UNSAFE
    assert info.value.hint


def test_empty_path_is_an_input_error_not_the_current_directory(
    block: Block, make_ctx: ContextFactory
) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"zip_bytes": "  "}, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "zip_bytes" in info.value.hint
