"""Finding the manual files to ingest: each PATH is a file or a folder walked recursively.

Folders contribute their files with a supported extension (``.pdf .docx .xlsx .xlsm .pptx
.html .htm .md .txt``, any case);
other files are counted as ignored, as are hidden files and Office lock files (``~$…``). A
file named directly must have a supported extension (otherwise it is reported as a failure).
A PATH that does not exist is an error before anything is changed: with mirror semantics a
typo would otherwise remove every file of the index.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from keiri_agent.agents.helpdesk.knowledge.models import FileFailure
from keiri_agent.errors import ErrorCode, input_error

__all__ = ["MANUAL_EXTENSIONS", "Discovered", "SourceFile", "discover"]

MANUAL_EXTENSIONS = (".pdf", ".docx", ".xlsx", ".xlsm", ".pptx", ".html", ".htm", ".md", ".txt")


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A manual file: its resolved path (the index key) and the name results show."""

    path: Path
    file_name: str

    @property
    def key(self) -> str:
        return str(self.path)


@dataclass
class Discovered:
    files: list[SourceFile] = field(default_factory=list)
    failures: list[FileFailure] = field(default_factory=list)
    ignored: int = 0


def _skipped_name(name: str) -> bool:
    return name.startswith((".", "~$"))


def discover(paths: Sequence[Path | str]) -> Discovered:
    """The manual files under ``paths`` (sorted, each once), failures and the ignored count."""
    found = Discovered()
    seen: set[Path] = set()
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            raise input_error(
                f"マニュアルの場所「{raw}」が見つかりません。",
                "ファイルかフォルダーのパスを確認してください（何も変更していません）。",
                path=str(raw),
            )
        if root.is_file():
            candidates = [(root.resolve(), root.name)]
        else:
            candidates = []
            for folder, dirs, names in os.walk(root, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not _skipped_name(d))
                for name in sorted(names):
                    path = Path(folder) / name
                    if _skipped_name(name) or path.suffix.lower() not in MANUAL_EXTENSIONS:
                        found.ignored += 1
                        continue
                    candidates.append((path.resolve(), path.relative_to(root).as_posix()))
        for resolved, file_name in candidates:
            if resolved in seen:
                continue
            seen.add(resolved)
            if resolved.suffix.lower() not in MANUAL_EXTENSIONS:
                found.failures.append(
                    FileFailure(
                        file_name=file_name,
                        path=str(resolved),
                        code=str(ErrorCode.UNSUPPORTED_FORMAT),
                        reason=f"「{file_name}」はマニュアルとして取り込めない形式です。",
                        hint=f"対応形式: {' '.join(MANUAL_EXTENSIONS)}",
                    )
                )
                continue
            found.files.append(SourceFile(resolved, file_name))
    found.files.sort(key=lambda f: f.key)
    return found
