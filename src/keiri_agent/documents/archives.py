"""Evidence archives: a ZIP or a folder read as groups of files (``file.parse_zip_2tier``).

Seed 002 §5: the first-level folders of the archive are *groups* (one per customer, month,
case...) and the files inside them, at any depth, are that group's evidence. Files directly
at the archive root belong to the group ``""`` (``ROOT_GROUP``; the UI shows it as
``ROOT_GROUP_LABEL``). A ZIP inside the archive is expanded one level, under its own path:
``"A/inner.zip/x.pdf"`` belongs to group ``"A"``; a ZIP at the root, ``"inner.zip/x.pdf"``, is
the group ``"inner.zip"``.

A folder is read exactly like the ZIP made from it (same skip list, limits and nesting), so
``parse_folder_2tier(d)`` and ``parse_zip_2tier(<zip of d>)`` give the same groups. Symbolic
links, sockets and devices in a folder are skipped with a warning, never followed.

Safety (zip-slip, symlinks, bombs, encryption) is ``zipcheck`` and ``zipsafe``'s job; a refusal stops the whole
archive. Text extraction is per file: a file that cannot be read gets its ``BlockError`` in
``EvidenceFile.error`` and ``EvidenceSet.errors``, and every other file still comes out.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from keiri_agent.documents.failures import file_not_found, too_large, unreadable
from keiri_agent.documents.models import ExtractedText
from keiri_agent.documents.zipcheck import ArchiveLimits, Budget, is_zip
from keiri_agent.documents.zipnames import skip_reason
from keiri_agent.documents.zipsafe import ArchiveListing, ArchiveMember, read_nested, read_zip
from keiri_agent.errors import BlockError, FileProcessingError, cause_of, reason_of

__all__ = [
    "ROOT_GROUP",
    "ROOT_GROUP_LABEL",
    "ArchiveLimits",
    "ArchiveListing",
    "ArchiveMember",
    "EvidenceFile",
    "EvidenceSet",
    "folder_not_found",
    "folder_unreadable",
    "open_archive",
    "open_folder",
    "parse_folder_2tier",
    "parse_zip_2tier",
]

ROOT_GROUP = ""
ROOT_GROUP_LABEL = "(ルート)"
UNNAMED_ARCHIVE = "（名前なしの ZIP）"


@dataclass
class EvidenceFile:
    """One evidence file: where it sits, its bytes, and its text or why there is none."""

    group: str
    path: str
    name: str
    size: int
    sha256: str
    data: bytes = field(repr=False, compare=False)
    text: ExtractedText | None = None
    error: dict[str, Any] | None = None
    from_nested: str | None = None

    @property
    def ext(self) -> str:
        return PurePosixPath(self.name).suffix.lower()

    def to_record(self, *, include_text: bool = True) -> dict[str, Any]:
        """JSON-friendly form (no bytes) for blocks, prompts and run logs."""
        record: dict[str, Any] = {
            "group": self.group,
            "path": self.path,
            "name": self.name,
            "ext": self.ext,
            "size": self.size,
            "sha256": self.sha256,
            "from_nested": self.from_nested,
            "format": self.text.format if self.text else None,
            "chars": self.text.chars if self.text else 0,
            "truncated": self.text.truncated if self.text else False,
            "warnings": list(self.text.warnings) if self.text else [],
            "error": self.error,
        }
        if include_text:
            record["text"] = self.text.text if self.text else None
        return record


@dataclass
class EvidenceSet:
    """An archive read as groups of evidence files (see the module docstring)."""

    source: str
    groups: dict[str, list[EvidenceFile]] = field(default_factory=dict)
    files: list[EvidenceFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    def to_records(self, *, include_text: bool = True) -> list[dict[str, Any]]:
        return [f.to_record(include_text=include_text) for f in self.files]

    def to_dict(self, *, include_text: bool = True) -> dict[str, Any]:
        """The block output: ``files`` (records), ``groups`` (group → paths), counts, problems."""
        return {
            "source": self.source,
            "total_files": len(self.files),
            "total_size": self.total_size,
            "groups": {g: [f.path for f in files] for g, files in self.groups.items()},
            "files": self.to_records(include_text=include_text),
            "warnings": list(self.warnings),
            "errors": list(self.errors),
        }


def _load_zip(source: Path | str | bytes, name: str | None) -> tuple[BinaryIO, str]:
    if isinstance(source, bytes | bytearray | memoryview):
        return io.BytesIO(bytes(source)), name or UNNAMED_ARCHIVE
    path = Path(source)
    label = name or path.name
    if not path.is_file():
        raise file_not_found(label, path)
    return open(path, "rb"), label  # closed by the caller


def open_archive(
    source: Path | str | bytes,
    *,
    name: str | None = None,
    limits: ArchiveLimits = ArchiveLimits(),  # noqa: B008 -- frozen, shared safely
) -> ArchiveListing:
    """Every file of a ZIP (path or bytes), checked and read in memory; nested ZIPs expanded.

    Raises ``FileProcessingError`` (ARCHIVE_UNSAFE, FILE_ENCRYPTED, FILE_TOO_LARGE,
    FILE_UNREADABLE) before returning anything when any entry is refused.
    """
    fileobj, label = _load_zip(source, name)
    with fileobj:
        return read_zip(fileobj, label, Budget(limits))


def open_folder(
    path: Path | str,
    *,
    limits: ArchiveLimits = ArchiveLimits(),  # noqa: B008 -- frozen, shared safely
) -> ArchiveListing:
    """Every regular file under ``path`` (paths relative to it), read like a ZIP's members."""
    root = Path(path)
    label = root.name or str(root)
    if not root.is_dir() or root.is_symlink():
        raise folder_not_found(root)
    budget = Budget(limits)
    listing = ArchiveListing()
    for rel, full in _walk(root, "", listing, label):
        reason = skip_reason(rel)
        if reason:
            listing.warnings.append(f"'{label}' の '{rel}' は{reason}のため読み飛ばしました。")
            continue
        budget.members += 1
        if budget.members > limits.max_members:
            raise _too_large(label, f"ファイル数が多すぎます（上限 {limits.max_members:,} 件）")
        data = _read_regular(full, rel, label, limits)
        budget.total_bytes += len(data)
        if budget.total_bytes > limits.max_total_bytes:
            raise _too_large(
                label, f"ファイルの合計サイズが上限（{limits.max_total_bytes:,} バイト）を超えます"
            )
        if rel.lower().endswith(".zip"):
            # The folder plays the outer archive (depth 0): a ZIP in it is nested one level.
            if is_zip(data):
                listing.extend(read_nested(data, label, rel, rel, budget, 0, listing))
                continue
            listing.warnings.append(
                f"'{label}' の '{rel}' は ZIP として開けないため、1 つのファイルとして扱います。"
            )
        listing.append(ArchiveMember(rel, data, len(data), None))
    return listing


