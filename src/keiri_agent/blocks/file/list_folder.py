"""``file.list_folder``: the files of a folder as records, for loops and ``file.extract_text``.

Only names and ``stat`` data are read, never file contents. Symbolic links are not followed
(a link may lead anywhere on the machine); each one is reported in ``summary.warnings``.
Hidden files (``.name``, Office lock files ``~$name``) and operating-system clutter
(``Thumbs.db``, ``.DS_Store``, ``__MACOSX``; the file layer's list) are left out unless
``include_hidden``; how many were left out is in the summary. More matches than
``max_files`` is an error, never a silently cut list. ``modified`` is the file's last change
in ``KEIRI_TIMEZONE`` with its UTC offset (``2025-01-31T10:00:00+09:00``): the time people read
in a report, and still one exact instant.
"""

from __future__ import annotations

import fnmatch
import os
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, given
from keiri_agent.blocks.inputs import count_limit, string_list
from keiri_agent.documents.archives import folder_not_found, folder_unreadable
from keiri_agent.documents.zipnames import skip_reason
from keiri_agent.errors import input_error

__all__ = ["DEFAULT_MAX_FILES", "ListFolderBlock"]

DEFAULT_MAX_FILES = 10_000
_CANCEL_EVERY = 500  # entries between cancellation checks


class ListFolderBlock(ProcessingBlock):
    """Lists ``folder`` into ``files`` (sorted by relative path) and a ``summary``."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _folder_text(inputs.get("folder"))
        _patterns(given(inputs, "pattern", "*"))
        _max_files(inputs)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        root = _folder(ctx.access.read(_folder_text(inputs.get("folder")), "folder"))
        patterns = _patterns(given(inputs, "pattern", "*"))
        max_files = _max_files(inputs)
        walk = _Walk(
            root,
            patterns,
            recursive=bool(given(inputs, "recursive", False)),
            include_hidden=bool(given(inputs, "include_hidden", False)),
            max_files=max_files,
            ctx=ctx,
            zone=ctx.zone,
        )
        walk.scan(root, "")
        files = sorted(walk.files, key=lambda record: record["relative_path"])
        summary = {
            "folder": str(root),
            "count": len(files),
            "total_size": sum(record["size"] for record in files),
            "pattern": patterns if len(patterns) > 1 else patterns[0],
            "recursive": walk.recursive,
            "hidden_skipped": walk.hidden_skipped,
            "warnings": walk.warnings,
        }
        ctx.log(
            f"フォルダ {root.name or root} から {len(files)} ファイルを一覧にしました"
            f"（合計 {summary['total_size']:,} バイト）"
        )
        return {"files": files, "summary": summary}


class _Walk:
    def __init__(
        self,
        root: Path,
        patterns: list[str],
        *,
        recursive: bool,
        include_hidden: bool,
        max_files: int,
        ctx: BlockContext,
        zone: ZoneInfo,
    ) -> None:
        self.root = root
        self.patterns = [p.lower() for p in patterns]
        self.recursive = recursive
        self.include_hidden = include_hidden
        self.max_files = max_files
        self.ctx = ctx
        self.zone = zone
        self.files: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self.hidden_skipped = 0
        self.seen = 0

    def scan(self, directory: Path, prefix: str) -> None:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            raise folder_unreadable(
                self.root.name or str(self.root), prefix.rstrip("/"), exc
            ) from exc
        for entry in entries:
            self.seen += 1
            if self.seen % _CANCEL_EVERY == 0:
                self.ctx.check_cancelled()
            rel = prefix + entry.name
            if not self.include_hidden and _hidden(rel, entry.name):
                self.hidden_skipped += 1
                continue
            if entry.is_symlink():
                self.warnings.append(
                    f"'{rel}' はシンボリックリンクのため一覧に含めていません（リンク先はたどりません）。"
                )
            elif entry.is_dir(follow_symlinks=False):
                if self.recursive:
                    self.scan(Path(entry.path), rel + "/")
            elif entry.is_file(follow_symlinks=False):
                if self._matches(rel, entry.name):
                    self._add(entry, rel)
            else:
                self.warnings.append(
                    f"'{rel}' は通常のファイルではない（デバイスやソケットなど）ため一覧に含めていません。"
                )

    def _matches(self, rel: str, name: str) -> bool:
        # Case-insensitive: "*.pdf" must find the "SCAN001.PDF" that scanners write.
        target_rel, target_name = rel.lower(), name.lower()
        return any(
            fnmatch.fnmatchcase(target_rel if "/" in p else target_name, p) for p in self.patterns
        )

    def _add(self, entry: os.DirEntry[str], rel: str) -> None:
        if len(self.files) >= self.max_files:
            raise input_error(
                f"フォルダ '{self.root}' で条件に合うファイルが上限 {self.max_files:,} 件を超えました。",
                "pattern（例 *.pdf）で対象を絞るか、recursive を外すか、"
                "必要なら max_files を増やしてください。",
                field="max_files",
                max_files=self.max_files,
            )
        info = entry.stat(follow_symlinks=False)
        self.files.append(
            {
                "path": str(self.root / rel),
                "name": entry.name,
                "relative_path": rel,
                "ext": Path(entry.name).suffix.lower(),
                "size": info.st_size,
                "modified": datetime.fromtimestamp(info.st_mtime, self.zone).isoformat(
                    timespec="seconds"
                ),
            }
        )


def _hidden(rel: str, name: str) -> bool:
    return name.startswith((".", "~$")) or skip_reason(rel) is not None


def _folder_text(value: Any) -> str:
    if isinstance(value, str | os.PathLike) and str(value).strip():
        return str(value)
    raise input_error(
        "一覧にするフォルダ（folder）が指定されていません。",
        "folder にフォルダのパスを指定してください。",
        field="folder",
    )


def _folder(path: Path) -> Path:
    """``path`` (where the run may read) when it is a folder that is not a link."""
    if path.is_symlink():
        raise input_error(
            f"'{path}' はシンボリックリンクです。リンクはたどりません。",
            "リンク先の実際のフォルダのパスを指定してください。",
            field="folder",
        )
    if path.is_file():
        raise input_error(
            f"'{path}' はファイルです。folder にはフォルダを指定してください。",
            "1 つのファイルを読むには file.extract_text か file.read_table を使ってください。",
            field="folder",
        )
    if not path.is_dir():
        raise folder_not_found(path)
    return path


def _max_files(inputs: dict[str, Any]) -> int:
    return count_limit(inputs, "max_files", DEFAULT_MAX_FILES, "一覧にする最大ファイル数")


def _patterns(value: Any) -> list[str]:
    items = string_list(value)
    if not items or not all(p.strip() for p in items):
        raise input_error(
            f"pattern '{value}' はファイル名のパターンではありません。",
            '例: pattern: "*.pdf"  または  pattern: ["*.pdf", "*.xlsx"]'
            "（大文字・小文字は区別しません。/ を含むと相対パス全体と照合します）",
            field="pattern",
        )
    return [p.strip() for p in items]
