"""Parsing a plan is linear in its nodes (issue 25): ``parse_source`` on 1,000 and 3,000 nodes.

The plans are the chain of ``benchmarks/runner.py`` (each node reads the one before it). Each
size is parsed ``--repeat`` times, alternating sizes, and the fastest time of each is kept (CPU
time of this process, so other processes on the machine matter less). The ratio is compared
with the linear expectation (3.0 for 3x the nodes); the goal is at most 3.5. ``validate`` (the
checker over the parsed plan) is measured the same way for reference.

Run: ``python benchmarks/plan_parse.py [--small 1000] [--large 3000] [--repeat 7]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.plans import SPEC_DIR, chain_plan
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import parse_source, validate_text

GOAL = 3.5


def _cpu_ms(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return (time.process_time() - start) * 1000


def fastest(sizes: tuple[int, int], repeat: int, work: Callable[[str], object]) -> list[float]:
    texts = [chain_plan(n) for n in sizes]
    best = [float("inf")] * len(sizes)
    for _ in range(repeat):
        for i, text in enumerate(texts):
            best[i] = min(best[i], _cpu_ms(lambda t=text: work(t)))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sizes = (args.small, args.large)
    linear = args.large / args.small
    registry = BlockRegistry([SPEC_DIR], builtin=False)  # bench.noop, as benchmarks/runner.py
    rows = [
        ("parse_source", fastest(sizes, args.repeat, parse_source)),
        (
            "validate (parse included)",
            fastest(sizes, args.repeat, lambda t: validate_text(t, registry)),
        ),
    ]
    print(f"| step | {sizes[0]:,} nodes ms | {sizes[1]:,} nodes ms | ratio | linear |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (small, large) in rows:
        print(f"| {name} | {small:.1f} | {large:.1f} | {large / small:.2f}x | {linear:.1f}x |")
    ratio = rows[0][1][1] / rows[0][1][0]
    verdict = "met" if ratio <= GOAL * linear / 3 else "NOT met"  # GOAL is for 3x the nodes
    print(f"parse_source: {ratio:.2f}x for {linear:.0f}x the nodes (goal <= {GOAL}x): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
