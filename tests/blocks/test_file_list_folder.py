"""file.list_folder: the files of a folder as records, without following links or cutting lists."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("file.list_folder")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """証跡/: two vendors' files, clutter, a hidden file and a lock file."""
    root = tmp_path / "証跡"
    (root / "A社").mkdir(parents=True)
    (root / "B社" / "1月").mkdir(parents=True)
    (root / "請求一覧.xlsx").write_bytes(b"x" * 10)
    (root / "A社" / "請求書.pdf").write_bytes(b"p" * 100)
    (root / "A社" / "SCAN001.PDF").write_bytes(b"s" * 50)
    (root / "B社" / "1月" / "明細.csv").write_bytes(b"c" * 30)
    (root / "A社" / "Thumbs.db").write_bytes(b"t")
    (root / ".secret").write_bytes(b"h")
    (root / "~$請求一覧.xlsx").write_bytes(b"l")
    stamp = datetime(2025, 1, 31, 10, 0, 0, tzinfo=ZoneInfo("Asia/Tokyo")).timestamp()
    os.utime(root / "請求一覧.xlsx", (stamp, stamp))
    return root


def test_top_level_files_by_default(block: Block, make_ctx: ContextFactory, folder: Path) -> None:
    out = run_like_runner(block, {"folder": str(folder)}, make_ctx())
    assert out["files"] == [
        {
            "path": str(folder / "請求一覧.xlsx"),
            "name": "請求一覧.xlsx",
            "relative_path": "請求一覧.xlsx",
            "ext": ".xlsx",
            "size": 10,
            "modified": "2025-01-31T10:00:00+09:00",  # KEIRI_TIMEZONE's default: Asia/Tokyo
        }
    ]
    summary = out["summary"]
    assert (summary["folder"], summary["count"], summary["total_size"]) == (str(folder), 1, 10)
    assert summary["hidden_skipped"] == 2  # .secret and the Office lock file
    assert summary["warnings"] == []


def test_modified_is_in_keiri_timezone_with_its_offset(
    block: Block, make_ctx: ContextFactory, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """10:00 in Tokyo is 20:00 the day before in New York: the same instant, the person's clock."""
    monkeypatch.setenv("KEIRI_TIMEZONE", "America/New_York")
    (record,) = run_like_runner(block, {"folder": str(folder)}, make_ctx())["files"]
    assert record["modified"] == "2025-01-30T20:00:00-05:00"


def test_recursive_pattern_is_case_insensitive_and_sorted(
    block: Block, make_ctx: ContextFactory, folder: Path
) -> None:
    out = run_like_runner(
        block, {"folder": str(folder), "pattern": "*.pdf", "recursive": True}, make_ctx()
    )
    assert [f["relative_path"] for f in out["files"]] == ["A社/SCAN001.PDF", "A社/請求書.pdf"]
    assert [f["ext"] for f in out["files"]] == [".pdf", ".pdf"]
    assert out["summary"]["total_size"] == 150


def test_several_patterns_and_a_path_pattern(
    block: Block, make_ctx: ContextFactory, folder: Path
) -> None:
    inputs = {"folder": str(folder), "pattern": ["*.csv", "*.xlsx"], "recursive": True}
    out = run_like_runner(block, inputs, make_ctx())
    assert [f["relative_path"] for f in out["files"]] == ["B社/1月/明細.csv", "請求一覧.xlsx"]
    inputs = {"folder": str(folder), "pattern": "b社/*/*", "recursive": True}
    out = run_like_runner(block, inputs, make_ctx())
    assert [f["relative_path"] for f in out["files"]] == ["B社/1月/明細.csv"]


def test_hidden_files_and_clutter_on_request(
    block: Block, make_ctx: ContextFactory, folder: Path
) -> None:
    inputs = {"folder": str(folder), "recursive": True, "include_hidden": True}
    out = run_like_runner(block, inputs, make_ctx())
    names = {f["relative_path"] for f in out["files"]}
    assert {".secret", "~$請求一覧.xlsx", "A社/Thumbs.db"} <= names
    assert out["summary"]["count"] == 7
    assert out["summary"]["hidden_skipped"] == 0


def test_symlinks_are_reported_not_followed(
    block: Block, make_ctx: ContextFactory, folder: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "秘密.txt").write_text("x", encoding="utf-8")
    (folder / "リンク").symlink_to(outside, target_is_directory=True)
    (folder / "link.xlsx").symlink_to(folder / "請求一覧.xlsx")
    out = run_like_runner(block, {"folder": str(folder), "recursive": True}, make_ctx())
    paths = [f["relative_path"] for f in out["files"]]
    assert not any("秘密" in p or p == "link.xlsx" for p in paths)
    warnings = out["summary"]["warnings"]
    assert len(warnings) == 2
    assert all("シンボリックリンク" in w for w in warnings)


def test_more_files_than_max_files_is_an_error_not_a_cut(
    block: Block, make_ctx: ContextFactory, folder: Path
) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block, {"folder": str(folder), "recursive": True, "max_files": 3}, make_ctx()
        )
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "3 件" in info.value.message
    assert "pattern" in info.value.hint


def test_missing_folder_is_named(block: Block, make_ctx: ContextFactory, tmp_path: Path) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"folder": str(tmp_path / "ない")}, make_ctx())
    assert info.value.code == ErrorCode.FILE_UNREADABLE
    assert "ない" in info.value.message
    assert info.value.hint


def test_a_file_is_not_a_folder(block: Block, make_ctx: ContextFactory, folder: Path) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"folder": str(folder / "請求一覧.xlsx")}, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "file.extract_text" in info.value.hint


def test_bad_pattern_is_refused(block: Block, folder: Path) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"folder": str(folder), "pattern": ["*.pdf", ""]})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "*.pdf" in info.value.hint


def test_a_missing_or_unreadable_folder_reads_as_for_an_evidence_folder(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    """file.list_folder and the evidence-folder reader say the same for the same situation."""
    from keiri_agent.documents import open_folder

    def both(root: Path) -> list[tuple[str, str, str]]:
        caught = []
        with pytest.raises(BlockError) as listed:
            run_like_runner(block, {"folder": str(root), "recursive": True}, make_ctx())
        caught.append(listed.value)
        with pytest.raises(BlockError) as opened:
            open_folder(root)
        caught.append(opened.value)
        return [(e.code, e.message, e.hint) for e in caught]

    missing = both(tmp_path / "ない")
    assert missing[0] == missing[1]
    assert (
        missing[0][1]
        == f"フォルダ '{tmp_path / 'ない'}' が見つかりません（またはフォルダではありません）。"
    )
    if os.geteuid() == 0:
        return  # root lists folders regardless of their mode
    root = tmp_path / "証跡"
    (root / "A").mkdir(parents=True)
    (root / "A" / "請求書.txt").write_text("x", encoding="utf-8")
    (root / "A").chmod(0)
    try:
        closed = both(root)
    finally:
        (root / "A").chmod(0o755)
    assert closed[0] == closed[1]
    assert closed[0][0] == ErrorCode.FILE_UNREADABLE
    assert "'A' を読めません" in closed[0][1]
