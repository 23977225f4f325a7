"""Property: whatever a user hands a command, the answer is Japanese and a failure is a failure.

``test_no_library_english`` and ``test_file_contents_words`` give one parameter a wrong value
while the others hold placeholders (``x``, ``afile.txt``), so many cases stop at the first
placeholder. Here every other parameter holds what a back office would really pass (a plan that
validates, a CSV of sales, a folder of manuals), under names with Japanese and spaces
(``4月 締め/売上 一覧.csv``), and one parameter at a time gets what people really hand over by
mistake: a path that is not there, a folder for a file, a file for a folder, an empty file,
binary junk, a CP932 export where text is read, YAML that does not parse, a plan that uses a
block that does not exist, a YAML list where a mapping is wanted; an option given a value of
the wrong kind (a negative count, full-width digits, ``nan``, a date that is no date, a
``--var`` without ``=``); a required option left off. A case is wrong when the screen holds a
library's or Python's English (``Error:``, ``Usage:``, ``No such file``, a traceback, an
exception class named as the failure: ``ValueError``), or when a case that must fail exits 0.

The commands of schedules, triggers and plan versions have their own tests
(``tests/schedule``, ``tests/test_versions*``); ``serve``, ``ui`` and ``sandbox setup`` start a
server or change the machine and are tried with parse mistakes only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.cli import app
from keiri_agent.cli.common import EXIT_FAILED, EXIT_USER_ERROR
from tests.cli.test_no_library_english import (
    NOBODY_UID,
    _annotation,
    _as_user_without_override,
    _leaves,
    library_english,
    runner,
)

OWNED_ELSEWHERE = {"schedule", "trigger", "plan save", "plan versions", "plan diff"}
OWNED_ELSEWHERE |= {"plan approve", "plan reject"}
PARSE_ONLY = {"serve", "ui", "sandbox setup"}

FOLDER = "4月 締め"  # every file a case uses sits here: Japanese and a space in each path
SALES = "売上日,得意先,金額\n2024/04/01,あおば商事,165000\n2024/04/02,北斗運輸,22000\n"
PLAN = """\
apiVersion: v1
id: monthly_sales
vars:
  data: 4月 締め/売上 一覧.csv
graph:
  - id: sales
    block: file.read_table
    in: {path: "${vars.data}"}
"""
WAITING = """\
apiVersion: v1
id: approval
graph:
  - id: confirm
    block: ui.interactive_input
    in: {mode: confirm, message: 4月分の売上を確定してよいですか}
