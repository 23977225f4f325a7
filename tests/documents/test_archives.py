"""Evidence ZIPs and folders: Windows names, 2-tier groups, and every refusal."""

from __future__ import annotations

import io
import json
import os
import stat
import struct
import tempfile
import unicodedata
import zipfile
import zlib
from pathlib import Path

import pytest

from keiri_agent.documents.archives import (
    ROOT_GROUP,
    ArchiveLimits,
    EvidenceSet,
    open_archive,
    open_folder,
    parse_folder_2tier,
    parse_zip_2tier,
)
from keiri_agent.errors import FileProcessingError
from tests.documents import archive_corpus as corpus
from tests.documents.archive_corpus import EVIDENCE_TREE, Entry, build_zip


def _refusal(data: bytes, name: str = "証跡.zip", **limits: int) -> FileProcessingError:
    with pytest.raises(FileProcessingError) as info:
        open_archive(data, name=name, limits=ArchiveLimits(**limits))
    assert info.value.details["file"].startswith(name)  # nested: "outer.zip/inner.zip"
    assert name in info.value.message
    return info.value


# -- names and grouping -----------------------------------------------------------------


def test_windows_cp932_names_are_decoded() -> None:
    members = open_archive(corpus.cp932_evidence_zip(), name="証跡.zip")

    assert {m.path: m.data.decode("cp932") for m in members} == EVIDENCE_TREE
    # 表 and ソ end in byte 0x5C ("\\" in ASCII); it must not become a path separator.
    assert "表計算ソフト一覧.txt" in [m.path for m in members]
    assert members.warnings == []


def test_zip_with_raw_cp932_bytes_is_valid_for_zipfile_too() -> None:
    with zipfile.ZipFile(io.BytesIO(corpus.cp932_evidence_zip())) as archive:
        assert all(not info.flag_bits & 0x800 for info in archive.infolist())


def test_utf8_names_without_the_flag_and_nfd_are_normalized() -> None:
    name = unicodedata.normalize("NFD", "ガイド/パンフレット.txt")  # as macOS writes it
    members = open_archive(build_zip([Entry(name.encode("utf-8"), b"x")]), name="mac.zip")

    assert [m.path for m in members] == ["ガイド/パンフレット.txt"]


def test_info_zip_unicode_path_field_wins() -> None:
    raw = "見積.txt".encode("cp932")
    utf8 = "見積書（最終）.txt".encode()
    extra = struct.pack("<HHBI", 0x7075, 5 + len(utf8), 1, zlib.crc32(raw)) + utf8
    members = open_archive(build_zip([Entry(raw, b"x", extra=extra)]), name="a.zip")

    assert members[0].path == "見積書（最終）.txt"


def test_undecodable_name_falls_back_to_cp437_with_a_warning() -> None:
    members = open_archive(build_zip([Entry(b"\x81\x7f.txt", b"x")]), name="a.zip")

    assert len(members) == 1
    assert any("CP437" in w and "文字化け" in w for w in members.warnings)


def test_two_tier_groups_from_first_level_folders() -> None:
    evidence = parse_zip_2tier(corpus.cp932_evidence_zip(), name="証跡.zip", extract=False)

    assert evidence.groups.keys() == {ROOT_GROUP, "A社", "B社（髙橋）"}
    assert [f.path for f in evidence.groups["A社"]] == [
        "A社/明細/納品書①.txt",
        "A社/請求書_2024年4月.txt",
    ]
    assert [f.name for f in evidence.groups[ROOT_GROUP]] == ["表計算ソフト一覧.txt"]
    assert len(evidence.files) == 4
    assert all(f.text is None and f.error is None for f in evidence.files)
    summary = evidence.to_dict()
    assert summary["total_files"] == 4
    assert summary["groups"]["B社（髙橋）"] == ["B社（髙橋）/見積書.txt"]
    assert summary["files"][0]["sha256"]
    json.dumps(summary)


def test_os_clutter_is_skipped_and_reported() -> None:
    data = corpus.simple_zip(
        {
            "A社/請求書.txt": "請求",
            "__MACOSX/A社/._請求書.txt": b"\x00\x05\x16\x07",
            "A社/.DS_Store": b"\x00\x00\x00\x01Bud1",
            "Thumbs.db": b"\xd0\xcf",
            "B社/desktop.ini": "[.ShellClassInfo]",
        }
    )
    members = open_archive(data, name="mac.zip")

    assert [m.path for m in members] == ["A社/請求書.txt"]
    assert len(members.warnings) == 4
    assert any("__MACOSX" in w for w in members.warnings)


def test_nested_zip_is_expanded_into_its_group() -> None:
    evidence = parse_zip_2tier(corpus.nested_zip(1), name="outer.zip", extract=False)

    assert list(evidence.groups) == ["A社"]
    assert [f.path for f in evidence.files] == [
        "A社/まとめ.zip/sub/明細.txt",
        "A社/まとめ.zip/内訳.txt",
        "A社/表紙.txt",
    ]
    assert evidence.files[0].from_nested == "A社/まとめ.zip"
    assert evidence.files[2].from_nested is None


