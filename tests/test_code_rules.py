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
    assert typing.get_type_hints(RunRecord.status.fget)["return"] == RunStatus | None
    summary = typing.get_type_hints(RunSummary)["status"]
    assert set(typing.get_args(summary)) == {RunStatus, typing.Literal["incomplete"]}
    assert (*typing.get_args(RunStatus), "incomplete") == RUN_STATUSES


# Modules that touch os.environ besides config.py, as ARCHITECTURE.md lists them.
ENVIRON_USERS = {
    "plan/_graph/env.py",  # a plan's ${env.*} source when PlanEnv.of is given no env
    "sandbox/forkserver.py",  # the environment of child processes
    "sandbox/jailserver.py",
    "sandbox/isolation.py",
    "cli/sandbox_setup.py",
    "retrieval/local_embedding.py",  # the bundled model's thread count for one call
}
MODULE_LINES = 600  # ARCHITECTURE.md: a longer module says there why it stays one


ENVIRON_NAMES = ("environ", "getenv", "putenv")


def _touches_environ(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found = node.value.id == "os" and node.attr in ENVIRON_NAMES
        elif isinstance(node, ast.ImportFrom):
            found = node.module == "os" and any(a.name in ENVIRON_NAMES for a in node.names)
        else:
            found = False
        if found:
            return True
    return False


def test_the_environment_is_read_where_architecture_md_says() -> None:
    users = {str(path.relative_to(SRC)) for path in SRC.rglob("*.py") if _touches_environ(path)}
    assert users - {"config.py"} == ENVIRON_USERS
    architecture = (SRC.parents[1] / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for module in ENVIRON_USERS:
        assert f"`{module.removesuffix('.py')}`" in architecture, module


def test_a_long_module_is_named_in_architecture_md() -> None:
    architecture = (SRC.parents[1] / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for path in SRC.rglob("*.py"):
        if len(path.read_text(encoding="utf-8").splitlines()) > MODULE_LINES:
            assert str(path.relative_to(SRC)) in architecture, path


def test_no_module_imports_a_private_name_of_another() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("keiri_agent"):
                names = [a.name for a in node.names]
                private = [n for n in names if n.startswith("_") and not n.startswith("__")]
                found += [f"{path.relative_to(SRC)}: {node.module}.{n}" for n in private]
    assert found == []