"""
UNKNOWN_BLOCK = PLAN.replace("file.read_table", "file.read_magic")
# Good files, by what a parameter reads (the name of the parameter tells).
GOOD: dict[str, tuple[str, bytes]] = {
    "plan": ("月次 売上.yaml", PLAN.encode()),
    "vars": ("変数 一覧.yaml", "締め日: 2024-04-30\n".encode()),
    "answers": ("回答 一覧.yaml", "確認: {approved: true}\n".encode()),
    "questions": ("質問 集.csv", "question,file\n経費の締め日は？,経費 規程.md\n".encode()),
    "waiting": ("承認 待ち.yaml", WAITING.encode()),
    "data": ("売上 一覧.csv", SALES.encode()),
    "program": ("集計 スクリプト.py", "print('合計', 187000)\n".encode()),
}
# What people hand over instead: a kind of mistake -> the name and bytes of the file (None: a
# path with nothing there; "folder": a folder).
WRONG: dict[str, tuple[str, bytes | str | None]] = {
    "missing": ("ない ファイル.yaml", None),
    "a folder": ("請求 フォルダ", "folder"),
    "an empty file": ("空 ファイル.yaml", b""),
    "binary junk": ("壊れた 表.xlsx", bytes(range(256)) * 16),
    "a CP932 export": ("売上 sjis.csv", SALES.encode("cp932")),
    "YAML that does not parse": ("手順 壊れ.yaml", "id: [月次\n  graph: {\n".encode()),
    "an unknown block": ("未知 ブロック.yaml", UNKNOWN_BLOCK.encode()),
    "a list for a mapping": ("一覧 だけ.yaml", "- 金額\n- 得意先\n".encode()),
}
# Given where a command writes: a file that is already there (a folder may be wanted).
EXISTING = ("控え 売上.csv", SALES.encode())
# A file the user may not read (``test_a_locked_file_is_said_in_japanese``).
LOCKED = "鍵付き 売上.csv"
# Option values of the wrong kind, by the option's type.
WRONG_INT = {"a negative count": "-3", "full-width digits": "１０", "a huge count": "10**9"}
WRONG_FLOAT = {"not a number (nan)": "nan", "a negative length": "-5"}
WRONG_TEXT = {
    "--var": {"a var without =": "締め日"},
    "--input": {"an input without =": "売上"},
    "--bind": {"a binding without =": "売上"},
    "--answer": {"an answer without =": "はい"},
    "--from": {"a date that is no date": "2024/13/40"},
    "--to": {"a Japanese era date": "令和6年4月31日"},
    "--mode": {"a mode that does not exist": "なんでも"},
    "--tool": {"a tool that does not exist": "なんでも"},
    "--format": {"a format that does not exist": "pdf"},
    "--apply-mode": {"a mode that does not exist": "なんでも"},
    "--retrieval": {"a retrieval that does not exist": "なんでも"},
    "--profile": {"a profile that does not exist": "なんでも"},
    "--status": {"a status that does not exist": "なんでも"},
    "--category": {"a category that does not exist": "なんでも"},
    "--source": {"a source that is not there": "ない フォルダ/*.csv"},
}
# Wrong inputs a command may take without failing: (command, parameter, kind) and why.
MAY_SUCCEED = {
    ("helpdesk ingest", "paths", "a folder"),  # a folder of manuals (here with none)
    ("helpdesk ingest", "manual", "a folder"),
    ("plan migrate", "file", "an unknown block"),  # migration rewrites, blocks are not looked up
    ("sandbox run", "file", "an empty file"),  # a program that does nothing
    ("plan run", "vars_file", "an empty file"),  # no vars
    ("plan dry-run", "vars_file", "an empty file"),
    ("plan run", "answers", "an empty file"),  # no answers: the run waits again, and says so
    ("plan resume", "answers", "an empty file"),
    ("plan rerun", "answers", "an empty file"),
}
RUN = "{run}"  # the id of a run waiting for answers, made for the case that names it
# What a required value is when it is not a path (by command and option first).
GOOD_TEXT = {
    "text": "売上",
    "block": "table.from_rows",
    "question": "経費精算の締め日はいつですか",
    "query": "経費精算",
    "run_id": RUN,
    "template": "bank_statement",
    "--instruction": "売上を得意先ごとに集計する",
    "--from": "2024-04-01",
    "plan rerun --from": "confirm",
    "--to": "2024-04-30",
    "request": "売上 一覧.csv を JSON にして",
}
# A command to copy that holds a path with a space unquoted: pasted, it is two arguments.
SPLIT_PATH = re.compile(rf"keiri-agent [^\n]*(?<![\\'\"/]){FOLDER.split()[0]} ")
# A plan's node named by its id alone, where the plan names it (the progress does).
NODE_ID_ALONE = re.compile(r"^(?:ノード:|[▶✓✗⏸↺↻]) (?:sales|confirm)\b.*$", re.MULTILINE)
# Exception classes named as what went wrong (``ValueError: ...``, ``(KeyError)`` aside, which
# the sandbox gives after its Japanese words on purpose).
CLASS_NAMED = re.compile(r"(?<![（(\w.])[A-Z]\w*(?:Error|Exception)\b(?!）)")


@dataclass(frozen=True)
class Case:
    command: str
    kind: str
    args: tuple[str, ...]
    must_fail: bool

    def __str__(self) -> str:
        return f"{self.kind}: keiri-agent {' '.join(self.args)}"


def _reads(param: Any, command: str) -> str:
    """What a path parameter reads (a key of ``GOOD``), or "" for one it writes to."""
    name = (param.opts[0] if param.opts else param.name).lstrip("-")
    if command == "sandbox run" and name == "file":
        return "program"
    reads = {
        "file": "plan",
        "files": "data",
        "paths": "data",
        "manual": "data",
        "plan": "plan",
        "vars": "vars",
        "answers": "answers",
        "questions": "questions",
        "qa": "questions",
        "continue": "answers",
    }
    return reads.get(name, "")


def _is_path(param: Any) -> bool:
    return "Path" in str(param.type_descriptor.annotation)


def _good(param: Any, command: str) -> str:
    if _is_path(param):
        reads = _reads(param, command)
        return f"{FOLDER}/{GOOD[reads][0]}" if reads else f"{FOLDER}/出力 先"
    key = param.opts[0] if param.param_type_name == "option" else param.name
    return GOOD_TEXT.get(f"{command} {key}", GOOD_TEXT.get(key, "売上"))


def _filled(command: Any, name: str, leave: Any = None) -> list[str]:
    """The command's required parameters with good values (``leave`` left off)."""
    args: list[str] = []
    for param in command.params:
        if not param.required or param is leave:
            continue
        value = _good(param, name)
        args += [value] if param.param_type_name == "argument" else [param.opts[0], value]
    return args


