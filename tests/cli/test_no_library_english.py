"""Property: whatever mistake a user makes on the command line, what they see is Japanese.

The cases are generated from the Typer app itself (every command and group, every parameter by
its type), as a user would get them wrong: ``--help``; an option that does not exist; no
arguments at all; a word for a number, a fraction for an integer, a value outside a choice; an
option with its value left off; and for each path parameter a path that does not exist, a
folder where a file is expected and a path through a file. Each output (stdout and stderr, or the
``--json`` document's message and hint) must hold no English sentence of Click, Typer, Pydantic,
Python or the OS (``Invalid value``, ``Input should be``, ``[Errno 2]``, a traceback); names a user
types (options, commands, paths, codes) are not English here. A failure exits with 1 or 2, never
with a Python exception.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.cli.common import EXIT_FAILED, EXIT_USER_ERROR, TRACEBACK_PREFIX
from tests.support.english import cli_words, english_of

runner = CliRunner()


def library_english(text: str) -> list[str]:
    """The library English ``text`` shows (commands a user types are not English here)."""
    return english_of(text, allowed=cli_words())


@dataclass(frozen=True)
class Case:
    """One command line a user might type, and what kind of mistake it is."""

    command: str
    kind: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.kind}: keiri-agent {' '.join(self.args)}"


# Commands that start a server or change the machine: only mistakes Click refuses before the
# command starts are tried on them.
LONG_RUNNING = frozenset({("serve",), ("ui",), ("sandbox", "setup")})
PARSE_ONLY_KINDS = frozenset({"help", "unknown option", "missing", "no value", "bad int"})
BAD_PATHS = {"no such path": "nothere/x.csv", "a folder": "adir", "through a file": "afile.txt/x"}


def _annotation(param: Any) -> str:
    return str(getattr(param.type_descriptor.annotation, "__name__", ""))


def _filled(command: Any) -> list[str]:
    """Values for the command's required parameters, so that a case reaches its own mistake."""
    args: list[str] = []
    for param in command.params:
        if not param.required:
            continue
        value = "afile.txt" if _annotation(param) == "Path" else "x"
        args += [value] if param.param_type_name == "argument" else [param.opts[0], value]
    return args


def _option_cases(path: list[str], command: Any) -> Iterator[Case]:
    base = _filled(command)
    for param in command.params:
        if param.param_type_name != "option" or param.is_flag:
            continue
        option, kind = param.opts[0], _annotation(param)
        if kind in ("int", "float"):
            yield Case(" ".join(path), f"bad {kind}", (*path, *base, option, "十"))
            yield Case(" ".join(path), "no value", (*path, *base, option))
        if kind == "int":
            yield Case(" ".join(path), "bad int", (*path, *base, option, "1.5"))
        if param.type_descriptor.is_choice:
            yield Case(" ".join(path), "bad choice", (*path, *base, option, "どれでもない"))


def _path_cases(path: list[str], command: Any, paths: Mapping[str, str]) -> Iterator[Case]:
    """Each path parameter of ``command`` given each of ``paths`` (mistake → value)."""
    base = _filled(command)
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    for param in command.params:
        if "Path" not in str(param.type_descriptor.annotation):
            continue
        for mistake, value in paths.items():
            if param.param_type_name == "option":
                yield Case(" ".join(path), mistake, (*path, *base, param.opts[0], value))
                continue
            args, index = list(base), arguments.index(param)
            args[index : index + 1] = [value]
            yield Case(" ".join(path), mistake, (*path, *args))


