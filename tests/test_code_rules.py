"""Rules of the code itself (issue 39): public doors without private keys, one run status type."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import keiri_agent
from keiri_agent.events import PlanComplete, RunStatus
from keiri_agent.plan import RunResult
from keiri_agent.plan._run.engine import FrameResult
from keiri_agent.plan._run.runstate import RUN_STATUSES, RunRecord, RunSummary

SRC = Path(keiri_agent.__file__).parent


def _underscored_parameters() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.name.startswith("_") and node.name != "__init__":
                continue
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
            where = f"{path.relative_to(SRC)}:{node.lineno} {node.name}"
            found += [f"{where}({name})" for name in names if name.startswith("_")]
    return found


def test_no_public_function_takes_an_underscored_parameter() -> None:
    assert _underscored_parameters() == []


def test_a_runs_status_is_typed_as_run_status_everywhere() -> None:
    for holder in (RunResult, FrameResult, PlanComplete):
        assert typing.get_type_hints(holder)["status"] == RunStatus, holder
    assert typing.get_type_hints(RunRecord)["status"] == RunStatus | None
    summary = typing.get_type_hints(RunSummary)["status"]
    assert set(typing.get_args(summary)) == {RunStatus, typing.Literal["incomplete"]}
    assert (*typing.get_args(RunStatus), "incomplete") == RUN_STATUSES