def _too_large(label: str, what: str) -> FileProcessingError:
    return too_large(
        label, f"フォルダ '{label}' の{what}。", "フォルダを分けて、少しずつ処理してください。"
    )


def folder_not_found(path: Path) -> FileProcessingError:
    """The one error for a folder the user named that is not there (or is not a folder)."""
    return unreadable(
        path.name or str(path),
        f"フォルダ '{path}' が見つかりません（またはフォルダではありません）。",
        "フォルダのパス（綴り・場所）を確認してください。",
        path=str(path),
    )


def folder_unreadable(label: str, rel: str, exc: OSError) -> FileProcessingError:
    """The one error for a folder, or an entry below it (``rel``), that cannot be listed or
    read while a folder is walked (evidence folders, ``file.list_folder``)."""
    return unreadable(
        label,
        f"フォルダ '{label}' の '{rel or '.'}' を読めません（{reason_of(exc)}）。",
        "ファイルやフォルダのアクセス権限を確認してください。",
        member=rel,
        reason=cause_of(exc),
    )


def _walk(
    directory: Path, prefix: str, listing: ArchiveListing, label: str
) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        raise folder_unreadable(label, prefix.rstrip("/"), exc) from exc
    for entry in entries:
        rel = prefix + entry.name
        if entry.is_symlink():
            listing.warnings.append(
                f"'{rel}' はシンボリックリンクのため読み飛ばしました（リンク先は読みません）。"
            )
        elif entry.is_dir(follow_symlinks=False):
            found.extend(_walk(Path(entry.path), rel + "/", listing, label))
        elif entry.is_file(follow_symlinks=False):
            found.append((rel, Path(entry.path)))
        else:
            listing.warnings.append(
                f"'{rel}' は通常のファイルではない（デバイスやソケットなど）ため読み飛ばしました。"
            )
    return found


