"""CLI cold start: every command as a user starts it, a fresh process each time (issues 20, 33).

The cases come from the Typer app itself, so a new command is measured without editing this file:

- ``--help`` of ``keiri-agent``, of every command group and of every command;
- the missing-key error of every command that calls a model (its callback calls
  ``require_llm``): no ``OPENAI_API_KEY``, no ``OPENAI_BASE_URL``, exit code 2 with the Japanese
  ``CONFIGURATION_ERROR`` naming the missing key (``OPENAI_API_KEY``, the same on any ref); its arguments are in ``NO_KEY_ARGS`` (a model command without them
  is an error here and in tests/cli/test_cli_start.py);
- issue 20's work: ``helpdesk search``, ``blocks search``, ``blocks list``, ``plan validate``.

Budget: each case within ``BUDGET_S`` wall on this machine. Every round runs a bare
``python -c pass`` next to the case (the baseline, so the ratios are of one run on one machine
under one load), then the case; with ``--before REF`` also the source tree of a git ref,
exported with ``git archive`` and put first on ``PYTHONPATH`` (same interpreter and packages;
each side searches its own freshly ingested copy of the sample knowledge base), alternating.
Both trees are compiled to bytecode first, as ``pip install`` leaves a package.

Printed per case: median wall and CPU time (user + system of the child, which a busy machine
inflates less than wall time), the wall time over the baseline's, and whether it is within the
budget; with ``--before`` the ref's medians too.

Run: ``python -m benchmarks.cli_start [--runs 5] [--before REF] [--match "no key"]``
"""

from __future__ import annotations

import argparse
import ast
import compileall
import inspect
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import machine_note

__all__ = ["NO_KEY_ARGS", "Case", "cases", "command_paths", "main", "model_commands"]

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 1.5  # issue 33: every command's --help and missing-key error, wall, on this machine
RUN_APP = "import sys; from keiri_agent.cli import app; sys.argv[0] = 'keiri-agent'; app()"
KEY_CHECK = "require_llm"  # the call that marks a command as one that calls a model
# Settings a developer's shell or .env may hold; none reaches a measured process.
SETTING_PREFIXES = ("KEIRI_", "OPENAI_", "AZURE_OPENAI_", "ANTHROPIC_")
SAMPLE_CSV = ROOT / "examples" / "data" / "monthly_sales_report" / "売上明細.csv"
SAMPLE_PLAN = ROOT / "designs" / "examples" / "monthly_sales_report.yaml"
# The rest of each model command's line; the help desk's index is KEIRI_HELPDESK_INDEX.
NO_KEY_ARGS: dict[str, tuple[str, ...]] = {
    "analyze": (str(SAMPLE_CSV), "取引先別の売上を集計して"),
    "convert": ("売上明細.csv を Parquet に変換して", "--source", str(SAMPLE_CSV)),
    "helpdesk ask": ("仮払金の精算方法を教えてください",),
    "plan generate": ("--instruction", "請求書と入金明細を照合して差異を Excel に出力する"),
}
WORK: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("helpdesk search", ("仮払金の精算", "--tool", "hybrid", "--json")),
    ("blocks search", ("請求書と入金明細を照合する", "--mode", "bm25")),
    ("blocks list", ()),
    ("plan validate", (str(SAMPLE_PLAN),)),
)


@dataclass(frozen=True)
class Case:
    """One command line, what it must end with, and how it is labelled."""

    label: str
    args: tuple[str, ...]
    exit_code: int = 0
    stderr_has: str = ""  # text the command's stderr must contain


def _walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _walk(sub, (*path, name))


def _commands() -> list[tuple[tuple[str, ...], Any]]:
    import typer.main

    from keiri_agent.cli import app

    return list(_walk(typer.main.get_command(app), ()))


def command_paths() -> list[tuple[str, ...]]:
    """Every command and command group of the app, as its words (``()`` is the app itself)."""
    return [path for path, _ in _commands()]


def _calls(function: Any, name: str) -> bool:
    function = inspect.unwrap(function)
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    return any(
        isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
        for node in ast.walk(tree)
    )


def model_commands() -> set[str]:
    """The commands whose callback checks a model's key (``require_llm``), as "group sub"."""
    return {
        " ".join(path)
        for path, command in _commands()
        if not hasattr(command, "commands") and _calls(command.callback, KEY_CHECK)
    }


