"""Fetch a conversion request's inputs into the run's directory: local paths and S3.

``fetch_sources`` takes a local file, a local directory (walked recursively), ``s3://bucket/key``
or ``s3://bucket/prefix/`` and copies what matches ``files`` (names or glob patterns, matched
case-insensitively against the relative path and the base name) into ``dest_dir``; later steps
and the CodeAct sandbox only ever see those copies.

Limits are checked before any byte moves: at most ``max_files`` files and ``max_bytes`` bytes in
total (``KEIRI_CONVERT_MAX_BYTES`` by default), using the listing's sizes for S3; the copy is
counted again while it streams, so an object that grew in between is stopped too. Names come
from keys and are sanitised (``..``, empty and control-character components removed,
collisions numbered), then confined to ``dest_dir``. Hidden entries (``.name``) and Excel lock
files (``~$name``) are not inputs and are skipped. A pattern that matches nothing is an error,
never a silently smaller result. S3 access and its retry policy live in ``s3``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from keiri_agent.agents.convert.models import FetchedFile, FetchError
from keiri_agent.agents.convert.s3 import (
    CHUNK_BYTES,
    DEFAULT_BACKOFF_S,
    FETCH_RETRIES,
    S3_PAGE_SIZE,
    S3Reader,
    is_s3_url,
    make_s3_client,
)
from keiri_agent.config import DEFAULT_CONVERT_MAX_BYTES, Settings, load_settings
from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of
from keiri_agent.file_access import FileAccess
from keiri_agent.workspace import atomic_path, confine

__all__ = [
    "DEFAULT_BACKOFF_S",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_FILES",
    "FETCH_RETRIES",
    "MAX_WALK_ENTRIES",
    "S3_PAGE_SIZE",
    "fetch_sources",
    "safe_relative_name",
]

DEFAULT_MAX_BYTES = DEFAULT_CONVERT_MAX_BYTES
DEFAULT_MAX_FILES = 200
MAX_WALK_ENTRIES = 100_000  # directory entries looked at before a local walk gives up
MAX_NAME_BYTES = 200  # per path component, under common 255-byte file-system limits

_T = TypeVar("_T")
Log = Callable[[str], None]
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def safe_relative_name(key: str) -> str:
    """A relative POSIX path for a key or file name that cannot leave its directory.

    Backslashes count as separators; empty, ``.`` and ``..`` components are dropped; control
    characters become ``_``; long components are shortened. Never empty.
    """
    parts = []
    for raw in key.replace("\\", "/").split("/"):
        part = _CONTROL.sub("_", raw).strip()
        if part in ("", ".", ".."):
            continue
        while len(part.encode("utf-8")) > MAX_NAME_BYTES:
            stem, suffix = os.path.splitext(part)
            part = (stem[:-1] + suffix) if stem else part[:-1]
        parts.append(part)
    return "/".join(parts) or "unnamed"


def fetch_sources(
    source: str,
    *,
    dest_dir: Path,
    files: Sequence[str] = (),
    settings: Settings | None = None,
    s3_client: Any | None = None,
    max_bytes: int | None = None,
    max_files: int = DEFAULT_MAX_FILES,
    retries: int = FETCH_RETRIES,
    backoff_s: float = DEFAULT_BACKOFF_S,
    page_size: int = S3_PAGE_SIZE,
    access: FileAccess | None = None,
    log: Log | None = None,
) -> list[FetchedFile]:
    """Copy the files of ``source`` that match ``files`` into ``dest_dir`` and describe them.

    ``max_bytes`` defaults to ``KEIRI_CONVERT_MAX_BYTES``; ``s3_client`` replaces the client
    built from ``settings``; ``access`` says where local sources may be read (default:
    anywhere; the API server's tasks read only their own files and the shared data, and only
    the S3 places the operator allows; the files of a folder are matched inside it); ``log`` receives Japanese progress lines. Raises ``FetchError``; on failure the
    files this call already wrote are removed again.
    """
    text = source.strip()
    if not text:
        raise FetchError(
            "入力ファイルの場所が指定されていません。",
            source=source,
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="ローカルのファイル・フォルダーか s3://バケット/フォルダー/ を指定してください。",
        )
    s3 = is_s3_url(text)
    if max_bytes is None:
        settings = settings or load_settings()  # read once: make_s3_client reuses it
        max_bytes = settings.keiri_convert_max_bytes
    dest_dir.mkdir(parents=True, exist_ok=True)
    plan = _Copier(dest_dir, max_bytes, log or (lambda _msg: None))
    try:
        if s3:
            # Read with the server's credentials: only where the operator allows (any for the CLI).
            _allowed(partial((access or FileAccess()).read_s3, text, "source"), text)
            client = s3_client if s3_client is not None else make_s3_client(settings)
            reader = S3Reader(client, text, retries=retries, backoff_s=backoff_s, log=plan.log)
            _fetch_s3(reader, plan, list(files), max_files, page_size)
        elif re.match(r"[a-zA-Z][a-zA-Z0-9+.\-]+://", text):
            raise FetchError(
                f"'{text}' の取得方法には対応していません（対応: ローカルのパス、s3://）。",
                source=text,
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="ファイルをダウンロードしてローカルのパスで指定するか、S3 に置いてください。",
            )
        else:
            _fetch_local(text, plan, list(files), max_files, access or FileAccess())
    except BaseException:
        plan.discard()
        raise
    return plan.fetched


class _Copier:
    """Writes fetched files under ``dest_dir`` within one byte budget, and can undo that."""

    def __init__(self, dest_dir: Path, max_bytes: int, log: Log) -> None:
        self.dest_dir = dest_dir
        self.max_bytes = max_bytes
        self.log = log
        self.fetched: list[FetchedFile] = []
        self._used: set[str] = set()
        self._made_dirs: list[Path] = []

    @property
    def remaining(self) -> int:
        return self.max_bytes - sum(f.size for f in self.fetched)

    def check_totals(self, source: str, sizes: Sequence[int], max_files: int) -> None:
        if len(sizes) > max_files:
            raise _too_many(source, max_files)
        total = sum(sizes)
        if total > self.max_bytes:
            raise _too_large(
                source,
                f"'{source}' のファイルは合計 {_mb(total)} で、上限 {_mb(self.max_bytes)}"
                " を超えるため取得しません。",
                "ファイル名のパターンで対象を絞るか、KEIRI_CONVERT_MAX_BYTES を大きくしてください。",
                bytes=total,
                limit=self.max_bytes,
                files=len(sizes),
            )

    def target_for(self, rel: str) -> tuple[str, Path]:
        name = safe_relative_name(rel)
        stem, suffix = os.path.splitext(name)
        n = 1
        while name.casefold() in self._used:
            n += 1
            name = f"{stem}-{n}{suffix}"
        self._used.add(name.casefold())
        target = confine(self.dest_dir, name)
        missing = [d for d in reversed(target.parents) if d.is_relative_to(self.dest_dir)]
        self._made_dirs.extend(d for d in missing if not d.exists())
        target.parent.mkdir(parents=True, exist_ok=True)
        return name, target

    def write(self, source: str, name: str, target: Path, chunks: Iterable[bytes]) -> None:
        """Stream ``chunks`` into ``target`` atomically, stopping at the remaining budget."""
        limit = self.remaining
        size = 0
        try:
            with atomic_path(target, suffix=".part") as tmp, tmp.open("wb") as out:
                for chunk in chunks:
                    size += len(chunk)
                    if size > limit:
                        raise _too_large(
                            source,
                            f"'{source}' の取得中に上限 {_mb(self.max_bytes)} を超えたため中止しました。",
                            "対象を絞るか、KEIRI_CONVERT_MAX_BYTES を大きくしてください。",
                            limit=self.max_bytes,
                        )
                    out.write(chunk)
        except OSError as exc:
            raise FetchError(
                f"'{source}' を '{target}' に保存できません（{reason_of(exc)}）。",
                source=source,
                code=ErrorCode.FILE_UNREADABLE,
                hint="読み取り権限と、保存先のディスクの空き容量を確認してください。",
                details={"error": cause_of(exc)},
            ) from exc
        self.fetched.append(FetchedFile(name=name, path=target, size=size, source=source))

    def discard(self) -> None:
        """Remove what this call wrote: the files, then the folders it created, if empty."""
        for item in self.fetched:
            item.path.unlink(missing_ok=True)
        self.fetched.clear()
        for folder in reversed(self._made_dirs):
            with contextlib.suppress(OSError):  # not empty: something else lives there now
                folder.rmdir()


def _fetch_local(
    text: str, plan: _Copier, patterns: list[str], max_files: int, access: FileAccess
) -> None:
    real = Path(os.path.realpath(_allowed(partial(access.read, text, "source"), text)))
    if real.is_file():
        candidates = [(real.name, real)]
    elif real.is_dir():
        candidates = list(_walk(real, text))
    else:
        raise FetchError(
            f"'{text}' が見つかりません。"
            if not real.exists()
            else f"'{text}' は通常のファイルでもフォルダーでもありません。",
            source=text,
            code=ErrorCode.FILE_UNREADABLE,
            hint="パスの綴りと保存場所を確認してください（フォルダーを指定するとその中のファイルを使います）。",
        )
    chosen = _select(candidates, patterns, text, max_files)
    for rel, file in chosen:
        if real.is_dir() and not Path(os.path.realpath(file)).is_relative_to(real):
            raise FetchError(
                f"'{rel}' はフォルダー '{text}' の外を指すリンクのため読み込みません。",
                source=str(file),
                code=ErrorCode.PERMISSION_DENIED,
                hint="リンクではなく実際のファイルをフォルダーに置いてください。",
            )
    plan.check_totals(text, [file.stat().st_size for _rel, file in chosen], max_files)
    for rel, file in chosen:
        name, target = plan.target_for(rel)
        plan.write(str(file), name, target, _read_chunks(file))
    plan.log(f"ローカル {text}: {len(chosen)} 件を取得しました")


def _allowed(check: Callable[[], _T], text: str) -> _T:
    """``check()``'s answer, or its refusal (outside what the task may read, never saying
    where that is or whether it exists) as a FetchError."""
    try:
        return check()
    except BlockError as exc:
        refused = exc.code == ErrorCode.PERMISSION_DENIED
        raise FetchError(
            exc.message,
            source=text,
            code=exc.code if refused else ErrorCode.FILE_UNREADABLE,
            hint=exc.hint,
            details=exc.details,
        ) from exc


def _fetch_s3(
    reader: S3Reader, plan: _Copier, patterns: list[str], max_files: int, page_size: int
) -> None:
    # Without patterns the listing itself can stop at max_files + 1 objects.
    objects = reader.list(page_size, max_objects=None if patterns else max_files)
    visible = (o for o in objects if not any(_skipped(part) for part in o.rel.split("/")))
    chosen = _select(((o.rel, o) for o in visible), patterns, reader.url, max_files)
    sizes = [o.size for _rel, o in chosen]
    plan.check_totals(reader.url, sizes, max_files)
    plan.log(f"S3 {reader.url}: {len(chosen)} 件（{_mb(sum(sizes))}）を取得します")
    for rel, obj in chosen:
        name, target = plan.target_for(rel)
        source = f"s3://{reader.bucket}/{obj.key}"
        reader.download(obj.key, partial(plan.write, source, name, target))


def _read_chunks(file: Path) -> Iterator[bytes]:
    with file.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            yield chunk


def _walk(root: Path, text: str) -> Iterator[tuple[str, Path]]:
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not _skipped(d))
        for filename in sorted(filenames):
            seen += 1
            if seen > MAX_WALK_ENTRIES:
                raise _too_large(
                    text,
                    f"フォルダー '{text}' のファイルが多すぎます（{MAX_WALK_ENTRIES:,} 件超）。",
                    "対象のファイルだけを入れたフォルダーを指定してください。",
                )
            if not _skipped(filename):
                file = Path(dirpath) / filename
                yield file.relative_to(root).as_posix(), file


def _skipped(part: str) -> bool:
    """Hidden entries and Excel's lock files are never inputs ("." and ".." are sanitised)."""
    return (part.startswith(".") and part not in (".", "..")) or part.startswith("~$")


