"""Finding codes are one enum: the enum, docs/issue-codes.md and the source agree.

- every ``IssueCode`` is documented (meaning and fix), and the page documents no other code
  except the ``ErrorCode``s it lists as passed on from below;
- no module of ``plan/`` writes a code as a bare string (a new code cannot bypass the enum), and
  no module anywhere compares with a bare ``IssueCode`` value;
- every ``IssueCode`` is emitted somewhere in the source (no dead member);
- the codes in the recorded ``--json`` output of validate and dry-run are all documented.
- an unreadable ``KEIRI_PLAN_CONFIG`` is reported by validate, dry-run and run alike, and the
  page says so.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.errors import ErrorCode
from keiri_agent.plan import IssueCode
from tests.plan.blockkit import SPEC_DIR

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "keiri_agent"
PLAN = SRC / "plan"
ENUM_FILE = PLAN / "_dsl" / "issue_codes.py"
DOC = ROOT / "docs" / "issue-codes.md"
GOLDEN = Path(__file__).parent / "golden" / "expected"
PASSED_ON = "## 下の層から引き継ぐエラーコード"
CODE_SHAPE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
ROW = re.compile(r"^\| `([A-Z0-9_]+)` \|(.+)\|$")


def _documented() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(issue codes, codes passed on from below): code -> the row's other cells."""
    text = DOC.read_text(encoding="utf-8")
    own, below = text.split(PASSED_ON, 1)

    def rows(part: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for line in part.splitlines():
            match = ROW.match(line)
            if match:
                assert match.group(1) not in found, f"{match.group(1)} is documented twice"
                found[match.group(1)] = [c.strip() for c in match.group(2).split("|")]
        return found

    return rows(own), rows(below)


def test_every_issue_code_is_documented_with_its_meaning_and_fix() -> None:
    own, below = _documented()
    assert set(own) == {code.value for code in IssueCode}
    for code, cells in own.items():
        severity, phases, meaning, fix = cells
        assert severity in {"エラー", "警告"}, code
        assert phases, code
        assert set(phases.split()) <= {"V", "D", "R"}, code
        assert meaning, code
        assert fix, code
    assert below, "the codes passed on from the file layer are listed"
    assert set(below) <= {code.value for code in ErrorCode}
    assert not set(below) & set(own)


def _module_names() -> set[str]:
    """Every name a module of plan/ defines at its top level or exports (literals may name them)."""
    names: set[str] = set()
    for path in PLAN.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                names.add(node.name)
    return names


def _string_constants(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):  # getattr(os, "O_DIRECTORY"): an attribute's name, not a code
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in {"getattr", "hasattr"}:
            skip |= {id(arg) for arg in node.args[1:2]}
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


def _looks_like_a_code(value: str) -> bool:
    shaped = CODE_SHAPE.fullmatch(value) is not None
    return shaped and ("_" in value or value in {code.value for code in IssueCode})


def test_no_module_of_plan_writes_a_code_as_a_bare_string() -> None:
    names = _module_names()
    bare = [
        f"{path.relative_to(ROOT)}:{line}: {value}"
        for path in sorted(PLAN.rglob("*.py"))
        if path != ENUM_FILE
        for line, value in _string_constants(path)
        if _looks_like_a_code(value) and value not in names and not hasattr(os, value)
    ]
    assert bare == [], "use IssueCode (plan findings) or ErrorCode (errors) instead"


def test_no_module_anywhere_compares_with_a_bare_issue_code() -> None:
    values = {code.value for code in IssueCode}
    bare = [
        f"{path.relative_to(ROOT)}:{line}: {value}"
        for path in sorted(SRC.rglob("*.py"))
        if path not in {ENUM_FILE, SRC / "errors.py"}  # ErrorCode has INVALID_REFERENCE too
        for line, value in _string_constants(path)
        if value in values
    ]
    assert bare == []


def test_every_issue_code_is_emitted_by_the_source() -> None:
    used: set[str] = set()
    for path in SRC.rglob("*.py"):
        if path == ENUM_FILE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "IssueCode":
                used.add(node.attr)
    assert used <= {code.name for code in IssueCode}
    assert {code.name for code in IssueCode} - used == set()


def test_recorded_validate_and_dry_run_output_uses_documented_codes_only() -> None:
    own, below = _documented()
    seen: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("code"), str):
                seen.add(value["code"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    files = [*GOLDEN.glob("*.validate.json"), *GOLDEN.glob("*.dry-run.json")]
    assert len(files) > 20
    for path in files:
        walk(json.loads(path.read_text(encoding="utf-8")))
    assert {"YAML_SYNTAX", "SUBFLOW_NOT_FOUND", "CYCLE", "UNKNOWN_BLOCK"} <= seen
    assert seen - set(own) - set(below) == set()


@pytest.mark.parametrize(("command", "phase"), [("validate", "V"), ("dry-run", "D"), ("run", "R")])
def test_an_unreadable_plan_config_is_documented_for_every_phase_that_reports_it(
    command: str, phase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "plan_config.yaml"
    broken.write_text("start: [1,\n", encoding="utf-8")
    monkeypatch.setenv("KEIRI_PLAN_CONFIG", str(broken))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    plan = Path(__file__).parent / "golden" / "plans" / "calc.yaml"  # read only

    result = CliRunner().invoke(app, ["plan", command, str(plan), "--json"])

    assert json.loads(result.stdout)["error"]["code"] == ErrorCode.CONFIGURATION_ERROR
    _, below = _documented()
    assert phase in below[ErrorCode.CONFIGURATION_ERROR][0].split()
