"""How the file layer refuses a file: one constructor per error code a user can act on.

Every reader refuses a file with a ``FileProcessingError`` that names it, says in Japanese
what is wrong and hints at what to do; the code says which kind of problem it is (the file
cannot be read, is locked, is too large, is of a format that is not read, is unsafe to open,
or the caller asked for something that is not there). A reader names only what differs from
one refusal to the next: ``unreadable(name, message, hint, detail=value, ...)``. Texts that
several readers give for the same situation live here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from keiri_agent.errors import ErrorCode, FileProcessingError

__all__ = [
    "PASSWORD_PROTECTED",
    "RESAVE_HINT",
    "encrypted",
    "exception_reason",
    "file_not_found",
    "invalid_input",
    "too_large",
    "unreadable",
    "unsafe",
    "unsupported",
]

# ``.format(name=...)``: a PDF or Office file that asks for a password before it opens.
PASSWORD_PROTECTED = "「{name}」はパスワードで保護されているため読み込めません。"
# A file its own application may still open: saving it again usually repairs it.
RESAVE_HINT = "元のアプリケーションで開けるか確認し、開ける場合は名前を付けて保存し直してください。"
MAX_REASON_CHARS = 200  # characters of a library's exception message kept in the details


class Refusal(Protocol):
    def __call__(
        self, file: str, message: str, hint: str, /, **details: Any
    ) -> FileProcessingError: ...


def _refusal(code: ErrorCode) -> Refusal:
    def refuse(file: str, message: str, hint: str, /, **details: Any) -> FileProcessingError:
        return FileProcessingError(file, message, code=code, hint=hint, details=details)

    return refuse


unreadable = _refusal(ErrorCode.FILE_UNREADABLE)
encrypted = _refusal(ErrorCode.FILE_ENCRYPTED)
too_large = _refusal(ErrorCode.FILE_TOO_LARGE)
unsupported = _refusal(ErrorCode.UNSUPPORTED_FORMAT)
unsafe = _refusal(ErrorCode.ARCHIVE_UNSAFE)
invalid_input = _refusal(ErrorCode.INPUT_VALIDATION_FAILED)


def exception_reason(exc: BaseException) -> str:
    """A library's exception as the details of a refusal keep it (its class and message, cut):
    for the engineer reading the details, never for the Japanese message."""
    return f"{type(exc).__name__}: {str(exc)[:MAX_REASON_CHARS]}"


def file_not_found(label: str, path: Path) -> FileProcessingError:
    """The one error for a document the user named that is not there (``label``: its name as
    shown; the path goes to the details only)."""
    return unreadable(
        label,
        f"「{label}」が見つかりません。",
        "ファイル名と保存場所を確認してください。",
        path=str(path),
    )