def test_duplicate_names_are_all_read_with_a_warning() -> None:
    data = build_zip([Entry("A/a.txt".encode("cp932"), b"1"), Entry(b"A/a.txt", b"2", flags=0x800)])
    members = open_archive(data, name="dup.zip")

    assert [m.data for m in members] == [b"1", b"2"]
    assert any("同じ名前" in w for w in members.warnings)


def test_damaged_inner_zip_stays_a_member_with_a_warning() -> None:
    members = open_archive(corpus.simple_zip({"a.zip": b"PK\x03\x04broken"}), name="o.zip")

    assert [m.path for m in members] == ["a.zip"]
    assert any("ZIP として開けない" in w for w in members.warnings)


def test_zip_from_a_path(tmp_path: Path) -> None:
    path = tmp_path / "証跡.zip"
    path.write_bytes(corpus.cp932_evidence_zip())

    evidence = parse_zip_2tier(path, extract=False)

    assert evidence.source == "証跡.zip"
    assert len(evidence.files) == 4


# -- refusals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (b"../evil.txt", "parent_reference"),
        (b"A/../../evil.txt", "parent_reference"),
        (b"..\\evil.txt", "parent_reference"),
        (b"/etc/x", "absolute"),
        (b"\\\\server\\share\\x.txt", "absolute"),
        (b"C:\\Windows\\evil.txt", "drive"),
        (b"C:evil.txt", "drive"),
    ],
)
def test_zip_slip_is_refused(name: bytes, reason: str) -> None:
    data = build_zip([Entry(b"ok.txt", b"fine"), Entry(name, b"pwned")])

    err = _refusal(data)

    assert err.code == "ARCHIVE_UNSAFE"
    assert err.details["reason"] == reason
    assert name.decode() in err.message
    assert "展開先の外" in err.message


def test_symlink_member_is_refused() -> None:
    err = _refusal(corpus.symlink_zip())

    assert err.code == "ARCHIVE_UNSAFE"
    assert "'link'" in err.message
    assert "シンボリックリンク" in err.message


def test_zip_bomb_is_refused_by_ratio_before_inflating() -> None:
    err = _refusal(corpus.bomb_zip(50))

    assert err.code == "ARCHIVE_UNSAFE"
    assert err.details["reason"] == "ratio"
    assert "bomb.txt" in err.message
    assert "ZIP 爆弾" in err.message


def test_lying_declared_size_is_caught_while_inflating() -> None:
    data = corpus.lying_size_zip(megabytes=5, declared=1000)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.infolist()[0].file_size == 1000  # the lie passes the ratio check

    err = _refusal(data)

    assert err.code == "ARCHIVE_UNSAFE"
    assert err.details["reason"] == "size_mismatch"
    assert "small.txt" in err.message
    assert "申告サイズ" in err.message


def test_too_many_members_is_refused() -> None:
    data = corpus.simple_zip({f"G/{i}.txt": "x" for i in range(4)})

    err = _refusal(data, max_members=3)

    assert err.code == "ARCHIVE_UNSAFE"
    assert "エントリー数" in err.message


def test_declared_total_over_the_limit_is_refused() -> None:
    data = corpus.simple_zip({"a.txt": "x" * 600, "b.txt": "y" * 600})

    err = _refusal(data, max_total_bytes=1000)

    assert err.code == "ARCHIVE_UNSAFE"
    assert err.details["reason"] == "total_size"


def test_member_over_the_file_limit_is_too_large() -> None:
    err = _refusal(corpus.simple_zip({"大きい.csv": "x" * 100}), max_member_bytes=50)

    assert err.code == "FILE_TOO_LARGE"
    assert "大きい.csv" in err.message


def test_encrypted_member_is_refused() -> None:
    data = corpus.encrypted_zip(b"secret")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:  # real ZipCrypto
        assert archive.read("給与/明細.txt".encode("cp932").decode("cp437"), pwd=b"secret") == (
            "極秘".encode("cp932")
        )

    err = _refusal(data)

    assert err.code == "FILE_ENCRYPTED"
    assert "給与/明細.txt" in err.message
    assert "パスワード" in err.message


def test_two_levels_of_nesting_are_refused() -> None:
    err = _refusal(corpus.nested_zip(2))

    assert err.code == "ARCHIVE_UNSAFE"
    assert err.details["reason"] == "too_deep"
    assert "deeper.zip" in err.message


@pytest.mark.parametrize(
    "data",
    [b"", b"this is not a zip", corpus.cp932_evidence_zip()[:-30]],
    ids=["empty", "text", "truncated"],
)
def test_not_a_zip_is_unreadable(data: bytes) -> None:
    err = _refusal(data)

    assert err.code == "FILE_UNREADABLE"
    assert "ZIP" in err.message


def test_corrupt_member_data_is_unreadable() -> None:
    err = _refusal(build_zip([Entry(b"a.txt", b"hello", crc=1)]))

    assert err.code == "FILE_UNREADABLE"
    assert "a.txt" in err.message


