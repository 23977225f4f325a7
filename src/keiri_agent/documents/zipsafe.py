"""Reading ZIP archives in memory without trusting them.

Every entry is checked by ``zipcheck`` (paths, symlinks, sizes, ratios, encryption, counts)
before a single byte is decompressed. Declared sizes can lie, so stored and deflated entries
are then decompressed here from the raw stream, chunk by chunk, with a byte counter checked
against the declared size and the limits (other methods go through ``zipfile`` with the same
counter), and refused with ``FileProcessingError`` naming the entry:

* ARCHIVE_UNSAFE: an entry that inflates past its declared size or past ``max_total_bytes``,
  or a ZIP nested deeper than ``max_depth``;
* UNSUPPORTED_FORMAT: a compression method ``zipfile`` does not know;
* FILE_UNREADABLE: truncated or corrupt data (CRC or size mismatch).

Nothing is written to disk.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import BinaryIO

from keiri_agent.documents.failures import exception_reason, unreadable, unsupported
from keiri_agent.documents.zipcheck import Budget, checked_entries, is_zip, open_zip
from keiri_agent.documents.zipnames import skip_reason, unsafe_error

__all__ = ["ArchiveListing", "ArchiveMember", "read_nested", "read_zip"]

_CHUNK = 64 * 1024
_LOCAL_HEADER = struct.Struct("<4s22xHH")


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
        unknown_method = isinstance(exc, NotImplementedError)
        refuse = unsupported if unknown_method else unreadable
        raise refuse(
            label,
            f"{member} を展開できません（"
            + ("未対応の圧縮方式です" if unknown_method else "データが壊れています")
            + "）。",
            "ZIP を標準の「圧縮（zip 形式）フォルダー」などで作り直してください。",
            member=path,
            reason=exception_reason(exc),
        ) from exc
    if len(out) != info.file_size or crc != info.CRC:
        raise unreadable(
            label,
            f"{member} のデータが壊れています（サイズまたは CRC が一致しません）。",
            "ダウンロードやコピーが途中で切れていないか確認し、ZIP を作り直してください。",
            member=path,
            declared=info.file_size,
            actual=len(out),
        )
    budget.total_bytes += len(out)
    return bytes(out)


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
    with open_zip(source, label) as zf:
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
