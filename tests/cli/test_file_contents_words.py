"""Property: whatever file a user gives a command, what they see is Japanese.

``test_no_library_english`` gives every path parameter paths that are wrong (missing, a folder,
locked); here every path parameter of every command gets a file that is there but not what the
command expects, as back offices have them: a CP932 export, a UTF-16 file (Excel's "Unicode
text"), binary junk under a workbook's name, an empty file, broken YAML. And ``sandbox run`` gets
programs Python cannot read, made by breaking good ones the way people do (a Japanese comma or
bracket typed by the IME, a bracket left open, a quote left open, a tab among spaces, a line cut
short): Python's English (``invalid syntax. Perhaps you forgot a comma?``) must not reach the
screen; the line of code and its position are shown. An exception the program raises is said
in Japanese by its kind (``test_sandbox_failure_words``).
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import pytest

from keiri_agent.cli import app
from keiri_agent.cli.common import EXIT_FAILED, EXIT_USER_ERROR
from tests.cli.test_no_library_english import (
    LONG_RUNNING,
    Case,
    _leaves,
    _path_cases,
    library_english,
    runner,
)

SALES = "売上日,得意先,金額\n2024/04/01,あおば商事,165000\n"
# A file of each shape, under the name it arrives with.
CONTENTS: dict[str, tuple[str, bytes]] = {
    "a CP932 export": ("売上_sjis.csv", SALES.encode("cp932")),
    "UTF-16 text": ("売上.yaml", SALES.encode("utf-16")),
    "binary junk": ("売上.xlsx", bytes(range(256)) * 8),
    "an empty file": ("空.yaml", b""),
    "broken YAML": ("手順.yaml", "id: [壊れた\n  nodes: {\n".encode()),
}
CONTENT_CASES = [
    case
    for path, command in _leaves()
    if tuple(path) not in LONG_RUNNING
    for case in _path_cases(path, command, {kind: name for kind, (name, _) in CONTENTS.items()})
]


def test_the_generator_gives_every_path_each_content() -> None:
    assert {case.kind for case in CONTENT_CASES} == set(CONTENTS)
    assert len(CONTENT_CASES) > 150


def _leaks(case: Case, here: Path) -> list[str]:
    here.mkdir(parents=True)
    for name, data in CONTENTS.values():
        (here / name).write_bytes(data)
    (here / "adir").mkdir()
    (here / "afile.txt").write_text("print('x')\n", encoding="utf-8")
    os.chdir(here)
    result = runner.invoke(app, list(case.args), env={"COLUMNS": "100"})
    found = library_english(result.stdout + result.stderr)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        found.append(repr(result.exception))
    if found or result.exit_code not in (0, EXIT_FAILED, EXIT_USER_ERROR):
        return [f"exit {result.exit_code}", *found]
    return []


@pytest.mark.parametrize(
    "command", sorted({case.command for case in CONTENT_CASES}), ids=lambda command: command
)
def test_a_file_of_another_shape_is_answered_in_japanese(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    cases = [case for case in CONTENT_CASES if case.command == command]
    leaks = {}
    for number, case in enumerate(cases):
        if found := _leaks(case, tmp_path / f"case{number}"):
            leaks[str(case)] = found
    assert leaks == {}, f"{len(leaks)} of {len(cases)} cases"


# --- programs Python cannot read ----------------------------------------------------------

GOOD_PROGRAMS = (
    'import pandas as pd\ndf = pd.read_csv("売上.csv")\nprint(df.groupby("得意先")["金額"].sum())\n',
    "total = 0\nfor amount in [165000, 22000, -660]:\n    if amount > 0:\n        total += amount\n"
    "print(f'合計 {total:,} 円')\n",
    'rows = {"あおば商事": (1, 2), "北斗運輸": [3, 4]}\ndef tax(x):\n    return round(x * 0.1)\n'
    "print(tax(sum(rows['北斗運輸'])))\n",
)
# How people break code: what replaces a character of it.
TYPOS = {",": "、", "(": "（", ")": "）", ":": "：", '"': "”", "=": "＝", "]": "", ")\n": "\n"}
SEED = 20261206
MUTANTS_PER_PROGRAM = 25


def _broken(rng: random.Random, program: str) -> str:
    """``program`` broken once: a typo, a line cut short, a tab, a stray indent, a NUL."""
    way = rng.randrange(6)
    if way <= 1:
        typo = rng.choice([t for t in TYPOS if t in program])
        spots = [i for i in range(len(program)) if program.startswith(typo, i)]
        spot = rng.choice(spots)
        return program[:spot] + TYPOS[typo] + program[spot + len(typo) :]
    lines = program.splitlines(keepends=True)
    at = rng.randrange(len(lines))
    if way == 2:
        lines[at] = lines[at][: rng.randrange(1, max(2, len(lines[at]) - 1))] + "\n"
    elif way == 3:
        lines[at] = "\t" + lines[at] if at else "  " + lines[at]
    elif way == 4:
        lines.insert(at, "    # メモ\n    x = 1\n")
    else:
        lines[at] = lines[at].replace("\n", "\x00\n")
    return "".join(lines)


def _syntax_errors() -> list[str]:
    rng = random.Random(SEED)
    found: list[str] = []
    for program in GOOD_PROGRAMS:
        for _ in range(MUTANTS_PER_PROGRAM):
            code = _broken(rng, program)
            try:
                compile(code, "<broken>", "exec")
            except (SyntaxError, ValueError):
                found.append(code)
    return sorted(set(found))


BROKEN = _syntax_errors()


def test_the_generator_breaks_programs_in_many_ways() -> None:
    reasons = set()
    for code in BROKEN:
        try:
            compile(code, "<broken>", "exec")
        except SyntaxError as exc:
            reasons.add(exc.msg.split(" (")[0].split("'")[0])
        except ValueError:
            reasons.add("null bytes")
    assert len(BROKEN) > 40
    assert len(reasons) > 6, reasons


def _without_code(shown: str, code: str) -> str:
    """``shown`` less the user's own lines of code (quoted to show where; not English to us)."""
    for line in sorted(code.replace("\x00", "\\x00").splitlines(), key=len, reverse=True):
        if line.strip():
            shown = shown.replace(line.strip(), " ")
    return shown