def test_reading_writes_nothing_to_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = set(os.listdir())

    parse_zip_2tier(corpus.nested_zip(1), name="outer.zip", extract=True)
    with pytest.raises(FileProcessingError):
        open_archive(corpus.build_zip([Entry(b"../x", b"x")]), name="bad.zip")

    assert list(scratch.iterdir()) == []
    assert set(os.listdir()) == before


# -- text extraction --------------------------------------------------------------------


def test_extraction_gives_text_and_per_file_errors() -> None:
    broken = [
        Entry("A社/領収書.png".encode("cp932"), b"\x89PNG\r\n\x1a\n" + b"\x00" * 16),
        Entry("B社（髙橋）/空.txt".encode("cp932"), b""),
    ]
    evidence = parse_zip_2tier(corpus.cp932_evidence_zip(broken), name="証跡.zip")

    texts = {f.path: f.text.text for f in evidence.files if f.text is not None}
    assert texts["A社/請求書_2024年4月.txt"] == EVIDENCE_TREE["A社/請求書_2024年4月.txt"]
    assert "髙橋様" in texts["B社（髙橋）/見積書.txt"]
    assert len(texts) == 4
    codes = {e["details"]["path"]: e["code"] for e in evidence.errors}
    assert codes == {
        "A社/領収書.png": "UNSUPPORTED_FORMAT",
        "B社（髙橋）/空.txt": "FILE_UNREADABLE",
    }
    assert all(e["details"]["archive"] == "証跡.zip" for e in evidence.errors)
    png = next(f for f in evidence.files if f.ext == ".png")
    assert png.error is not None
    assert png.group == "A社"
    record = evidence.to_dict()["files"]
    assert {r["path"]: r["error"] is None for r in record}["A社/領収書.png"] is False
    json.dumps(evidence.to_dict())
    assert "text" not in evidence.to_records(include_text=False)[0]


def test_empty_archive_gives_an_empty_set_with_a_warning() -> None:
    evidence = parse_zip_2tier(corpus.simple_zip({}), name="空.zip")

    assert evidence.files == []
    assert any("空" in w for w in evidence.warnings)


# -- folders ----------------------------------------------------------------------------


def _write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def test_folder_reads_like_the_zip_made_from_it(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        **EVIDENCE_TREE,
        "A社/まとめ.zip": corpus.simple_zip({"内訳.txt": "入れ子"}),
    }
    root = tmp_path / "証跡"
    _write_tree(root, files)

    from_folder = parse_folder_2tier(root)
    from_zip = parse_zip_2tier(corpus.simple_zip(files), name="証跡.zip")

    def shape(ev: EvidenceSet) -> list[tuple[str, str, str | None]]:
        return [(f.group, f.path, f.text.text if f.text else None) for f in ev.files]

    assert shape(from_folder) == shape(from_zip)
    assert "A社/まとめ.zip/内訳.txt" in [f.path for f in from_folder.files]
    assert from_folder.source == "証跡"


def test_folder_skips_symlinks_fifos_and_clutter(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    root = tmp_path / "証跡"
    _write_tree(root, {"A社/請求書.txt": "請求", "__MACOSX/x": "x", ".DS_Store": "x"})
    (root / "A社" / "リンク.txt").symlink_to(outside / "secret.txt")
    (root / "C社").symlink_to(outside, target_is_directory=True)
    os.mkfifo(root / "A社" / "pipe")

    listing = open_folder(root)

    assert [m.path for m in listing] == ["A社/請求書.txt"]
    warnings = "\n".join(listing.warnings)
    assert "A社/リンク.txt" in warnings
    assert "C社" in warnings
    assert "シンボリックリンク" in warnings
    assert "A社/pipe" in warnings
    assert "__MACOSX" in warnings


def test_folder_limits_and_deep_nesting(tmp_path: Path) -> None:
    root = tmp_path / "証跡"
    _write_tree(root, {f"G/{i}.txt": "x" for i in range(4)})
    with pytest.raises(FileProcessingError) as info:
        open_folder(root, limits=ArchiveLimits(max_members=3))
    assert info.value.code == "FILE_TOO_LARGE"
    assert "証跡" in info.value.message

    deep = tmp_path / "深い"
    _write_tree(deep, {"G/outer.zip": corpus.nested_zip(1)})
    with pytest.raises(FileProcessingError) as info:
        open_folder(deep)
    assert info.value.code == "ARCHIVE_UNSAFE"
    assert "まとめ.zip" in info.value.message


def test_missing_folder_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(FileProcessingError) as info:
        parse_folder_2tier(tmp_path / "ない")
    assert info.value.code == "FILE_UNREADABLE"
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(FileProcessingError):
        open_folder(tmp_path / "file.txt")


def test_unreadable_file_in_folder_is_reported(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files regardless of their mode")
    root = tmp_path / "証跡"
    _write_tree(root, {"A/秘密.txt": "x"})
    (root / "A" / "秘密.txt").chmod(stat.S_IWUSR)
    with pytest.raises(FileProcessingError) as info:
        open_folder(root)
    assert info.value.code == "FILE_UNREADABLE"
    assert "A/秘密.txt" in info.value.message