def cases() -> list[Case]:
    """Every ``--help``, every model command's missing-key error, and issue 20's work."""
    found = [Case(" ".join((*path, "--help")), (*path, "--help")) for path in command_paths()]
    missing = model_commands() - NO_KEY_ARGS.keys()
    if missing:
        raise LookupError(f"no NO_KEY_ARGS for the model commands {sorted(missing)}")
    for label in sorted(NO_KEY_ARGS):
        args = (*label.split(), *NO_KEY_ARGS[label])
        found.append(Case(f"{label} (no key)", args, 2, "OPENAI_API_KEY"))
    found += [Case(label, (*label.split(), *args)) for label, args in WORK]
    return found


@dataclass(frozen=True)
class _Side:
    """A source tree and the folders its processes use."""

    name: str
    src: Path
    home: Path  # runs, workspace, cache and the knowledge base of this side

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith(SETTING_PREFIXES)}
        env.update(
            PYTHONPATH=str(self.src),
            KEIRI_HELPDESK_INDEX=str(self.home / "index"),
            KEIRI_RUNS_DIR=str(self.home / "runs"),
            KEIRI_WORKSPACE_ROOT=str(self.home / "workspace"),
            KEIRI_DESIGNS_DIR=str(self.home / "designs"),
            KEIRI_CACHE_DIR=str(self.home / "cache"),
            NO_COLOR="1",
        )
        return env


def _export(ref: str, target: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src", "designs", "examples"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target / "src"  # its designs/ and examples/ beside it, as in a checkout


def _ingest(side: _Side) -> None:
    examples = ROOT / "examples" / "helpdesk"
    subprocess.run(
        [sys.executable, "-c", RUN_APP, "helpdesk", "ingest", "--manual", str(examples / "manual"),
         "--qa", str(examples / "qa.csv"), "--json"],
        env=side.env(), cwd=side.home, check=True, capture_output=True,
    )  # fmt: skip


def _run(side: _Side, code: str, case: Case) -> tuple[float, float] | None:
    """(wall s, CPU s) of one fresh process; None when it did not end as ``case`` says."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, *case.args],
        env=side.env(), cwd=side.home, capture_output=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stderr = done.stderr.decode(errors="replace")
    if done.returncode != case.exit_code or case.stderr_has not in stderr:
        if side.name != "after":
            return None  # the command or its behaviour is new
        raise RuntimeError(f"{case.label}: exit {done.returncode}: {stderr[-800:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median(times: list[tuple[float, float]], which: int) -> float:
    return statistics.median(t[which] for t in times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per case and side")
    parser.add_argument("--before", metavar="REF", help="also measure this git ref's tree")
    parser.add_argument("--match", default="", help="only the cases whose label contains this")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))  # the commands of this tree
    measured = [case for case in cases() if args.match in case.label]
    print(machine_note(f"{args.runs} runs per case and side; load average {os.getloadavg()}"))
    with tempfile.TemporaryDirectory(prefix="keiri-cli-start-") as tmp:
        root = Path(tmp)
        sides = [_Side("after", ROOT / "src", root / "after")]
        if args.before:
            sides.insert(0, _Side("before", _export(args.before, root / "tree"), root / "before"))
        for side in sides:
            side.home.mkdir()
            compileall.compile_dir(side.src, quiet=1)
            _ingest(side)
        baseline = Case("python -c pass", ())
        base: list[tuple[float, float]] = []
        head = "| command | after wall s | × `python -c pass` | after CPU s | ≤ 1.5 s |"
        rule = "|---|---:|---:|---:|:---:|"
        if args.before:
            head += " before wall s | before CPU s |"
            rule += "---:|---:|"
        print(f"\n{head}\n{rule}")
        over: list[str] = []
        for case in measured:
            times: dict[str, list[tuple[float, float]]] = {side.name: [] for side in sides}
            for _ in range(args.runs):
                base.append(_run(sides[-1], "pass", baseline) or (0.0, 0.0))
                for side in sides:
                    result = _run(side, RUN_APP, case)
                    if result is not None:
                        times[side.name].append(result)
            wall = _median(times["after"], 0)
            ratio = wall / _median(base, 0)
            within = "✓" if wall <= BUDGET_S else "✗"
            if wall > BUDGET_S:
                over.append(case.label)
            row = f"| {case.label} | {wall:.2f} | {ratio:.1f} | {_median(times['after'], 1):.2f} | {within} |"
            if args.before:
                old = times["before"]
                row += f" {_median(old, 0):.2f} | {_median(old, 1):.2f} |" if old else " — | — |"
            print(row, flush=True)
    print(
        f"\n`python -c pass`: median wall {_median(base, 0):.3f} s, CPU {_median(base, 1):.3f} s"
        f" ({len(base)} runs). Load average at the end: {os.getloadavg()}."
    )
    print(f"Over {BUDGET_S} s wall: {', '.join(over) if over else 'none'} ({len(measured)} cases).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
