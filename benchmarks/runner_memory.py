"""Peak memory of a 100,000-item foreach at concurrency 8 against a process that did not run it.

Two fresh interpreters (started with ``subprocess``: a child's ``ru_maxrss`` would include the
peak of the process that forked it, so each child reports its own ``VmHWM`` from
``/proc/self/status`` instead) do the same set-up: import the plan runner, load the ``bench.noop``
block spec, parse the foreach plan and build the list of items. The **baseline** child stops
there; the **run** child then runs the plan once (``PlanRunner.run``, with its JSONL log, vars
file and output store, as a user would) and checks its collected outputs. The figure is the
run's peak minus the baseline's peak: what running the foreach adds, against the goal of 150 MB
(issue 25).

    python benchmarks/runner_memory.py [--items 100000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.plans import SPEC_DIR, foreach_plan

GOAL_MB = 150.0


def peak_mb() -> float:
    """This process's peak resident set (VmHWM) in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise SystemExit("/proc/self/status has no VmHWM (Linux only)")


def child(mode: str, items: int, concurrency: int, root: Path) -> dict[str, Any]:
    """One measured process: set up, then (``mode == "run"``) run the foreach once."""
    from keiri_agent.blocks.registry import BlockRegistry
    from keiri_agent.plan import PlanRunner, parse_source

    registry = BlockRegistry([SPEC_DIR], builtin=False)
    source = parse_source(foreach_plan(concurrency))
    values = list(range(items))
    designs = root / "designs"
    designs.mkdir(parents=True, exist_ok=True)
    runner = PlanRunner(registry, runs_dir=root / "runs", designs_dir=designs, config={})
    report: dict[str, Any] = {"mode": mode, "before_mb": peak_mb()}
    if mode == "run":
        started = time.perf_counter()
        result = runner.run(source, vars={"items": values})
        report["seconds"] = time.perf_counter() - started
        if result.status != "success" or result.outputs["each"]["result"] != values:
            raise SystemExit(f"the foreach did not succeed: {result.status} {result.error}")
        assert result.log_path is not None
        report["log_mb"] = result.log_path.stat().st_size / 2**20
    runner.close()
    report["peak_mb"] = peak_mb()
    return report


def measure(mode: str, items: int, concurrency: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="keiri-runmem-") as root:
        command = [
            sys.executable,
            __file__,
            "--child",
            mode,
            "--items",
            str(items),
            "--concurrency",
            str(concurrency),
            "--root",
            root,
        ]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{mode} child failed ({done.returncode}):\n{done.stderr[-4000:]}")
        report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--child", choices=("baseline", "run"), help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        report = child(args.child, args.items, args.concurrency, Path(args.root))
        print(json.dumps(report))
        return
    base = measure("baseline", args.items, args.concurrency)
    run = measure("run", args.items, args.concurrency)
    growth = run["peak_mb"] - base["peak_mb"]
    per_item_kb = growth * 1024 / max(args.items, 1)
    print(f"foreach of {args.items:,} items of bench.noop, max_concurrency {args.concurrency}")
    print(f"  baseline process (imports, plan parsed, items built): peak {base['peak_mb']:.1f} MB")
    print(
        f"  run process: peak {run['peak_mb']:.1f} MB (before the run {run['before_mb']:.1f} MB),"
        f" run {run['seconds']:.1f} s, log {run['log_mb']:.1f} MB"
    )
    verdict = "met" if growth <= GOAL_MB else "NOT met"
    print(
        f"  peak growth: {growth:.1f} MB ({per_item_kb:.2f} KB/item);"
        f" goal <= {GOAL_MB:.0f} MB: {verdict} ({growth / GOAL_MB:.2f}x the goal)"
    )


if __name__ == "__main__":
    main()
