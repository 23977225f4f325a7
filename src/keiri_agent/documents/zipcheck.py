"""Checking a ZIP before a single byte of it is decompressed: its central directory only.

Every entry is checked against ``ArchiveLimits`` and refused with ``FileProcessingError``
naming the entry:

* ARCHIVE_UNSAFE: a path that leaves the archive (absolute, ``..``, a drive letter, a UNC or
  backslash path), a symbolic-link entry, more entries than ``max_members``, a declared total
  over ``max_total_bytes``, a compression ratio over ``max_ratio`` (for entries of at least
  ``ratio_min_bytes``; small files of repeated text compress well and are harmless);
* FILE_TOO_LARGE: an entry over ``max_member_bytes``;
* FILE_ENCRYPTED: a password-protected entry (general-purpose flag bit 0);
* FILE_UNREADABLE: not a ZIP.

``check_container`` runs these checks on an Office Open XML file (a ZIP of XML parts) before
an Office library opens it; ``zipsafe`` runs them on an evidence archive, then reads it.
Entry names and path checks live in ``zipnames``.
"""

from __future__ import annotations

import io
import stat
import zipfile
from dataclasses import dataclass
from typing import BinaryIO

from keiri_agent.documents.failures import encrypted, exception_reason, too_large, unreadable
from keiri_agent.documents.limits import (
    MAX_ARCHIVE_DEPTH,
    MAX_ARCHIVE_MEMBERS,
    MAX_ARCHIVE_RATIO,
    MAX_ARCHIVE_TOTAL_BYTES,
    MAX_FILE_BYTES,
)
from keiri_agent.documents.zipnames import decode_member_name, safe_member_path, unsafe_error
from keiri_agent.errors import FileProcessingError

__all__ = [
    "CONTAINER_HINT",
    "RATIO_MIN_BYTES",
    "ArchiveLimits",
    "Budget",
    "check_container",
    "checked_entries",
    "is_zip",
    "open_zip",
]

RATIO_MIN_BYTES = 1024 * 1024
_ENCRYPTED_FLAG = 0x1
CONTAINER_HINT = (
    "ファイルの中の圧縮データが異常です（展開すると巨大になる「圧縮爆弾」の疑い）。"
    "作成元に確認し、Excel・Word・PowerPoint で開いて保存し直したファイルを渡してください。"
)


@dataclass(frozen=True)
class ArchiveLimits:
    """Limits applied while reading an archive or folder (defaults from ``limits``)."""

    max_total_bytes: int = MAX_ARCHIVE_TOTAL_BYTES
    max_ratio: float = MAX_ARCHIVE_RATIO
    max_members: int = MAX_ARCHIVE_MEMBERS
    max_depth: int = MAX_ARCHIVE_DEPTH
    max_member_bytes: int = MAX_FILE_BYTES
    ratio_min_bytes: int = RATIO_MIN_BYTES


@dataclass
class Budget:
    """Bytes and members used so far, shared by an archive and the ZIPs nested in it."""

    limits: ArchiveLimits
    total_bytes: int = 0
    members: int = 0