def _leaves() -> Iterator[tuple[list[str], Any]]:
    def walk(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk(sub, [*path, name])
        if not getattr(command, "commands", {}):
            yield path, command

    yield from walk(get_command(app), [])


def _cases() -> Iterator[Case]:
    def walk(command: Any, path: list[str]) -> Iterator[Case]:
        yield Case(" ".join(path), "help", (*path, "--help"))
        yield Case(" ".join(path), "unknown option", (*path, "--no-such-option"))
        subs = getattr(command, "commands", {})
        if subs:
            yield Case(" ".join(path), "unknown command", (*path, "no-such-command"))
            for name, sub in sorted(subs.items()):
                yield from walk(sub, [*path, name])
            return
        if any(p.required for p in command.params):
            yield Case(" ".join(path), "missing", tuple(path))
        if any("--json" in p.opts for p in command.params):
            yield Case(
                " ".join(path), "unknown option, json", (*path, "--no-such-option", "--json")
            )
        cases = [*_option_cases(path, command), *_path_cases(path, command, BAD_PATHS)]
        if tuple(path) in LONG_RUNNING:
            cases = [case for case in cases if case.kind in PARSE_ONLY_KINDS]
        yield from cases

    yield from walk(get_command(app), [])


CASES = list(_cases())


def test_the_generator_covers_every_command_and_kind_of_mistake() -> None:
    kinds = {case.kind for case in CASES}
    assert kinds >= {"help", "unknown option", "missing", "bad int", "bad float", "bad choice"}
    assert kinds >= {*BAD_PATHS, "no value", "unknown command", "unknown option, json"}
    commands = {case.args[:2] for case in CASES if case.kind == "help"}
    assert len(commands) > 40
    assert len(CASES) > 250


def _shown(stdout: str, stderr: str, *, as_json: bool) -> str:
    if not as_json:
        return stdout + stderr
    error = json.loads(stdout)["error"]  # one JSON document: a script's; a person reads these
    return f"{error['message']}\n{error['hint']}\n{stderr}"


COMMANDS = sorted({case.command for case in CASES})


def leaks_of(case: Case, here: Path) -> list[str]:
    """What ``case`` shows a user of a library's English (or how it crashed), run in ``here``."""
    (here / "adir").mkdir(parents=True)
    (here / "afile.txt").write_text("print('x')\n", encoding="utf-8")
    os.chdir(here)
    result = runner.invoke(app, list(case.args), env={"COLUMNS": "100"})
    shown = _shown(result.stdout, result.stderr, as_json="json" in case.kind)
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    found = [f"exit {result.exit_code}", *library_english(shown)]
    if crashed:
        found.append(repr(result.exception))
    usage = case.kind in ("unknown option", "missing", "no value", "bad int", "bad choice")
    expected = {EXIT_USER_ERROR} if usage else {0, EXIT_FAILED, EXIT_USER_ERROR}
    return found if len(found) > 1 or result.exit_code not in expected else []


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command or "keiri-agent")
def test_no_english_of_a_library_reaches_the_user(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where a saved traceback goes
    monkeypatch.chdir(tmp_path)  # restored after the cases moved into their own folders
    cases = [case for case in CASES if case.command == command]
    leaks = {}
    for number, case in enumerate(cases):
        found = leaks_of(case, tmp_path / f"case{number}")  # a case's files meet no other's
        if found:
            leaks[str(case)] = found
    assert leaks == {}, f"{len(leaks)} of {len(cases)} cases"


def test_a_folder_where_a_file_is_written_is_the_users_mistake(tmp_path: Path) -> None:
    """A folder given where the block catalogue is written is said before anything is written,
    as a mistake to fix (exit 2), with what to give instead; no traceback is saved."""
    (tmp_path / "docs.md").mkdir()
    result = runner.invoke(app, ["blocks", "docs", "--out", str(tmp_path / "docs.md")])
    assert result.exit_code == EXIT_USER_ERROR
    first, hint = result.stderr.splitlines()[:2]
    assert "INTERNAL_ERROR" not in first
    assert f"「{tmp_path / 'docs.md'}」はフォルダです" in first
    assert "ファイルの名前まで" in first
    assert "docs.md/" in hint  # an example of a file in that folder
    assert library_english(result.stderr) == []
    assert not list(tmp_path.glob(f"{TRACEBACK_PREFIX}*.txt"))


def test_an_unexpected_failure_is_japanese_and_its_traceback_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OS refuses what the command did not expect (a folder where it writes, made as it
    ran). The user reads why in Japanese and where the traceback was saved."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def refused(*_: object, **__: object) -> None:
        raise IsADirectoryError(errno.EISDIR, "Is a directory", "docs.md")

    monkeypatch.setattr("keiri_agent.workspace.atomic_path", refused)
    result = runner.invoke(app, ["blocks", "docs", "--out", str(tmp_path / "docs.md")])
    assert result.exit_code == EXIT_FAILED
    assert result.exception is None or isinstance(result.exception, SystemExit)
    first, hint = result.stderr.splitlines()[:2]
    assert "コマンドを実行できませんでした" in first
    assert "docs.md" in first
    assert "フォルダ" in first
    assert library_english(result.stderr) == []
    saved = sorted(tmp_path.glob(f"{TRACEBACK_PREFIX}*.txt"))
    assert len(saved) == 1
    assert str(saved[0]) in hint
    assert "IsADirectoryError" in saved[0].read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["plan", "runs", "--limit", "many"],
            '--limit の値が正しくありません: 整数として読めません（受け取った値: "many"）',
        ),
        (["plan", "runs", "--limit", "0"], "--limit の値が正しくありません: 1 以上にしてください"),
        (
            ["gc", "--older-than", "三日"],
            "--older-than の値が正しくありません: 数値として読めません",
        ),
        (
            ["schedule", "add", "keiri/close", "--if-holiday", "later"],
            '--if-holiday に使えない値です（受け取った値: "later"）。使える値: before / after / skip',
        ),
    ],
)
def test_a_bad_value_says_what_the_option_wants(args: list[str], expected: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_USER_ERROR
    assert expected in result.stderr
    assert library_english(result.stderr) == []


# --- paths the user may not read or write --------------------------------------------------

# A file the user may not read, and a path inside a folder the user may not open.
LOCKED_PATHS = {"may not read": "secret.csv", "may not open the folder": "locked/x.csv"}
LOCKED_CASES = [
    case
    for path, command in _leaves()
    if tuple(path) not in LONG_RUNNING
    for case in _path_cases(path, command, LOCKED_PATHS)
]


def _as_user_without_override() -> list[str]:
    """The start of a command line that runs as a user bound by file permissions: root is
    not (it reads any file), so as root the command runs without the capabilities that let it
    (``setpriv``); anyone else already is."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    """A folder holding ``secret.csv`` and ``locked/``, neither of them the user's to read."""
    here = tmp_path / "here"
    (here / "locked").mkdir(parents=True)
    secret = here / "secret.csv"
    secret.write_text("売上日,金額\n2024/04/01,100\n", encoding="utf-8")
    for path, mode in ((secret, 0o600), (here / "locked", 0o700)):
        if os.geteuid() == 0:
            os.chown(path, NOBODY_UID, NOBODY_UID)
        else:
            mode = 0
        path.chmod(mode)
    yield here
    (here / "locked").chmod(0o700)
    secret.chmod(0o600)


NOBODY_UID = 65534


@pytest.mark.parametrize(
    "command", sorted({case.command for case in LOCKED_CASES}), ids=lambda command: command
)
def test_a_path_the_user_may_not_read_is_said_in_japanese(
    command: str, locked: Path, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace"),
        "KEIRI_RUNS_DIR": str(tmp_path / "runs"),
        "KEIRI_DESIGNS_DIR": str(tmp_path / "designs"),
        "TMPDIR": str(tmp_path),
        "COLUMNS": "100",
    }
    leaks = {}
    cases = [case for case in LOCKED_CASES if case.command == command]
    for case in cases:
        command_line = [*_as_user_without_override(), sys.executable, "-m", "keiri_agent"]
        done = subprocess.run(
            [*command_line, *case.args], cwd=locked, env=env, capture_output=True, text=True
        )
        found = library_english(done.stdout + done.stderr)
        if found or done.returncode not in (0, EXIT_FAILED, EXIT_USER_ERROR):
            leaks[str(case)] = [f"exit {done.returncode}", *found]
    assert leaks == {}, f"{len(leaks)} of {len(cases)} cases"