def _with(command: Any, name: str, param: Any, value: str) -> list[str]:
    """The command's good arguments with ``param`` given ``value``."""
    args = _filled(command, name, leave=param)
    if param.param_type_name == "option":
        return [*args, param.opts[0], value]
    arguments = [p for p in command.params if p.param_type_name == "argument" and p.required]
    index = arguments.index(param) if param in arguments else len(arguments)
    return [*args[:index], value, *args[index:]]


def _path_cases(path: list[str], command: Any, param: Any) -> Iterator[Case]:
    name = " ".join(path)
    reads = _reads(param, name)
    if not reads:  # where it writes: nothing there, a folder, a file; success is allowed
        for kind, file_name in (
            ("missing", WRONG["missing"][0]),
            ("a folder", WRONG["a folder"][0]),
        ):
            args = _with(command, name, param, f"{FOLDER}/{file_name}")
            yield Case(name, f"{param.name}: {kind}", (*path, *args), False)
        args = _with(command, name, param, f"{FOLDER}/{EXISTING[0]}")
        yield Case(name, f"{param.name}: an existing file", (*path, *args), False)
        return
    for kind, (file_name, _) in WRONG.items():
        if kind == "a CP932 export" and reads == "data":
            continue  # a CP932 CSV is data these commands read
        must_fail = (name, param.name, kind) not in MAY_SUCCEED
        args = _with(command, name, param, f"{FOLDER}/{file_name}")
        yield Case(name, f"{param.name}: {kind}", (*path, *args), must_fail)


def _cases_of(path: list[str], command: Any) -> Iterator[Case]:
    name = " ".join(path)
    for param in command.params:
        if param.param_type_name == "option" and param.required:
            args = _filled(command, name, param)
            yield Case(name, f"{param.opts[0]} left off", (*path, *args), True)
        if _is_path(param):
            yield from _path_cases(path, command, param)
            continue
        if param.param_type_name != "option" or param.is_flag:
            continue
        kind = _annotation(param)
        wrong = WRONG_INT if kind == "int" else WRONG_FLOAT if kind == "float" else {}
        for what, value in {**wrong, **WRONG_TEXT.get(param.opts[0], {})}.items():
            args = _with(command, name, param, value)
            yield Case(name, f"{param.opts[0]}: {what}", (*path, *args), True)