def open_zip(fileobj: BinaryIO, label: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise unreadable(
            label,
            f"'{label}' は ZIP ファイルとして読めません（壊れているか、ZIP ではありません）。",
            "ダウンロードやコピーが途中で切れていないか確認し、ZIP を作り直してください。",
            reason=exception_reason(exc),
        ) from exc


def is_zip(data: bytes) -> bool:
    """Whether ``data`` opens as a ZIP; a damaged inner ZIP stays a plain member."""
    if not data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return False
    try:
        zipfile.ZipFile(io.BytesIO(data)).close()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
        return False
    return True


def _check_entry(info: zipfile.ZipInfo, path: str, label: str, limits: ArchiveLimits) -> None:
    member = f"'{label}' のメンバー '{path}'"
    if stat.S_ISLNK(info.external_attr >> 16):
        raise unsafe_error(label, f"{member} はシンボリックリンクです。", "symlink", member=path)
    if info.file_size > limits.max_member_bytes:
        raise too_large(
            label,
            f"{member} は大きすぎます（展開後 {info.file_size:,} バイト、上限 {limits.max_member_bytes:,} バイト）。",
            "大きなファイルは ZIP から出して個別に渡すか、分割してください。",
            member=path,
            size=info.file_size,
            limit=limits.max_member_bytes,
        )
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size >= limits.ratio_min_bytes and ratio > limits.max_ratio:
        raise unsafe_error(
            label,
            f"{member} の圧縮率が異常です（{info.compress_size:,} バイトが {info.file_size:,} バイトに"
            f"展開されます、{ratio:,.0f} 倍 > 上限 {limits.max_ratio:,.0f} 倍）。ZIP 爆弾の疑いがあります。",
            "ratio",
            member=path,
            ratio=ratio,
        )


def checked_entries(
    zf: zipfile.ZipFile, label: str, budget: Budget, warnings: list[str]
) -> list[tuple[zipfile.ZipInfo, str]]:
    """The file entries of ``zf`` with their safe paths, once every entry passed the checks.

    Checks the member count, each entry (path, symlink, size, ratio, encryption) and the
    declared total against ``budget`` (which it charges the members to), before any entry is
    decompressed. Name-decoding and duplicate-name notes go to ``warnings``.
    """
    limits = budget.limits
    infos = zf.infolist()
    if budget.members + len(infos) > limits.max_members:
        raise unsafe_error(
            label,
            f"'{label}' のエントリー数が多すぎます（{budget.members + len(infos):,} 件、上限 {limits.max_members:,} 件）。",
            "member_count",
            count=budget.members + len(infos),
        )
    budget.members += len(infos)
    entries: list[tuple[zipfile.ZipInfo, str]] = []
    locked: list[str] = []
    seen_paths: set[str] = set()
    for info in infos:
        name, warning = decode_member_name(info)
        if warning:
            warnings.append(f"'{label}': {warning}")
        path = safe_member_path(name, label)
        if not path or info.is_dir() or name.replace("\\", "/").endswith("/"):
            continue
        _check_entry(info, path, label, limits)
        if info.flag_bits & _ENCRYPTED_FLAG:
            locked.append(path)
        if path in seen_paths:
            warnings.append(
                f"'{label}' には同じ名前のメンバー '{path}' が複数あります（すべて読みます）。"
            )
        seen_paths.add(path)
        entries.append((info, path))
    if locked:
        others = f"（ほか {len(locked) - 1} 件）" if len(locked) > 1 else ""
        raise encrypted(
            label,
            f"'{label}' のメンバー '{locked[0]}'{others} はパスワードで暗号化されていて読めません。",
            "パスワードなしの ZIP を作り直して渡してください。",
            members=locked,
        )
    declared = sum(info.file_size for info, _p in entries)
    if budget.total_bytes + declared > limits.max_total_bytes:
        raise unsafe_error(
            label,
            f"'{label}' の展開後の合計サイズが上限を超えます（{declared:,} バイト、上限 {limits.max_total_bytes:,} バイト）。",
            "total_size",
            declared=declared,
            limit=limits.max_total_bytes,
        )
    return entries


def check_container(
    source: BinaryIO | bytes,
    label: str,
    *,
    limits: ArchiveLimits = ArchiveLimits(),
    hint: str = CONTAINER_HINT,
) -> None:
    """Refuse an Office Open XML file (.xlsx/.docx/.pptx: a ZIP of XML parts) that breaks the
    archive limits, before openpyxl, python-docx or python-pptx opens it.

    The same checks as for an evidence ZIP (member count, declared total, per-member size and
    ratio, paths, encryption), on the central directory only: those libraries read parts
    through ``zipfile``, which never inflates an entry past its declared size (it stops there
    and fails the CRC), so declared sizes that pass bound what they can see. Errors carry
    ``hint`` (written for Office files) instead of the archive hint.
    """
    fileobj = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    try:
        with open_zip(fileobj, label) as zf:
            checked_entries(zf, label, Budget(limits), [])
    except FileProcessingError as exc:
        exc.hint = hint
        raise