def test_a_program_python_cannot_read_is_said_in_japanese(tmp_path: Path) -> None:
    leaks = {}
    for number, code in enumerate(BROKEN):
        program = tmp_path / f"broken{number}.py"
        program.write_bytes(code.encode())
        args = ["sandbox", "run", str(program), "--workdir", str(tmp_path / "work")]
        result = runner.invoke(app, args, env={"COLUMNS": "100"})
        shown = result.stdout + result.stderr
        if found := library_english(_without_code(shown, code)):
            leaks[repr(code)] = found
        assert result.exit_code == EXIT_FAILED, shown
        assert "コードに構文エラーがあります" in shown
    assert leaks == {}, f"{len(leaks)} of {len(BROKEN)} programs"


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("x = [1 2]\n", "カンマ「,」が抜けていませんか"),
        ('print("合計"\n', "「(」が閉じていません"),
        ("x = 1、2\n", "使えない文字「、」（U+3001）があります"),
        ("if x：\n    pass\n", "使えない文字「：」（U+FF1A）があります"),
        ("for a in b:\nprint(a)\n", "for の後に字下げしたブロックが必要です"),
        ("s = '売上\n", "文字列の引用符が閉じていません"),
    ],
)
def test_a_syntax_error_says_what_is_wrong_and_where(code: str, said: str, tmp_path: Path) -> None:
    program = tmp_path / "code.py"
    program.write_text(code, encoding="utf-8")
    result = runner.invoke(
        app,
        ["sandbox", "run", str(program), "--workdir", str(tmp_path / "w")],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == EXIT_FAILED
    # the console wraps at its own width, fixed when another test made it first (COLUMNS aside)
    assert "".join(said.split()) in "".join(result.stderr.split())
    assert "行目" in result.stderr
    shown_lines = result.stderr.splitlines()  # the line of code on its own, not "\n" escaped
    assert any(line.strip() == code_line for line in shown_lines for code_line in code.splitlines())
    assert library_english(result.stderr) == []
