"""Reading one input (a path or its bytes) with the file layer's checks and Japanese errors.

Every reader that takes "a path or bytes" goes through ``read_source``: a missing path, a
directory, an unreadable file and a file over the size limit all become ``FileProcessingError``s
naming the file, before any parser sees the data.
"""

from __future__ import annotations

from pathlib import Path

from keiri_agent.documents.failures import exception_reason, file_not_found, too_large, unreadable
from keiri_agent.documents.limits import MAX_FILE_BYTES
from keiri_agent.errors import FileProcessingError

__all__ = ["file_too_large", "read_source"]

DEFAULT_TOO_LARGE_HINT = (
    "必要な部分（ページ・シート・期間など）だけを別ファイルに分けてから渡してください。"
)


def file_too_large(
    label: str, size: int, limit: int, hint: str = DEFAULT_TOO_LARGE_HINT
) -> FileProcessingError:
    return too_large(
        label,
        f"「{label}」は大きすぎるため読み込めません（{size / 2**20:,.1f} MB、上限 {limit / 2**20:,.0f} MB）。",
        hint,
        bytes=size,
        limit=limit,
    )


def read_source(
    source: Path | str | bytes,
    *,
    label: str,
    max_bytes: int = MAX_FILE_BYTES,
    too_large_hint: str = DEFAULT_TOO_LARGE_HINT,
) -> bytes:
    """The bytes of ``source`` (a path, or the bytes themselves), at most ``max_bytes``."""
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        if len(data) > max_bytes:
            raise file_too_large(label, len(data), max_bytes, too_large_hint)
        return data
    path = Path(source)
    try:
        if path.is_dir():
            raise IsADirectoryError(str(path))
        size = path.stat().st_size
        if size > max_bytes:
            raise file_too_large(label, size, max_bytes, too_large_hint)
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise file_not_found(label, path) from exc
    except OSError as exc:
        raise unreadable(
            label,
            f"「{label}」を開けません（{_os_reason(exc)}）。",
            "フォルダーではなくファイルを指定しているか、読み取り権限があるか確認してください。",
            path=str(path),
            reason=exception_reason(exc),
        ) from exc


# Why a path could not be opened, as the person can act on it (the class stays in the details).
_OS_REASONS: tuple[tuple[type[OSError], str], ...] = (
    (IsADirectoryError, "ファイルではなくフォルダーです"),
    (PermissionError, "読み取りの権限がありません"),
)


def _os_reason(exc: OSError) -> str:
    return next(
        (words for kind, words in _OS_REASONS if isinstance(exc, kind)),
        "読み込み中にエラーが発生しました",
    )
