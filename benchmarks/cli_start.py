"""CLI cold start: each command as a user runs it (a fresh process each time), before and after.

The commands of issue 20's budget (≤ 1.5 s wall each on a quiet 2-core machine):
``helpdesk search``, ``blocks search``, ``blocks list``, ``plan validate``, plus ``--help``.
"Before" is the source tree of a baseline commit (default: main before issue 20, 8ed7ecf),
exported with ``git archive`` into a temporary directory and put first on ``PYTHONPATH``, so
both run on the same interpreter and packages; each side searches its own freshly ingested
copy of the sample knowledge base (their index formats differ). The runs alternate
(before, after, before, ...) so load on a shared machine hits both alike.

Printed per command: median wall time and median CPU time (user + system of the child, which a
busy machine inflates less than wall time), before and after, and their ratio.

Run: ``python -m benchmarks.cli_start [--runs 5] [--baseline 8ed7ecf]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import machine_note

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "8ed7ecf"  # main before issue 20
BUDGET_S = 1.5
RUN_APP = "import sys; from keiri_agent.cli import app; sys.argv[0] = 'keiri-agent'; app()"
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("helpdesk search", ("helpdesk", "search", "仮払金の精算", "--tool", "hybrid", "--json")),
    ("blocks search", ("blocks", "search", "請求書と入金明細を照合する", "--mode", "bm25")),
    ("blocks list", ("blocks", "list")),
    ("plan validate", ("plan", "validate", "designs/examples/monthly_sales_report.yaml")),
    ("--help", ("--help",)),
)


def _export(ref: str, target: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src", "designs", "examples"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target / "src"  # its designs/ and examples/ beside it, as in a checkout


def _env(src: Path, index: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEIRI_LLM_MODEL")}
    env.update(PYTHONPATH=str(src), KEIRI_HELPDESK_INDEX=str(index), NO_COLOR="1")
    return env


def _ingest(src: Path, index: Path) -> None:
    examples = ROOT / "examples" / "helpdesk"
    subprocess.run(
        [sys.executable, "-c", RUN_APP, "helpdesk", "ingest", "--manual", str(examples / "manual"),
         "--qa", str(examples / "qa.csv"), "--json"],
        env=_env(src, index), cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip


def _run(src: Path, index: Path, args: tuple[str, ...]) -> tuple[float, float]:
    """(wall s, CPU s) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RUN_APP, *args],
        env=_env(src, index), cwd=ROOT, capture_output=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per command and side")
    parser.add_argument("--baseline", default=BASELINE, help="git ref measured as 'before'")
    args = parser.parse_args(argv)
    print(machine_note(f"baseline {args.baseline}, {args.runs} runs per command and side"))
    with tempfile.TemporaryDirectory(prefix="keiri-cli-start-") as tmp:
        root = Path(tmp)
        sides = {"before": _export(args.baseline, root / "before"), "after": ROOT / "src"}
        indexes = {name: root / f"index-{name}" for name in sides}
        for name, src in sides.items():
            _ingest(src, indexes[name])
        print(
            "\n| command | before wall s | after wall s | before CPU s | after CPU s | CPU ratio |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for label, command in COMMANDS:
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
            for _ in range(args.runs):
                for name, src in sides.items():
                    times[name].append(_run(src, indexes[name], command))
            wall = {n: statistics.median(t[0] for t in times[n]) for n in sides}
            cpu = {n: statistics.median(t[1] for t in times[n]) for n in sides}
            print(
                f"| {label} | {wall['before']:.2f} | {wall['after']:.2f} | {cpu['before']:.2f}"
                f" | {cpu['after']:.2f} | {cpu['before'] / cpu['after']:.1f}x faster |"
            )
    print(f"\n(budget: {BUDGET_S} s wall per command on a quiet 2-core machine; medians)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
