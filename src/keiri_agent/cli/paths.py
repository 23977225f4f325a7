"""What a path on the command line must be, checked before the command runs: one rule for all.

A command's path parameter declares what it wants (``path_option`` / ``path_argument``, whose
check is ``wanted``): a file it reads, a folder it reads, either (manuals), a file or a folder
it writes; the name the check gives the thing also heads the parameter's help, so it is said
once. The check runs as the command line is read, before any key is checked or anything heavy is
loaded, and says each mistake an accountant makes in Japanese, naming the parameter and the path
as given, with a hint: a path that is not there (and what its folder does hold), a folder where
a file is wanted and the reverse, an empty file, a YAML file with only blanks and comments, an
empty folder. What a file holds beyond that (its encoding, its YAML, its columns) is for the
command that reads it.
The error is a ``BlockError``; ``KeiriGroup`` reports it like any (``common.fail``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["Wants", "path_argument", "path_option", "wanted"]

YAML_SUFFIXES = (".yaml", ".yml", ".json")
SHOWN_NEIGHBOURS = 5  # names of what the folder does hold, in a missing file's hint


class Wants(Enum):
    """What a path parameter wants."""

    FILE = "file"  # a file it reads
    FOLDER = "folder"  # a folder it reads
    FILE_OR_FOLDER = "either"  # a file, or a folder of them
    NEW_FILE = "new file"  # a file it writes (made, or replaced)
    NEW_FOLDER = "new folder"  # a folder it writes into (made when not there)


def wanted(
    what: str,
    wants: Wants,
    *,
    empty_ok: bool = False,
    about: str = "",
    code: ErrorCode = ErrorCode.INPUT_VALIDATION_FAILED,
) -> Callable[[typer.Context, typer.CallbackParam, Any], Any]:
    """The callback of a path parameter: ``what`` names the thing in Japanese (回答ファイル);
    ``empty_ok``: an empty file or folder is fine (a program that does nothing); ``about`` ends
    a hint with what the thing holds (例: ...); ``code``: the error's code, the one scripts
    already know for this parameter's mistakes."""

    def check(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is None or ctx.resilient_parsing:
            return value
        named = _Named(what, param, about, code)
        for path in value if isinstance(value, list | tuple) else [value]:
            _check(Path(path), named, wants, empty_ok=empty_ok)
        return value

    return check


def path_option(
    flags: str | tuple[str, ...],
    what: str,
    wants: Wants,
    note: str = "",
    *,
    help: str = "",
    metavar: str | None = None,
    show_default: bool = True,
    **check: Any,
) -> Any:
    """A path option, said once: ``what`` names the thing both in the check's messages and at
    the head of its help, 「what（note）。」 (``help`` where the help says it otherwise);
    ``check``: the rest of :func:`wanted` (``empty_ok``, ``about``, ``code``)."""
    return typer.Option(
        *((flags,) if isinstance(flags, str) else flags),
        metavar=metavar,
        help=help or _help(what, note),
        show_default=show_default,
        callback=wanted(what, wants, **check),
    )


def path_argument(
    what: str,
    wants: Wants,
    *,
    help: str = "",
    metavar: str | None = None,
    show_default: bool = True,
    **check: Any,
) -> Any:
    """A path argument, said once as :func:`path_option` says an option."""
    return typer.Argument(
        metavar=metavar,
        help=help or _help(what, ""),
        show_default=show_default,
        callback=wanted(what, wants, **check),
    )


def _help(what: str, note: str) -> str:
    return f"{what}（{note}）。" if note else f"{what}。"


class _Named:
    """How a message names the parameter: 回答ファイル（--answers）."""

    def __init__(self, what: str, param: typer.CallbackParam, about: str, code: ErrorCode) -> None:
        option = next((o for o in param.opts if o.startswith("--")), "")
        flag = option if param.param_type_name == "option" else ""
        self.what, self.about, self.code = what, about, code
        self.name = f"{what}（{flag}）" if flag else what
        self.key = (param.name or "path").lstrip("-")

    def error(self, path: Path, problem: str, hint: str) -> BlockError:
        """``problem`` with its particle: が見つかりません, はフォルダです ..."""
        return BlockError(
            f"{self.name}に指定した「{path}」{problem}。",
            code=self.code,
            hint=f"{hint}{self.about}" if self.about else hint,
            details={self.key: str(path)},
        )


def _quoted(path: Path) -> str:
    """The path as a person types it again: in quotes when it holds a space."""
    text = str(path)
    return f"'{text}'" if any(c.isspace() for c in text) else text


def _check(path: Path, named: _Named, wants: Wants, *, empty_ok: bool) -> None:
    path = path.expanduser()
    if wants is Wants.NEW_FILE:
        if path.is_dir():
            raise named.error(
                path,
                "はフォルダです（書き出すファイルの名前まで指定してください）",
                f"例: {_quoted(path / '名前.拡張子')}。フォルダの中に新しいファイル名を付けて"
                "指定します。",
            )
        return
    if wants is Wants.NEW_FOLDER:
        if path.exists() and not path.is_dir():
            raise named.error(
                path,
                "はファイルです（フォルダを指定してください）",
                "まだないフォルダの名前を指定すると作ります。",
            )
        return
    if not path.exists():
        raise named.error(path, "が見つかりません", _missing_hint(path, wants))
    if path.is_dir():
        if wants is Wants.FILE:
            raise named.error(
                path, "はフォルダです（ファイルを指定してください）", _inside_hint(path)
            )
        if not empty_ok and not any(path.iterdir()):
            raise named.error(
                path,
                "は空のフォルダです",
                f"{named.what}の入ったフォルダを指定してください（保存場所を確かめてください）。",
            )
        return
    if wants is Wants.FOLDER:
        raise named.error(
            path,
            "はファイルです（フォルダを指定してください）",
            f"このファイルのあるフォルダなら {_quoted(path.parent)} です。",
        )
    if not empty_ok and _holds_nothing(path):
        raise named.error(
            path,
            "は空です（空行やコメントしかありません）",
            f"{named.what}に中身を書いて保存してから、もう一度実行してください。",
        )


def _holds_nothing(path: Path) -> bool:
    """An empty file, or a YAML/JSON file of blanks and ``#`` comments (YAML reads it as
    nothing). A file that is not UTF-8 text is left to its reader, which says so."""
    try:
        data = path.read_bytes()
    except OSError:
        return False  # its reader says why (a locked file, say)
    if not data.strip():
        return True
    if path.suffix.lower() not in YAML_SUFFIXES:
        return False
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    lines = (line.strip() for line in text.splitlines())
    return all(not line or line.startswith("#") for line in lines)


def _missing_hint(path: Path, wants: Wants) -> str:
    folder = path.parent
    if not folder.is_dir():
        return (
            f"フォルダ {_quoted(folder)} もありません。名前と保存場所を確かめてください"
            "（名前にスペースがあるときは、パス全体を引用符で囲みます）。"
        )
    near = _names(folder.iterdir(), path.suffix if wants is Wants.FILE else "")
    where = "今のフォルダ" if str(folder) == "." else _quoted(folder)
    also = f"{where}にあるもの: {near}。" if near else ""
    return f"名前と保存場所を確かめてください。{also}"


def _inside_hint(folder: Path) -> str:
    near = _names(folder.iterdir(), "")
    inside = f"このフォルダにあるもの: {near}。" if near else "このフォルダは空です。"
    return f"フォルダの中のファイルまで指定してください。{inside}"


def _names(entries: Iterable[Path], suffix: str) -> str:
    found = sorted(
        p.name for p in entries if not p.name.startswith(".") and (not suffix or p.suffix == suffix)
    )
    more = "、ほか" if len(found) > SHOWN_NEIGHBOURS else ""
    return "、".join(found[:SHOWN_NEIGHBOURS]) + more
