"""file.extract_text: files become an evidence set that downstream blocks read like a ZIP's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner
from tests.documents.corpus import docx_bytes, japanese_pdf_bytes, page_sentence

NOTE = "請求書番号: INV-2025-001\n取引先: 株式会社サンプル商事\nご請求金額 110,000円\n"
# Keys every file record of file.parse_zip_2tier carries (ai.process_llm reads these).
EVIDENCE_FILE_KEYS = {
    "group",
    "path",
    "name",
    "ext",
    "size",
    "sha256",
    "from_nested",
    "format",
    "chars",
    "truncated",
    "warnings",
    "error",
    "text",
}


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("file.extract_text")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "docs"
    folder.mkdir()
    paths = {
        "pdf": folder / "規程.pdf",
        "txt": folder / "請求書.txt",
        "docx": folder / "経費規程.docx",
    }
    paths["pdf"].write_bytes(japanese_pdf_bytes(2))
    paths["txt"].write_bytes(NOTE.encode("cp932"))
    paths["docx"].write_bytes(docx_bytes())
    return paths


def test_files_become_evidence_text_and_documents(
    block: Block, make_ctx: ContextFactory, files: dict[str, Path]
) -> None:
    paths = [str(files["pdf"]), str(files["txt"]), str(files["docx"])]
    out = run_like_runner(block, {"paths": paths}, make_ctx())

    evidence = out["evidence_data"]
    assert evidence["total_files"] == 3
    assert evidence["groups"] == {"": paths}
    assert evidence["errors"] == []
    assert evidence["warnings"] == []
    assert evidence["source"] == "規程.pdf ほか 2件"
    assert evidence["total_size"] == sum(files[k].stat().st_size for k in ("pdf", "txt", "docx"))
    records = evidence["files"]
    assert [r["name"] for r in records] == ["規程.pdf", "請求書.txt", "経費規程.docx"]
    for record in records:
        assert set(record) == EVIDENCE_FILE_KEYS | {"local_path"}
        assert record["group"] == ""
        assert record["error"] is None
        assert len(record["sha256"]) == 64
    assert page_sentence(2) in records[0]["text"]
    assert records[1]["text"] == NOTE  # decoded from Shift_JIS
    assert "第1条 この規程は経費精算の手続きを定める。" in records[2]["text"]

    text = out["text"]
    assert text.startswith("=== 規程.pdf ===\n第1ページ:")
    assert "\n\n=== 請求書.txt ===\n請求書番号: INV-2025-001" in text
    assert "\n\n=== 経費規程.docx ===\n" in text

    assert out["documents"][0] == {
        "name": "規程.pdf",
        "path": paths[0],
        "format": "pdf",
        "pages": 2,
        "chars": records[0]["chars"],
        "truncated": False,
        "warnings": [],
    }
    assert [d["pages"] for d in out["documents"]] == [2, None, None]
    assert [d["format"] for d in out["documents"]] == ["pdf", "txt", "docx"]


def test_evidence_feeds_text_extract_fields(
    block: Block, registry: BlockRegistry, make_ctx: ContextFactory, files: dict[str, Path]
) -> None:
    out = run_like_runner(block, {"paths": str(files["txt"])}, make_ctx())
    fields = [
        {"name": "請求書番号", "pattern": r"請求書番号[:：\s]*(?P<value>[A-Z0-9-]+)"},
        {"name": "金額", "pattern": r"ご請求金額\s*(?P<value>[0-9,]+)円", "type": "amount"},
    ]
    extracted = run_like_runner(
        registry.load("text.extract_fields"),
        {"evidence_data": out["evidence_data"], "fields": fields},
        make_ctx("fields"),
    )
    assert extracted["records"] == [
        {
            "グループ": "",
            "ファイル": str(files["txt"]),
            "請求書番号": "INV-2025-001",
            "金額": 110000,
        }
    ]


def test_folder_listing_records_are_accepted_as_paths(
    block: Block, registry: BlockRegistry, make_ctx: ContextFactory, files: dict[str, Path]
) -> None:
    listing = run_like_runner(
        registry.load("file.list_folder"),
        {"folder": str(files["pdf"].parent), "pattern": "*.txt"},
        make_ctx("list"),
    )
    out = run_like_runner(block, {"paths": listing["files"]}, make_ctx())
    assert [f["name"] for f in out["evidence_data"]["files"]] == ["請求書.txt"]


def test_text_is_cut_at_max_chars_and_says_so(
    block: Block, make_ctx: ContextFactory, files: dict[str, Path]
) -> None:
    out = run_like_runner(block, {"paths": str(files["txt"]), "max_chars": 10}, make_ctx())
    record = out["evidence_data"]["files"][0]
    assert record["text"] == NOTE[:10]
    assert record["truncated"] is True
    assert "10 文字" in record["warnings"][0]
    assert out["documents"][0]["truncated"] is True


def test_unreadable_file_stops_the_block_with_the_file_layer_error(
    block: Block, make_ctx: ContextFactory, files: dict[str, Path], tmp_path: Path
) -> None:
    fake = tmp_path / "docs" / "見積書.pdf"
    fake.write_text("<html><body>ログインしてください</body></html>", encoding="utf-8")
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"paths": [str(files["txt"]), str(fake)]}, make_ctx())
    assert info.value.code == ErrorCode.FILE_UNREADABLE
    assert "見積書.pdf" in info.value.message
    assert "HTML" in info.value.message
    assert info.value.hint


def test_skip_unreadable_records_the_error_and_reads_the_rest(
    block: Block, make_ctx: ContextFactory, files: dict[str, Path], tmp_path: Path
) -> None:
    fake = tmp_path / "docs" / "見積書.pdf"
    fake.write_text("<html><body>ログインしてください</body></html>", encoding="utf-8")
    inputs: dict[str, Any] = {"paths": [str(fake), str(files["txt"])], "skip_unreadable": True}
    out = run_like_runner(block, inputs, make_ctx())
    evidence = out["evidence_data"]
    assert evidence["total_files"] == 2
    assert len(evidence["errors"]) == 1
    error = evidence["errors"][0]
    assert error["code"] == ErrorCode.FILE_UNREADABLE
    assert error["details"]["path"] == str(fake)
    assert evidence["files"][0]["error"] == error
    assert evidence["files"][0]["text"] is None
    assert any("見積書.pdf" in w for w in evidence["warnings"])
    assert "=== 見積書.pdf ===\n（読み取れませんでした:" in out["text"]
    assert [d["name"] for d in out["documents"]] == ["請求書.txt"]


def test_missing_file_is_named(block: Block, make_ctx: ContextFactory, tmp_path: Path) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"paths": str(tmp_path / "ない.pdf")}, make_ctx())
    assert info.value.code == ErrorCode.FILE_UNREADABLE
    assert "ない.pdf" in info.value.message
    assert "保存場所" in info.value.hint


def test_a_folder_is_refused_with_the_blocks_that_read_folders(
    block: Block, make_ctx: ContextFactory, files: dict[str, Path]
) -> None:
    inputs = {"paths": [str(files["pdf"].parent)], "max_chars": 100}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "フォルダ" in info.value.message
    assert "file.list_folder" in info.value.hint
    assert "file.parse_zip_2tier" in info.value.hint


@pytest.mark.parametrize("paths", [[], "  ", [{"name": "a.pdf"}], [3]], ids=str)
def test_paths_that_are_not_paths_are_refused(block: Block, paths: Any) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"paths": paths})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "file.list_folder" in info.value.hint


def test_the_same_file_twice_is_read_once_with_a_warning(
    block: Block, make_ctx: ContextFactory, files: dict[str, Path]
) -> None:
    out = run_like_runner(block, {"paths": [str(files["txt"])] * 2}, make_ctx())
    assert out["evidence_data"]["total_files"] == 1
    assert "重複" in out["evidence_data"]["warnings"][0]