def _data_cases(path: list[str]) -> Iterator[Case]:
    """The plan's input file (``--var data=``) given each wrong file: what its node says."""
    for kind, (file_name, _) in WRONG.items():
        plan = f"{FOLDER}/{GOOD['plan'][0]}"
        args = (*path, plan, "--var", f"data={FOLDER}/{file_name}")
        yield Case(" ".join(path), f"the plan's data: {kind}", args, kind != "a CP932 export")


def _has_json(command: Any) -> bool:
    return any("--json" in param.opts for param in command.params)


def _cases() -> list[Case]:
    found = []
    for path, command in _leaves():
        name = " ".join(path)
        if name in OWNED_ELSEWHERE or path[0] in OWNED_ELSEWHERE:
            continue
        cases = list(_cases_of(path, command))
        if name == "plan run":  # a dry run reads no file: it checks the plan's shape
            cases += _data_cases(path)
        if name in PARSE_ONLY:
            cases = [case for case in cases if "left off" in case.kind or "digits" in case.kind]
        if _has_json(command):  # a script's view of the same mistakes
            cases += [
                Case(name, f"{case.kind}, json", (*case.args, "--json"), True)
                for case in cases
                if case.must_fail
            ]
        found += cases
    return found


CASES = _cases()
LOCKED_CASES = [
    Case(" ".join(path), f"{param.name}: may not read", (*path, *args), True)
    for path, command in _leaves()
    if " ".join(path) not in OWNED_ELSEWHERE | PARSE_ONLY and path[0] not in OWNED_ELSEWHERE
    for param in command.params
    if _is_path(param) and _reads(param, " ".join(path))
    for args in [_with(command, " ".join(path), param, f"{FOLDER}/{LOCKED}")]
]


def _lay_out(here: Path) -> None:
    folder = here / FOLDER
    (folder / "出力 先").mkdir(parents=True)
    for name, data in [*GOOD.values(), EXISTING]:
        (folder / name).write_bytes(data)
    for name, data in WRONG.values():
        if data == "folder":
            (folder / name).mkdir()
        elif isinstance(data, bytes):
            (folder / name).write_bytes(data)


def _waiting_run() -> str:
    """The id of a new run of the plan that waits for answers."""
    plan = f"{FOLDER}/{GOOD['waiting'][0]}"
    done = runner.invoke(app, ["plan", "run", plan, "--json"])
    return str(json.loads(done.stdout)["run_id"])


def _said(stdout: str, stderr: str, *, as_json: bool) -> tuple[str, list[str]]:
    """What a person reads of an output, and what is wrong with its form: with ``--json``,
    stdout must be one JSON document, whose error's message and hint a person reads."""
    if not as_json:
        return stdout + stderr, []
    try:
        document = json.loads(stdout)
    except ValueError:
        return stdout + stderr, ["stdout is not one JSON document"]
    # a command's failure (``sandbox run`` answers with the program's outcome, whose error is
    # Python's own words for a script to read, as its --help says)
    failed = isinstance(document, dict) and "status" in document
    error = document.get("error") if failed else None
    if not isinstance(error, dict):
        return stderr, []
    return f"{error.get('message')}\n{error.get('hint')}\n{stderr}", []


def wrong_in(shown: str) -> list[str]:
    """What a person should not read in ``shown``."""
    found = [*library_english(shown), *CLASS_NAMED.findall(shown)]
    found += [f"a path split: {line}" for line in shown.splitlines() if SPLIT_PATH.search(line)]
    found += [f"a node by its id: {line}" for line in NODE_ID_ALONE.findall(shown)]
    return found


def wrong_of(case: Case, here: Path) -> list[str]:
    """What is wrong with what ``case`` shows (nothing: ``[]``), run in ``here``."""
    _lay_out(here)
    os.chdir(here)
    args = list(case.args)
    if RUN in args:
        args[args.index(RUN)] = _waiting_run()
    result = runner.invoke(app, args, env={"COLUMNS": "100"})
    shown, found = _said(result.stdout, result.stderr, as_json="--json" in args)
    return [*found, *wrong_in(shown), *ending_problems(result, must_fail=case.must_fail)]


