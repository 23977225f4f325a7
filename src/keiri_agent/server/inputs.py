"""Files given to server tasks: where each task may read and write, and the check at the door.

Users are apart inside the workspace, not only at the API's doors. Every task gets a
:class:`~keiri_agent.file_access.FileAccess` built from its own folder and the shared data
folders, and nothing else::

    <KEIRI_WORKSPACE_ROOT>/tasks/<task_id>/
        uploads/   read: the files uploaded with the task (a relative name is looked up here first)
        files/     read and written: the task's results (looked up next)
        runs/      read and written: a plan task's run logs and work folders
    KEIRI_SHARED_DATA_DIRS
               read: data for every user (looked up last, in order); default: the bundled
               example data (``keiri_agent.examples``)
    KEIRI_S3_ALLOWED_BUCKETS
               read: the S3 buckets or bucket prefixes a task may fetch with the server's
               credentials; default: none

Not the workspace around the tasks, not another task's folder, not the server's runs. The same
object decides at the door -- a conversion ``source``, an analysis ``files`` entry, the answers
of a plan's ``file``/``files``/``folder`` fields at any depth (subflows included, by the plan
engine's :func:`~keiri_agent.plan.answer_paths`) -- and inside the run, where every block reads
its path inputs through it (``BlockContext.access``): the door gives an early 403 naming the
input, the blocks are the boundary for everything the door cannot see (``vars``, literals,
paths computed during the run). Messages name the input and repeat the path the user gave,
never the server's folders.

A shared folder that holds the tasks or the server's runs (or lies inside them) would let every
user read everyone's files: :func:`shared_folders` refuses it when the server starts.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, input_error
from keiri_agent.file_access import ALLOWED_PLACES, FileAccess

__all__ = [
    "FILES_DIR",
    "MAX_FILENAME_BYTES",
    "MAX_PATH_CHARS",
    "RUNS_DIR",
    "UPLOADS_DIR",
    "TaskFiles",
    "base_node_id",
    "check_answer_paths",
    "shared_folders",
    "task_files",
    "too_long",
    "upload_name",
]

UPLOADS_DIR = "uploads"
FILES_DIR = "files"  # a task's results (Job.files_dir), downloadable
RUNS_DIR = "runs"  # a plan task's run logs, beside its other files
MAX_FILENAME_BYTES = 255  # one path component (NAME_MAX on Linux)
MAX_PATH_CHARS = 1024  # a whole path, well under PATH_MAX
FILES_HINT = (
    f"{ALLOWED_PLACES}の中のファイルを指定してください: アップロードしたファイルはその名前で、"
    "共有データフォルダのファイルはそのフォルダからの相対パスで指定できます"
    "（画面や multipart でアップロードできます）。"
)


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
        raise input_error(
            f"アップロードされたファイル名「{(raw or '')[:80]}」は使えません。",
            f"ファイル名を {MAX_FILENAME_BYTES} バイト以内の普通の名前にして送り直してください。",
            filename=(raw or "")[:200],
        )
    return name


# --- shared data folders ---------------------------------------------------------------------


def _overlap(a: Path, b: Path) -> bool:
    real_a, real_b = Path(os.path.realpath(a)), Path(os.path.realpath(b))
    return real_a.is_relative_to(real_b) or real_b.is_relative_to(real_a)


def shared_folders(settings: Settings, tasks_root: Path) -> tuple[Path, ...]:
    """The folders every task may read (``KEIRI_SHARED_DATA_DIRS``; unset: the bundled example
    data), each an existing folder apart from the tasks and the runs; ConfigurationError (for
    the operator, so it names the folders) otherwise."""
    named = settings.shared_data_dirs()
    if named is None:
        from keiri_agent.examples import example_data_dir

        named = [example_data_dir()]
    private = {"タスクの保存場所": tasks_root, "KEIRI_RUNS_DIR": Path(settings.keiri_runs_dir)}
    if settings.keiri_api_keys_file is not None:  # key hashes: never data for everyone
        private["KEIRI_API_KEYS_FILE"] = settings.keiri_api_keys_file
    folders: list[Path] = []
    for folder in named:
        path = folder.expanduser().absolute()
        if not path.is_dir():
            raise ConfigurationError(
                f"共有データフォルダ（KEIRI_SHARED_DATA_DIRS）の {path} がフォルダとして見つかりません。",
                hint="存在するフォルダを指定してください（複数は "
                f"'{os.pathsep}' 区切り、空にすると共有データなし）。",
                details={"folder": str(path)},
            )
        for what, other in private.items():
            if _overlap(path, other):
                raise ConfigurationError(
                    f"共有データフォルダ（KEIRI_SHARED_DATA_DIRS）の {path} は{what}"
                    f"（{other.absolute()}）と重なっているため、全員に共有できません。",
                    hint="全員に読ませてよいデータだけを置いたフォルダを、作業フォルダの tasks や"
                    " KEIRI_RUNS_DIR とは別に用意して指定してください。",
                    details={"folder": str(path), "overlaps": str(other.absolute())},
                )
        folders.append(path)
    return tuple(folders)


# --- one task's files ------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskFiles:
    """One task's folders and the shared data: what it may read (``access``) and its uploads."""

    directory: Path
    shared: tuple[Path, ...] = ()
    s3: tuple[str, ...] = ()  # the S3 places it may read (KEIRI_S3_ALLOWED_BUCKETS)
    # The operator's folders a run may reach by a setting, not by a path (the help desk's
    # KEIRI_HELPDESK_INDEX): named by what they are in what a user sees.
    operator: tuple[tuple[Path, str], ...] = ()

    @property
    def uploads(self) -> Path:
        return self.directory / UPLOADS_DIR

    @property
    def outputs(self) -> Path:
        return self.directory / FILES_DIR

    @property
    def runs(self) -> Path:
        return self.directory / RUNS_DIR

    @property
    def access(self) -> FileAccess:
        """Reads: uploads, outputs, runs, shared data (relative names in that order, runs
        aside), the allowed S3 places; writes: outputs and runs."""
        return FileAccess.confined(
            search=(self.uploads, self.outputs, *self.shared),
            writable=(self.outputs, self.runs),
            s3=self.s3,
        )

    hint = FILES_HINT

    def uploaded(self) -> list[Path]:
        """The files uploaded to this task, by name."""
        if not self.uploads.is_dir():
            return []
        return sorted(p for p in self.uploads.iterdir() if p.is_file() and not p.is_symlink())

    def hide(self, value: Any, work: Path | None = None) -> Any:
        """``value`` (a text, or JSON-like data holding texts) with the server's folders taken
        out of every path in it: a file of the run's ``work`` folder, of the task's folder or
        of a shared folder is named relative to it (``chart/月別売上.png``, ``uploads/売上.csv``)
        as the user sees it; the folders themselves by what they are."""
        named = [(work, "（作業フォルダ）")] if work is not None else []
        named += [(self.directory, "（タスクのフォルダ）")]
        named += [(folder, "（共有データフォルダ）") for folder in self.shared]
        named += list(self.operator)
        pairs = []
        for folder, label in named:
            for form in {os.path.abspath(folder), os.path.realpath(folder)}:
                pairs.append((form, label))
        pairs.sort(key=lambda pair: len(pair[0]), reverse=True)  # the deepest folder first
        return _hidden(value, pairs)

    def resolve(self, name: str, field: str) -> Path:
        """The real path of ``name`` (input ``field``) where this task may read it: an upload,
        a result, or a file of a shared folder (PathEscapeError when it leads elsewhere)."""
        text = name.strip()
        if too_long(text):
            raise input_error(
                f"{field} のパスが長すぎます（{len(text):,} 文字）。",
                f"全体で {MAX_PATH_CHARS:,} 文字、1 つの名前で {MAX_FILENAME_BYTES} バイト"
                "までです。" + self.hint,
                field=field,
                length=len(text),
            )
        return self.access.read(text, field)