def _matches(rel: str, pattern: str) -> bool:
    folded, pat = rel.casefold(), pattern.strip().casefold()
    return fnmatch.fnmatchcase(folded, pat) or fnmatch.fnmatchcase(PurePosixPath(folded).name, pat)


def _select(
    candidates: Iterable[tuple[str, _T]], patterns: list[str], source: str, max_files: int
) -> list[tuple[str, _T]]:
    """The candidates matching any pattern (all when none); every pattern must match."""
    chosen: list[tuple[str, _T]] = []
    hit: set[str] = set()
    for rel, item in candidates:
        matched = [p for p in patterns if _matches(rel, p)]
        if patterns and not matched:
            continue
        hit.update(matched)
        chosen.append((rel, item))
        if len(chosen) > max_files:
            raise _too_many(source, max_files)
    missing = [p for p in patterns if p not in hit]
    if missing or not chosen:
        raise FetchError(
            f"'{source}' に {'、'.join(missing)} に当たるファイルがありません。"
            if missing
            else f"'{source}' に読み込めるファイルがありません（空のフォルダーです）。",
            source=source,
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="ファイル名（*.csv などのパターンも可）と場所を確認してください。",
            details={"unmatched": missing},
        )
    return chosen


def _too_many(source: str, max_files: int) -> FetchError:
    return _too_large(
        source,
        f"'{source}' のファイルが多すぎます（上限 {max_files} 件）。",
        "ファイル名のパターン（例: 2024-*.csv）で対象を絞ってください。",
        max_files=max_files,
    )


def _too_large(source: str, message: str, hint: str, **details: Any) -> FetchError:
    """The FILE_TOO_LARGE refusal of ``source``: past a size or file-count limit."""
    return FetchError(
        message, source=source, code=ErrorCode.FILE_TOO_LARGE, hint=hint, details=details
    )


def _mb(size: int) -> str:
    return f"{size / 2**20:,.1f} MB"
