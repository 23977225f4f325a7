"""In-memory ZIPs for the archive tests: Windows-made, macOS-made, and hostile ones.

``zipfile`` cannot write what these tests need (names in raw CP932 bytes without the UTF-8
flag, sizes that lie, symlink entries from a crafted header, ZipCrypto encryption), so
:func:`build_zip` writes the ZIP format itself: local headers, central directory, end record.
The encrypted entry is real traditional PKWARE encryption (ZipCrypto), so ``zipfile`` itself
can decrypt it with the password, which the tests use to prove the corpus is valid.
"""

from __future__ import annotations

import io
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass

__all__ = [
    "EVIDENCE_TREE",
    "Entry",
    "bomb_zip",
    "build_zip",
    "cp932_evidence_zip",
    "encrypted_zip",
    "lying_size_zip",
    "nested_zip",
    "simple_zip",
    "symlink_zip",
    "zipcrypto_encrypt",
]

# Evidence as a Windows user zips it: groups (first-level folders), files at any depth below.
EVIDENCE_TREE: dict[str, str] = {
    "A社/請求書_2024年4月.txt": "請求書 A社 金額 10,000円",
    "A社/明細/納品書①.txt": "納品書 A社 ｶﾀｶﾅ 表示 ソフト",
    "B社（髙橋）/見積書.txt": "見積書 B社 髙橋様 ～ 20,000円",
    "表計算ソフト一覧.txt": "ルートにあるファイル",
}

_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_END = struct.Struct("<4sHHHHIIH")
_DOS_TIME = (12 << 11) | (30 << 5)
_DOS_DATE = ((2024 - 1980) << 9) | (4 << 5) | 1


@dataclass
class Entry:
    """One ZIP entry as written by :func:`build_zip` (raw name bytes, exact header fields)."""

    name: bytes
    data: bytes = b""
    method: int = zipfile.ZIP_DEFLATED
    flags: int = 0
    external_attr: int = 0
    create_system: int = 0  # 0 = MS-DOS/Windows, 3 = Unix
    declared_size: int | None = None  # lie about the uncompressed size
    crc: int | None = None  # lie about the CRC
    password: bytes | None = None  # ZipCrypto-encrypt with this password
    extra: bytes = b""


def _crc_byte(crc: int, byte: int) -> int:
    # PKWARE's CRC32 step is zlib's CRC32 without the pre/post inversion.
    return zlib.crc32(bytes([byte]), crc ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


def zipcrypto_encrypt(payload: bytes, password: bytes, crc: int) -> bytes:
    """Traditional PKWARE encryption of ``payload`` (already compressed), with its header."""
    keys = [0x12345678, 0x23456789, 0x34567890]

    def update(byte: int) -> None:
        keys[0] = _crc_byte(keys[0], byte)
        keys[1] = ((keys[1] + (keys[0] & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        keys[2] = _crc_byte(keys[2], (keys[1] >> 24) & 0xFF)

    def stream_byte() -> int:
        temp = (keys[2] | 2) & 0xFFFF
        return ((temp * (temp ^ 1)) >> 8) & 0xFF

    for byte in password:
        update(byte)
    header = bytes(range(1, 12)) + bytes([(crc >> 24) & 0xFF])
    out = bytearray()
    for byte in header + payload:
        out.append(byte ^ stream_byte())
        update(byte)
    return bytes(out)


def build_zip(entries: list[Entry]) -> bytes:
    """A ZIP with exactly these entries and header fields."""
    out = io.BytesIO()
    central = bytearray()
    for entry in entries:
        crc = zlib.crc32(entry.data) if entry.crc is None else entry.crc
        if entry.method == zipfile.ZIP_DEFLATED:
            packer = zlib.compressobj(9, zlib.DEFLATED, -15)
            payload = packer.compress(entry.data) + packer.flush()
        else:
            payload = entry.data
        flags = entry.flags
        if entry.password is not None:
            payload = zipcrypto_encrypt(payload, entry.password, crc)
            flags |= 0x1
        size = len(entry.data) if entry.declared_size is None else entry.declared_size
        offset = out.tell()
        fields = (20, flags, entry.method, _DOS_TIME, _DOS_DATE, crc, len(payload), size)
        out.write(_LOCAL.pack(b"PK\x03\x04", *fields, len(entry.name), len(entry.extra)))
        out.write(entry.name + entry.extra + payload)
        central += _CENTRAL.pack(
            b"PK\x01\x02",
            (entry.create_system << 8) | 20,
            *fields,
            len(entry.name),
            len(entry.extra),
            0,
            0,
            0,
            entry.external_attr,
            offset,
        )
        central += entry.name + entry.extra
    start = out.tell()
    out.write(central)
    out.write(_END.pack(b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), start, 0))
    return out.getvalue()


def simple_zip(files: dict[str, bytes | str]) -> bytes:
    """A ZIP written by ``zipfile`` (UTF-8 names with the flag, as modern tools do)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data.encode("utf-8") if isinstance(data, str) else data)
    return out.getvalue()


def cp932_evidence_zip(extra: list[Entry] | None = None) -> bytes:
    """EVIDENCE_TREE zipped like Windows' "compressed folder": CP932 names, no UTF-8 flag,
    directory entries, CP932 file contents."""
    entries = [Entry("A社/".encode("cp932"), method=zipfile.ZIP_STORED, external_attr=0x10)]
    for name, text in EVIDENCE_TREE.items():
        entries.append(Entry(name.encode("cp932"), text.encode("cp932")))
    return build_zip(entries + (extra or []))


def bomb_zip(megabytes: int = 50) -> bytes:
    """One entry of ``megabytes`` MB of zeros, deflated about 1000:1."""
    return build_zip([Entry(b"bomb.txt", b"\x00" * (megabytes * 1024 * 1024))])


def lying_size_zip(megabytes: int = 5, declared: int = 1000) -> bytes:
    """An entry that declares ``declared`` bytes but inflates to ``megabytes`` MB."""
    data = b"\x00" * (megabytes * 1024 * 1024)
    return build_zip([Entry(b"small.txt", data, declared_size=declared)])


def symlink_zip(target: bytes = b"/etc/passwd") -> bytes:
    """A Unix symlink entry (mode S_IFLNK in the high 16 bits of external_attr)."""
    mode = (stat.S_IFLNK | 0o777) << 16
    return build_zip(
        [
            Entry(b"ok.txt", b"fine"),
            Entry(b"link", target, method=zipfile.ZIP_STORED, external_attr=mode, create_system=3),
        ]
    )


def encrypted_zip(password: bytes = b"secret") -> bytes:
    """One plain entry and one ZipCrypto-encrypted entry named in CP932."""
    return build_zip(
        [
            Entry(b"plain.txt", b"visible"),
            Entry("給与/明細.txt".encode("cp932"), "極秘".encode("cp932"), password=password),
        ]
    )


def nested_zip(levels: int = 1) -> bytes:
    """``levels`` ZIPs inside the outer one: 1 is allowed, 2 is too deep."""
    inner = simple_zip({"内訳.txt": "入れ子の中身", "sub/明細.txt": "さらに下"})
    for _ in range(levels - 1):
        inner = simple_zip({"deeper.zip": inner})
    return simple_zip({"A社/まとめ.zip": inner, "A社/表紙.txt": "表紙"})
