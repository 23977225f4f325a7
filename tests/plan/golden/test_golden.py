"""Golden outputs of `keiri-agent plan validate|dry-run|run --json` (issue 23).

Recorded before the plan engine was split into packages, and compared after every change since:
nothing a user sees may change when the code moves. Each plan under ``designs/examples/`` and each
fixture under ``tests/plan/golden/plans/`` is validated, dry-run and run (the example plans that call
an LLM are validated and dry-run only); stdout and the exit code are compared with
``expected/<plan>.<command>.json`` after masking run ids, time stamps, durations and the paths of
this checkout and of the test's temporary directory.

To record again after an intended change of output: ``KEIRI_GOLDEN_RECORD=1 pytest
tests/plan/golden`` and review the diff of ``expected/``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from tests.plan.blockkit import SPEC_DIR

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
FIXTURES = HERE / "plans"
EXPECTED = HERE / "expected"
EXAMPLES = REPO / "designs" / "examples"
LLM_EXAMPLES = {"invoice_reconciliation_llm", "expense_policy_check"}
COMMANDS = ("validate", "dry-run", "run")
RECORD = os.environ.get("KEIRI_GOLDEN_RECORD") == "1"

RUN_ID = re.compile(r"run_\d{14}_[0-9a-f]{8}")
STAMP = re.compile(r"\d{8}T\d{6}(?:\d{6})?Z")
ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?")


def _cases() -> list[tuple[str, Path, str]]:
    cases: list[tuple[str, Path, str]] = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for command in COMMANDS:
            if command == "run" and path.stem in LLM_EXAMPLES:
                continue
            cases.append((f"examples.{path.stem}", path, command))
    for path in sorted(FIXTURES.glob("*.yaml")):
        for command in COMMANDS:
            cases.append((f"fixtures.{path.stem}", path, command))
    return cases


def _mask(text: str, tmp: Path) -> str:
    for root, name in ((tmp, "<TMP>"), (FIXTURES, "<FIXTURES>"), (REPO, "<REPO>")):
        text = text.replace(str(root.resolve()), name).replace(str(root), name)
    text = RUN_ID.sub("<RUN_ID>", text)
    text = STAMP.sub("<STAMP>", text)
    return ISO.sub("<TIME>", text)


def _normalize(value: Any) -> Any:
    """Durations masked; keys sorted (independent nodes may finish in either order)."""
    if isinstance(value, dict):
        return {
            k: ("<MS>" if k.endswith("duration_ms") else _normalize(v))
            for k, v in sorted(value.items())
        }
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    return value


@pytest.mark.parametrize(
    ("name", "plan", "command"),
    [pytest.param(*case, id=f"{case[0]}.{case[2]}") for case in _cases()],
)
def test_plan_command_output_is_unchanged(
    name: str,
    plan: Path,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)  # the example plans' answers name files relative to the repository
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(FIXTURES / "designs"))
    args = ["plan", command, str(plan), "--json"]
    answers = EXAMPLES / "answers" / f"{plan.stem}.yaml"
    if command == "run" and plan.parent == EXAMPLES and answers.is_file():
        args += ["--answers", str(answers)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    stdout = _mask(result.stdout, tmp_path)
    try:
        output: Any = _normalize(json.loads(stdout))
    except json.JSONDecodeError:
        output = stdout  # a failure before any JSON was written: keep the text
    got = {"exit_code": result.exit_code, "stdout": output}
    expected_file = EXPECTED / f"{name}.{command}.json"
    if RECORD:
        EXPECTED.mkdir(exist_ok=True)
        text = json.dumps(got, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        expected_file.write_text(text, encoding="utf-8")
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    assert got == expected