def ending_problems(result: Any, *, must_fail: bool) -> list[str]:
    """What is wrong with how a command ended: an exception, an exit code no command gives,
    0 for what must fail."""
    found = []
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        found.append(repr(result.exception))
    if result.exit_code not in (0, EXIT_FAILED, EXIT_USER_ERROR):
        found.append(f"exit {result.exit_code}")
    if must_fail and result.exit_code == 0:
        found.append("exit 0")
    return found


def test_the_generator_covers_every_command_and_kind() -> None:
    commands = {case.command for case in CASES}
    assert len(commands) >= 25
    kinds = {case.kind.split(": ")[-1].removesuffix(", json") for case in CASES}
    assert kinds >= {*WRONG, "an existing file", "full-width digits", "not a number (nan)"}
    assert sum("left off" in kind for kind in kinds) >= 4
    assert sum(", json" in case.kind for case in CASES) > 100
    assert len(CASES) > 400
    assert len(LOCKED_CASES) > 15


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated(tmp_path, monkeypatch)


def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path``, where the commands keep their workspace, runs, designs and temp files."""
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # restored after the cases moved into their own folders
    return tmp_path


@pytest.mark.parametrize(
    "command", sorted({case.command for case in CASES}), ids=lambda command: command
)
def test_a_bad_input_is_answered_in_japanese_and_fails(command: str, workspace: Path) -> None:
    assert_none_wrong([case for case in CASES if case.command == command], wrong_of, workspace)


def assert_none_wrong(cases: list[Any], wrong_of: Any, workspace: Path) -> None:
    """Each case run in a folder of its own under ``workspace``: ``wrong_of`` finds nothing."""
    found = {str(case): wrong_of(case, workspace / f"case{n}") for n, case in enumerate(cases)}
    wrong = {case: what for case, what in found.items() if what}
    assert wrong == {}, f"{len(wrong)} of {len(cases)} cases"


def test_a_locked_file_is_said_in_japanese(workspace: Path) -> None:
    """Each file a command reads, given one the user may not read (``chmod 000``; as root, the
    command runs without the capabilities that read any file)."""
    _lay_out(workspace)
    locked = workspace / FOLDER / LOCKED
    locked.write_bytes(SALES.encode())
    if os.geteuid() == 0:
        os.chown(locked, NOBODY_UID, NOBODY_UID)
    locked.chmod(0)
    env = {**os.environ, "TMPDIR": str(workspace), "COLUMNS": "100"}
    wrong = {}
    for case in LOCKED_CASES:
        args = list(case.args)
        if RUN in args:
            args[args.index(RUN)] = _waiting_run()
        command = [*_as_user_without_override(), sys.executable, "-m", "keiri_agent", *args]
        done = subprocess.run(command, cwd=workspace, env=env, capture_output=True, text=True)
        found = wrong_in(done.stdout + done.stderr)
        if done.returncode not in (EXIT_FAILED, EXIT_USER_ERROR):
            found.append(f"exit {done.returncode}")
        if found:
            wrong[str(case)] = found
    assert wrong == {}, f"{len(wrong)} of {len(LOCKED_CASES)} cases"


@pytest.mark.parametrize("given", ["ない フォルダ", "控え 売上.csv"])
def test_an_audit_of_a_runs_folder_that_is_not_there_fails(given: str, workspace: Path) -> None:
    """An audit export of a mistyped ``--runs-dir`` would list no runs and pass for a quiet
    period: it fails, saying what was given."""
    (workspace / "控え 売上.csv").write_bytes(SALES.encode())
    args = ["audit", "export", "--from", "2024-04-01", "--to", "2024-04-30", "--runs-dir", given]
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_USER_ERROR
    assert f"（--runs-dir）に指定した「{given}」" in result.stderr
    assert wrong_in(result.stdout + result.stderr) == []
