"""Files given to server tasks: uploads to the task, or paths inside the workspace.

A task may read only two kinds of file: those uploaded with its request (stored under
``<task>/uploads/``) and those inside ``KEIRI_WORKSPACE_ROOT``. Every path a client names --
a conversion ``source``, an analysis ``files`` entry, a plan answer of a ``file``/``files``/
``folder`` field -- goes through :meth:`TaskFiles.resolve`:

* a bare name that matches an uploaded file is that upload;
* anything else must lie inside the workspace. An absolute path outside it is refused by its
  text alone, before the file system is touched, so the answer never depends on whether the
  outside path exists (``not found`` and ``unsupported format`` would tell an attacker that);
  paths inside go through :func:`keiri_agent.workspace.confine` (``..``, symlinks out).

Plan answers are checked against the plan's ``ui.interactive_input`` requirements
(:func:`confine_answers`): only the path fields are resolved; an answer to a node whose
requirements are not written in the plan (an expression) is refused, since its field types
cannot be known before the run.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from keiri_agent.errors import BlockError, ErrorCode, PathEscapeError
from keiri_agent.workspace import confine

__all__ = [
    "MAX_FILENAME_BYTES",
    "MAX_PATH_CHARS",
    "PATH_FIELD_TYPES",
    "UPLOADS_DIR",
    "TaskFiles",
    "base_node_id",
    "confine_answers",
    "path_requirements",
    "too_long",
    "upload_name",
]

UPLOADS_DIR = "uploads"
PATH_FIELD_TYPES = frozenset({"file", "files", "folder"})
MAX_FILENAME_BYTES = 255  # one path component (NAME_MAX on Linux)
MAX_PATH_CHARS = 1024  # a whole path, well under PATH_MAX


def too_long(text: str) -> bool:
    """Whether no file can have this path (a component over NAME_MAX, or over MAX_PATH_CHARS)."""
    if len(text) > MAX_PATH_CHARS:
        return True
    return any(len(part.encode("utf-8")) > MAX_FILENAME_BYTES for part in text.split("/"))


def upload_name(raw: str | None) -> str:
    """The name an uploaded file is stored under: its base name (Windows or POSIX), NFC."""
    name = unicodedata.normalize("NFC", PureWindowsPath(PurePosixPath(raw or "").name).name)
    name = name.strip()
    if not name or name in (".", "..") or "\x00" in name or too_long(name):
        raise BlockError(
            f"アップロードされたファイル名「{(raw or '')[:80]}」は使えません。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint=f"ファイル名を {MAX_FILENAME_BYTES} バイト以内の普通の名前にして送り直してください。",
            details={"filename": (raw or "")[:200]},
        )
    return name


@dataclass(frozen=True)
class TaskFiles:
    """Where one task may read files from: its uploads, then the workspace."""

    workspace: Path
    uploads: Path

    @property
    def hint(self) -> str:
        return (
            f"作業フォルダ（KEIRI_WORKSPACE_ROOT: {self.workspace}）の中のファイルを"
            "相対パスで指定するか、画面や multipart でファイルをアップロードしてください。"
        )

    def _outside(self, text: str) -> PathEscapeError:
        return PathEscapeError(
            f"パス「{text[:200]}」は作業フォルダ（{self.workspace}）の外にあるため使えません。",
            hint=self.hint,
            details={"path": text[:200], "allowed": str(self.workspace)},
        )

    def uploaded(self) -> list[Path]:
        """The files uploaded to this task, by name."""
        if not self.uploads.is_dir():
            return []
        return sorted(p for p in self.uploads.iterdir() if p.is_file() and not p.is_symlink())

    def resolve(self, name: str, *, must_exist: bool = True) -> Path:
        """The real path of ``name``: an upload of that name, else a path in the workspace."""
        text = name.strip()
        if too_long(text):
            raise BlockError(
                f"パスが長すぎます（{len(text):,} 文字）。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint=f"全体で {MAX_PATH_CHARS:,} 文字、1 つの名前で {MAX_FILENAME_BYTES} バイト"
                "までです。" + self.hint,
                details={"length": len(text)},
            )
        upload = self.uploads / text
        if "/" not in text and "\\" not in text and upload.is_file() and not upload.is_symlink():
            return upload
        pure = PurePosixPath(text)
        root = Path(os.path.abspath(self.workspace))
        if pure.is_absolute() and not Path(os.path.normpath(pure)).is_relative_to(root):
            raise self._outside(text)  # by its text alone: nothing outside is looked at
        try:
            real = confine(root, text, allow_absolute_inside=True)
        except PathEscapeError:
            raise self._outside(text) from None
        if must_exist and not real.exists():
            raise BlockError(
                f"ファイル「{text[:200]}」が見つかりません。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint=self.hint,
                details={"path": text[:200], "allowed": str(self.workspace)},
            )
        return real


# --- plan answers ----------------------------------------------------------------------------


def _input_nodes(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every ``ui.interactive_input`` node of a plan, at any depth (loops, branches)."""
    if isinstance(value, Mapping):
        if value.get("block") == "ui.interactive_input" and isinstance(value.get("id"), str):
            yield value
        for item in value.values():
            yield from _input_nodes(item)
    elif isinstance(value, list):
        for item in value:
            yield from _input_nodes(item)


def path_requirements(plan: Any) -> dict[str, set[str] | None]:
    """Node id → ids of its path fields; None for a node whose requirements are computed."""
    nodes: dict[str, set[str] | None] = {}
    for node in _input_nodes(plan):
        inputs = node.get("in")
        requirements = inputs.get("requirements") if isinstance(inputs, Mapping) else None
        if requirements is None:
            nodes[str(node["id"])] = set()
        elif isinstance(requirements, list) and all(isinstance(r, Mapping) for r in requirements):
            nodes[str(node["id"])] = {
                str(r.get("id"))
                for r in requirements
                if str(r.get("type", "text")) in PATH_FIELD_TYPES
            }
        else:
            nodes[str(node["id"])] = None
    return nodes


def base_node_id(node_key: str) -> str:
    """A node's id as written in the plan: ``loop[2]/approve`` → ``approve``."""
    return node_key.rsplit("/", 1)[-1].split("[", 1)[0]


def confine_answers(
    answers: Mapping[str, Any], plan: Any, files: TaskFiles
) -> dict[str, dict[str, Any]]:
    """``answers`` with every path field resolved through ``files`` (PathEscapeError if out)."""
    fields_of = path_requirements(plan)
    confined: dict[str, dict[str, Any]] = {}
    for node_key, values in answers.items():
        paths = fields_of.get(base_node_id(node_key), set())
        if paths is None:
            raise BlockError(
                f"ノード {node_key} の入力項目は実行時に決まるため、先に回答を送れません。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="answers から外して実行し、入力待ちになってから回答を送ってください"
                "（POST /agent/tasks/{task_id}/answers）。",
                details={"node": node_key},
            )
        row = dict(values)
        for field_id in paths & row.keys():
            value = row[field_id]
            if isinstance(value, str) and value.strip():
                row[field_id] = str(files.resolve(value))
            elif isinstance(value, list):
                row[field_id] = [
                    str(files.resolve(v)) if isinstance(v, str) and v.strip() else v for v in value
                ]
        confined[node_key] = row
    return confined