def _read_regular(path: Path, rel: str, label: str, limits: ArchiveLimits) -> bytes:
    """Read a regular file without following a symlink swapped in after the walk."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise folder_unreadable(label, rel, exc) from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise unreadable(
                label,
                f"'{rel}' は通常のファイルではないため読めません。",
                "フォルダには通常のファイルだけを入れてください。",
                member=rel,
            )
        if info.st_size > limits.max_member_bytes:
            raise _too_large(
                label,
                f"'{rel}' が大きすぎます（{info.st_size:,} バイト、上限 {limits.max_member_bytes:,} バイト）",
            )
        data = handle.read(limits.max_member_bytes + 1)
    if len(data) > limits.max_member_bytes:  # grew after fstat
        raise _too_large(
            label, f"'{rel}' が大きすぎます（上限 {limits.max_member_bytes:,} バイト）"
        )
    return data


def _group_of(path: str) -> str:
    head, sep, _rest = path.partition("/")
    return head if sep else ROOT_GROUP


def build_evidence(listing: ArchiveListing, source: str, *, extract: bool) -> EvidenceSet:
    """Group members by first-level folder and (optionally) extract each one's text."""
    evidence = EvidenceSet(source=source, warnings=list(listing.warnings))
    extractor: Callable[..., ExtractedText] | None = None
    if extract:
        # Imported late: extraction pulls in the PDF and Office readers.
        from keiri_agent.documents.extract import extract_text

        extractor = extract_text
    for member in listing:
        group = _group_of(member.path)
        item = EvidenceFile(
            group=group,
            path=member.path,
            name=member.name,
            size=member.size,
            sha256=hashlib.sha256(member.data).hexdigest(),
            data=member.data,
            from_nested=member.from_nested,
        )
        if extractor is not None:
            try:
                item.text = extractor(member.data, name=member.path)
            except BlockError as exc:
                exc.details.setdefault("archive", source)
                exc.details.setdefault("group", group)
                exc.details.setdefault("path", member.path)
                item.error = exc.to_dict()
                evidence.errors.append(item.error)
        evidence.groups.setdefault(group, []).append(item)
        evidence.files.append(item)
    if not evidence.files:
        evidence.warnings.append(f"'{source}' に読み込めるファイルがありません（空です）。")
    return evidence


def parse_zip_2tier(
    source: Path | str | bytes,
    *,
    name: str | None = None,
    extract: bool = True,
    limits: ArchiveLimits = ArchiveLimits(),  # noqa: B008 -- frozen, shared safely
) -> EvidenceSet:
    """Read an evidence ZIP as groups (first-level folders) of files, with their text."""
    listing = open_archive(source, name=name, limits=limits)
    label = name or (
        UNNAMED_ARCHIVE if isinstance(source, bytes | bytearray | memoryview) else Path(source).name
    )
    return build_evidence(listing, label, extract=extract)


def parse_folder_2tier(
    path: Path | str,
    *,
    extract: bool = True,
    limits: ArchiveLimits = ArchiveLimits(),  # noqa: B008 -- frozen, shared safely
) -> EvidenceSet:
    """Read an evidence folder exactly like the ZIP made from it (see ``parse_zip_2tier``)."""
    listing = open_folder(path, limits=limits)
    return build_evidence(listing, Path(path).name or str(path), extract=extract)
