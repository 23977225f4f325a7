"""Reading ZIP archives in memory without trusting them.

Every entry is checked before a single byte is decompressed, and refused with
``FileProcessingError`` naming the entry:

* ARCHIVE_UNSAFE: a path that leaves the archive (absolute, ``..``, a drive letter, a UNC or
  backslash path), a symbolic-link entry, more entries than ``max_members``, a declared total
  over ``max_total_bytes``, a compression ratio over ``max_ratio`` (for entries of at least
  ``ratio_min_bytes``; small files of repeated text compress well and are harmless), an entry
  that inflates past its declared size, or a ZIP nested deeper than ``max_depth``;
* FILE_TOO_LARGE: an entry over ``max_member_bytes``;
* FILE_ENCRYPTED: a password-protected entry (general-purpose flag bit 0);
* FILE_UNREADABLE: not a ZIP, truncated or corrupt data (CRC or size mismatch).

Declared sizes can lie, so stored and deflated entries are decompressed here from the raw
stream, chunk by chunk, with a byte counter checked against the declared size and the limits
(other methods go through ``zipfile`` with the same counter). Nothing is written to disk.

``check_container`` runs the same entry checks on an Office Open XML file (a ZIP of XML parts)
before an Office library opens it. Entry names and path checks live in ``zipnames``.
"""

from __future__ import annotations

import io
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import BinaryIO

from keiri_agent.documents.limits import (
    MAX_ARCHIVE_DEPTH,
    MAX_ARCHIVE_MEMBERS,
    MAX_ARCHIVE_RATIO,
    MAX_ARCHIVE_TOTAL_BYTES,
    MAX_FILE_BYTES,
)
from keiri_agent.documents.zipnames import (
    decode_member_name,
    safe_member_path,
    skip_reason,
    unsafe_error,
)
from keiri_agent.errors import ErrorCode, FileProcessingError

__all__ = [
    "CONTAINER_HINT",
    "RATIO_MIN_BYTES",
    "ArchiveLimits",
    "ArchiveListing",
    "ArchiveMember",
    "Budget",
    "check_container",
    "checked_entries",
    "is_zip",
    "read_nested",
    "read_zip",
]

RATIO_MIN_BYTES = 1024 * 1024
_CHUNK = 64 * 1024
_ENCRYPTED_FLAG = 0x1
_LOCAL_HEADER = struct.Struct("<4s22xHH")
CONTAINER_HINT = (
    "ファイルの中の圧縮データが異常です（展開すると巨大になる「圧縮爆弾」の疑い）。"
    "作成元に確認し、Excel・Word・PowerPoint で開いて保存し直したファイルを渡してください。"
)


@dataclass(frozen=True)
class ArchiveLimits:
    """Limits applied while reading an archive or folder (defaults from ``models``)."""

    max_total_bytes: int = MAX_ARCHIVE_TOTAL_BYTES
    max_ratio: float = MAX_ARCHIVE_RATIO
    max_members: int = MAX_ARCHIVE_MEMBERS
    max_depth: int = MAX_ARCHIVE_DEPTH
    max_member_bytes: int = MAX_FILE_BYTES
    ratio_min_bytes: int = RATIO_MIN_BYTES


@dataclass
class ArchiveMember:
    """One file read from an archive: POSIX ``path`` relative to the archive root.

    Members of a nested ZIP have paths under the nested ZIP's own path
    (``"A/inner.zip/x.pdf"``) and ``from_nested`` set to that path (``"A/inner.zip"``).
    """

    path: str
    data: bytes = field(repr=False)
    size: int
    from_nested: str | None = None

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name


class ArchiveListing(list[ArchiveMember]):
    """The members of an archive, in path order, with the warnings met while reading it."""

    def __init__(self, members: list[ArchiveMember] | None = None) -> None:
        super().__init__(members or [])
        self.warnings: list[str] = []


@dataclass
class Budget:
    """Bytes and members used so far, shared by an archive and the ZIPs nested in it."""

    limits: ArchiveLimits
    total_bytes: int = 0
    members: int = 0


