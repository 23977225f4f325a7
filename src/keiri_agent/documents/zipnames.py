"""Names of ZIP entries: decoding them as their makers meant, and refusing dangerous paths.

With the UTF-8 flag (general-purpose bit 11) a name is UTF-8. Without it, ``zipfile`` has
decoded the raw bytes as CP437; they are recovered and decoded from the Info-ZIP Unicode Path
field when present, else tried as UTF-8 (macOS and Linux tools write UTF-8 without the flag),
then as CP932 (Windows' "compressed folder"). CP437 is the last resort and produces a warning.
Names are NFC-normalized (macOS writes NFD). CP932 trail bytes equal to 0x5C ("表", "ソ") are
decoded before any separator is looked at, so they never become a backslash.

``safe_member_path`` refuses names that could lead outside an extraction directory, even
though nothing is extracted to disk: the same archive may be unpacked by other tools later.
"""

from __future__ import annotations

import struct
import unicodedata
import zipfile
import zlib

from keiri_agent.documents.failures import unsafe
from keiri_agent.errors import FileProcessingError

__all__ = [
    "SKIPPED_NAMES",
    "decode_member_name",
    "safe_member_path",
    "skip_reason",
    "unsafe_error",
]

SKIPPED_NAMES = frozenset({".ds_store", "thumbs.db", "desktop.ini"})
_UTF8_FLAG = 0x800
_UNICODE_PATH_EXTRA = 0x7075
_UNSAFE_HINT = (
    "この ZIP は安全に展開できません。作成元に確認し、通常の方法で作り直した ZIP を使ってください。"
)


def unsafe_error(label: str, message: str, reason: str, **details: object) -> FileProcessingError:
    return unsafe(label, message, _UNSAFE_HINT, reason=reason, **details)


def skip_reason(path: str) -> str | None:
    """Why ``path`` is operating-system clutter that is not evidence, or None."""
    parts = path.split("/")
    if "__MACOSX" in parts[:-1]:
        return "macOS の付随データ（__MACOSX）"
    name = parts[-1]
    if name.lower() in SKIPPED_NAMES:
        return f"OS が作る管理ファイル（{name}）"
    if name.startswith("._"):
        return "macOS の付随データ（._ ファイル）"
    return None


def safe_member_path(name: str, label: str) -> str:
    """``name`` as a normalized relative POSIX path, or ARCHIVE_UNSAFE if it could escape."""
    member = f"'{label}' のメンバー '{name}'"
    if "\x00" in name:
        raise unsafe_error(
            label, f"{member} の名前に NUL 文字が含まれています。", "nul", member=name
        )
    path = name.replace("\\", "/")
    if path.startswith("/"):
        raise unsafe_error(
            label, f"{member} は絶対パスです（展開先の外を指します）。", "absolute", member=name
        )
    if len(path) >= 2 and path[1] == ":" and path[0].isalpha():
        raise unsafe_error(
            label,
            f"{member} はドライブ名付きのパスです（展開先の外を指します）。",
            "drive",
            member=name,
        )
    parts = path.split("/")
    if ".." in parts:
        raise unsafe_error(
            label,
            f"{member} は '..' を含み、展開先の外を指します（Zip Slip）。",
            "parent_reference",
            member=name,
        )
    return "/".join(p for p in parts if p not in ("", "."))


def _unicode_path_extra(info: zipfile.ZipInfo, raw: bytes) -> str | None:
    extra = info.extra
    pos = 0
    while pos + 4 <= len(extra):
        kind, size = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4 : pos + 4 + size]
        pos += 4 + size
        if kind == _UNICODE_PATH_EXTRA and len(body) > 5 and body[0] == 1:
            (crc,) = struct.unpack_from("<I", body, 1)
            if crc == zlib.crc32(raw):
                try:
                    return body[5:].decode("utf-8")
                except UnicodeDecodeError:
                    return None
    return None


def decode_member_name(info: zipfile.ZipInfo) -> tuple[str, str | None]:
    """The entry's real name and, when it had to be guessed as CP437, a warning."""
    if info.flag_bits & _UTF8_FLAG:
        return unicodedata.normalize("NFC", info.orig_filename), None
    raw = info.orig_filename.encode("cp437")  # zipfile decoded the raw bytes as CP437
    name = _unicode_path_extra(info, raw)
    if name is None:
        for codec in ("utf-8", "cp932"):
            try:
                name = raw.decode(codec)
                break
            except UnicodeDecodeError:
                continue
    if name is None:
        return info.orig_filename, (
            f"メンバー名 '{info.orig_filename}' の文字コードを判別できず、CP437 として読みました"
            "（文字化けしている可能性があります）。"
        )
    return unicodedata.normalize("NFC", name), None
