"""Which paths on the server a person may type on the app's pages.

The app reads the files a person names, with the rights of the process that serves it. A typed
path (the 「またはサーバー上のパス」 box of a file field, a folder field, the 実行 page's Plan file)
is therefore accepted only inside the folders the app works in: the workspace
(``KEIRI_WORKSPACE_ROOT``, where uploads are saved), the project's example data and, for plan
files, the designs folder (``KEIRI_DESIGNS_DIR``). Anything else -- an absolute path elsewhere,
``..``, ``~``, a symbolic link leading out -- is refused with one message that says where paths
may point and nothing about the refused file: a path outside every folder is refused by its
spelling alone, before the file system is asked about it, so the answer is the same whether or
not the file exists.

An accepted path is returned resolved (absolute, symbolic links followed), so what a plan reads
is the file that was checked; a relative path is taken from the app's working directory, as
the blocks would take it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Final, NamedTuple

from keiri_agent.config import Settings
from keiri_agent.errors import PathEscapeError
from keiri_agent.examples import example_data_dir
from keiri_agent.workspace import confine

__all__ = ["Area", "check_server_path", "data_areas", "plan_areas"]

WORKSPACE: Final = "作業ディレクトリ（KEIRI_WORKSPACE_ROOT）"
EXAMPLE_DATA: Final = "サンプルデータ"
DESIGNS: Final = "Plan の保存先（KEIRI_DESIGNS_DIR）"
UPLOADS: Final = "アップロードの保存先"
_HINT: Final = (
    "ファイルをアップロードするか、これらのフォルダの中に置いてそのパスを指定してください"
    "（'..'、~ で始まるパス、フォルダの外を指すシンボリックリンクは使えません）。"
)


class Area(NamedTuple):
    """A folder whose files a typed path may name, with the name a person reads for it."""

    name: str
    folder: Path


def data_areas(settings: Settings, *, uploads: Path | None = None) -> list[Area]:
    """Where input files may be: the workspace, the example data and ``uploads`` (a field's
    own upload folder, when it is not under the workspace)."""
    areas = [Area(WORKSPACE, settings.keiri_workspace_root), Area(EXAMPLE_DATA, example_data_dir())]
    return areas + ([Area(UPLOADS, uploads)] if uploads is not None else [])


def plan_areas(settings: Settings) -> list[Area]:
    """Where a plan file may be: the designs folder and the input files' folders."""
    return [Area(DESIGNS, settings.keiri_designs_dir), *data_areas(settings)]


def _refused(label: str, text: str, areas: Sequence[Area], reason: str) -> PathEscapeError:
    names = "・".join(dict.fromkeys(area.name for area in areas))
    return PathEscapeError(
        f"「{label}」のパス「{text}」は使えません。{names}の中のファイルだけを指定できます。",
        hint=_HINT,
        details={"path": text, "reason": reason},
    )


def check_server_path(text: str, areas: Sequence[Area], *, label: str) -> Path:
    """The resolved path of ``text`` inside one of ``areas``; :class:`PathEscapeError` with a
    Japanese message otherwise (``details.reason``: nul, home, parent_reference or outside)."""
    if "\x00" in text:
        raise _refused(label, text.replace("\x00", "\\0"), areas, "nul")
    if text.startswith("~"):
        raise _refused(label, text, areas, "home")
    pure = PurePath(text)
    if ".." in pure.parts:
        raise _refused(label, text, areas, "parent_reference")
    candidate = Path(pure) if pure.is_absolute() else Path.cwd() / pure
    for area in areas:
        spelled = (area.folder.absolute(), Path(os.path.realpath(area.folder)))
        if not any(candidate.is_relative_to(folder) for folder in spelled):
            continue  # not this folder's, by its spelling: the file system is not asked
        try:
            return confine(spelled[1], candidate, allow_absolute_inside=True)
        except PathEscapeError:
            continue  # a symbolic link out of the folder (or into another: tried next)
    raise _refused(label, text, areas, "outside")