def _hidden(value: Any, pairs: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for folder, label in pairs:
            # A path under the folder loses it; the folder alone (not a longer name) is named.
            pattern = re.escape(folder) + r"(?:(/)|(?![^\s/'\"`「」（）()]))"
            value = re.sub(pattern, partial(_replacement, label), value)
        return value
    if isinstance(value, Mapping):
        return {key: _hidden(item, pairs) for key, item in value.items()}
    if isinstance(value, list):
        return [_hidden(item, pairs) for item in value]
    return value


def _replacement(label: str, match: re.Match[str]) -> str:
    return "" if match.group(1) else label


def task_files(
    directory: Path, settings: Settings, shared: tuple[Path, ...] | None = None
) -> TaskFiles:
    """The files of the task in ``directory`` (its tasks folder is the directory's parent;
    ``shared``: the shared data folders when already checked)."""
    if shared is None:
        shared = shared_folders(settings, directory.absolute().parent)
    operator = (
        (Path(settings.keiri_helpdesk_index).expanduser(), "（KEIRI_HELPDESK_INDEX のフォルダ）"),
        (settings.learned_payer_names_path(), "（学習済みの名義のファイル）"),
    )
    return TaskFiles(directory.absolute(), shared, settings.keiri_s3_allowed_buckets, operator)


# --- plan answers ----------------------------------------------------------------------------


def base_node_id(node_key: str) -> str:
    """A node's id as written in the plan: ``loop[2]/approve`` → ``approve``."""
    return node_key.rsplit("/", 1)[-1].split("[", 1)[0]


def check_answer_paths(
    answers: Mapping[str, Any],
    paths_of: Mapping[str, frozenset[str] | None],
    files: TaskFiles,
) -> None:
    """Refuse an answer to a path field that leads where the task may not read.

    ``paths_of`` gives, for each answered node, the ids of its path fields (None: computed
    at run time, so it cannot be answered in advance); answers to nodes it does not know are
    refused by the run itself (``check_answers``) before any block runs.
    """
    for node_key, values in answers.items():
        if node_key not in paths_of:
            continue
        paths = paths_of[node_key]
        if paths is None:
            raise input_error(
                f"ノード {node_key} の入力項目は実行時に決まるため、先に回答を送れません。",
                "answers から外して実行し、入力待ちになってから回答を送ってください"
                "（POST /agent/tasks/{task_id}/answers）。",
                node=node_key,
            )
        if not isinstance(values, Mapping):
            continue
        for field_id in sorted(paths & values.keys()):
            value = values[field_id]
            items = value if isinstance(value, list) else [value]
            for index, item in enumerate(items):
                if isinstance(item, str) and item.strip():
                    where = f"{node_key}.{field_id}" + (
                        f"[{index}]" if isinstance(value, list) else ""
                    )
                    files.resolve(item, where)