def _open_zip(fileobj: BinaryIO, label: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise FileProcessingError(
            label,
            f"'{label}' は ZIP ファイルとして読めません（壊れているか、ZIP ではありません）。",
            code=ErrorCode.FILE_UNREADABLE,
            hint="ダウンロードやコピーが途中で切れていないか確認し、ZIP を作り直してください。",
            details={"reason": f"{type(exc).__name__}: {exc}"},
        ) from exc


def _check_entry(info: zipfile.ZipInfo, path: str, label: str, limits: ArchiveLimits) -> None:
    member = f"'{label}' のメンバー '{path}'"
    if stat.S_ISLNK(info.external_attr >> 16):
        raise unsafe_error(label, f"{member} はシンボリックリンクです。", "symlink", member=path)
    if info.file_size > limits.max_member_bytes:
        raise FileProcessingError(
            label,
            f"{member} は大きすぎます（展開後 {info.file_size:,} バイト、上限 {limits.max_member_bytes:,} バイト）。",
            code=ErrorCode.FILE_TOO_LARGE,
            hint="大きなファイルは ZIP から出して個別に渡すか、分割してください。",
            details={"member": path, "size": info.file_size, "limit": limits.max_member_bytes},
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


def _raw_chunks(fileobj: BinaryIO, info: zipfile.ZipInfo, label: str) -> Iterator[bytes]:
    fileobj.seek(info.header_offset)
    header = fileobj.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    _sig, name_len, extra_len = _LOCAL_HEADER.unpack(header)
    fileobj.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
    left = info.compress_size
    while left > 0:
        chunk = fileobj.read(min(_CHUNK, left))
        if not chunk:
            raise zipfile.BadZipFile("truncated entry data")
        left -= len(chunk)
        yield chunk


def _inflated(
    fileobj: BinaryIO, zf: zipfile.ZipFile, info: zipfile.ZipInfo, label: str
) -> Iterator[bytes]:
    """Decompressed chunks of one entry, each at most ``_CHUNK`` bytes (stream-bounded)."""
    if info.compress_type == zipfile.ZIP_STORED:
        yield from _raw_chunks(fileobj, info, label)
        return
    if info.compress_type == zipfile.ZIP_DEFLATED:
        inflater = zlib.decompressobj(-15)
        for chunk in _raw_chunks(fileobj, info, label):
            data = chunk
            while data and not inflater.eof:
                yield inflater.decompress(data, _CHUNK)
                data = inflater.unconsumed_tail
            if inflater.eof:
                break
        if not inflater.eof:
            raise zipfile.BadZipFile("deflate stream ended early")
        return
    with zf.open(info) as stream:  # bzip2 / lzma: zipfile caps output at the declared size
        while chunk := stream.read(_CHUNK):
            yield chunk


def _read_entry(
    fileobj: BinaryIO,
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    path: str,
    label: str,
    budget: Budget,
) -> bytes:
    limits = budget.limits
    member = f"'{label}' のメンバー '{path}'"
    out = bytearray()
    crc = 0
    try:
        for chunk in _inflated(fileobj, zf, info, label):
            out += chunk
            crc = zlib.crc32(chunk, crc)
            if len(out) > info.file_size:
                raise unsafe_error(
                    label,
                    f"{member} は申告サイズ（{info.file_size:,} バイト）を超えて展開されます。"
                    "サイズ情報が偽装された ZIP 爆弾の疑いがあります。",
                    "size_mismatch",
                    member=path,
                    declared=info.file_size,
                )
            if budget.total_bytes + len(out) > limits.max_total_bytes:
                raise unsafe_error(
                    label,
                    f"{member} の展開中に合計サイズが上限（{limits.max_total_bytes:,} バイト）を超えました。",
                    "total_size",
                    member=path,
                    limit=limits.max_total_bytes,
                )
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        unsupported = isinstance(exc, NotImplementedError)
        raise FileProcessingError(
            label,
            f"{member} を展開できません（"
            + ("未対応の圧縮方式です" if unsupported else "データが壊れています")
            + "）。",
            code=ErrorCode.UNSUPPORTED_FORMAT if unsupported else ErrorCode.FILE_UNREADABLE,
            hint="ZIP を標準の「圧縮（zip 形式）フォルダー」などで作り直してください。",
            details={"member": path, "reason": f"{type(exc).__name__}: {exc}"},
        ) from exc
    if len(out) != info.file_size or crc != info.CRC:
        raise FileProcessingError(
            label,
            f"{member} のデータが壊れています（サイズまたは CRC が一致しません）。",
            code=ErrorCode.FILE_UNREADABLE,
            hint="ダウンロードやコピーが途中で切れていないか確認し、ZIP を作り直してください。",
            details={"member": path, "declared": info.file_size, "actual": len(out)},
        )
    budget.total_bytes += len(out)
    return bytes(out)


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
    encrypted: list[str] = []
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
            encrypted.append(path)
        if path in seen_paths:
            warnings.append(
                f"'{label}' には同じ名前のメンバー '{path}' が複数あります（すべて読みます）。"
            )
        seen_paths.add(path)
        entries.append((info, path))
    if encrypted:
        others = f"（ほか {len(encrypted) - 1} 件）" if len(encrypted) > 1 else ""
        raise FileProcessingError(
            label,
            f"'{label}' のメンバー '{encrypted[0]}'{others} はパスワードで暗号化されていて読めません。",
            code=ErrorCode.FILE_ENCRYPTED,
            hint="パスワードなしの ZIP を作り直して渡してください。",
            details={"members": encrypted},
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
        with _open_zip(fileobj, label) as zf:
            checked_entries(zf, label, Budget(limits), [])
    except FileProcessingError as exc:
        exc.hint = hint
        raise


def read_nested(
    data: bytes,
    label: str,
    path: str,
    full: str,
    budget: Budget,
    depth: int,
    listing: ArchiveListing,
) -> ArchiveListing:
    """Read a ZIP found inside the archive, one level down; deeper nesting is refused."""
    if depth >= budget.limits.max_depth:
        raise unsafe_error(
            label,
            f"'{label}' のメンバー '{path}' は ZIP の中の ZIP で、入れ子が深すぎます"
            f"（上限 {budget.limits.max_depth} 段）。",
            "too_deep",
            member=path,
            max_depth=budget.limits.max_depth,
        )
    inner = read_zip(
        io.BytesIO(data), f"{label}/{path}", budget, depth=depth + 1, prefix=full + "/"
    )
    for member in inner:
        member.from_nested = member.from_nested or full
    listing.warnings.extend(inner.warnings)
    return inner


def is_zip(data: bytes) -> bool:
    """Whether ``data`` opens as a ZIP; a damaged inner ZIP stays a plain member."""
    if not data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return False
    try:
        zipfile.ZipFile(io.BytesIO(data)).close()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
        return False
    return True


def read_zip(
    source: BinaryIO,
    label: str,
    budget: Budget,
    *,
    depth: int = 0,
    prefix: str = "",
) -> ArchiveListing:
    """Check every entry of the ZIP in ``source``, then read them all (see module docstring).

    ``depth`` is the nesting level of this ZIP (0 = the outer one); ``prefix`` is prepended to
    member paths of a nested ZIP. ``budget`` accumulates across nested ZIPs.
    """
    listing = ArchiveListing()
    with _open_zip(source, label) as zf:
        entries = checked_entries(zf, label, budget, listing.warnings)
        for info, path in sorted(entries, key=lambda e: e[1]):
            reason = skip_reason(path)
            if reason:
                listing.warnings.append(f"'{label}' の '{path}' は{reason}のため読み飛ばしました。")
                continue
            data = _read_entry(source, zf, info, path, label, budget)
            full = prefix + path
            if path.lower().endswith(".zip"):
                if is_zip(data):
                    listing.extend(read_nested(data, label, path, full, budget, depth, listing))
                    continue
                listing.warnings.append(
                    f"'{label}' の '{path}' は ZIP として開けないため、1 つのファイルとして扱います。"
                )
            listing.append(ArchiveMember(full, data, len(data), None))
    return listing
