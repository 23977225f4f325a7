"""The plans the runner benchmarks share (runner.py, runner_memory.py, plan_parse.py).

Built from ``bench.noop`` (``SPEC_DIR``); this module imports nothing heavy, so a memory
benchmark's baseline process can use it without loading LangGraph.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["SPEC_DIR", "chain_plan", "foreach_plan"]

SPEC_DIR = Path(__file__).resolve().parent / "specs"  # bench.noop (benchmarks/specs/noop.py)


def chain_plan(nodes: int) -> str:
    graph: list[dict[str, Any]] = [{"id": "n0", "block": "bench.noop", "in": {"value": 42}}]
    graph += [
        {"id": f"n{i}", "block": "bench.noop", "in": {"value": f"${{n{i - 1}.value}}"}}
        for i in range(1, nodes)
    ]
    return yaml.safe_dump(
        {"apiVersion": "v1", "id": "bench_chain", "graph": graph}, sort_keys=False
    )


def foreach_plan(concurrency: int, *, wait_s: float | None = None) -> str:
    """A foreach over ``vars.items`` whose body is one ``bench.noop`` node (``bench.wait`` of
    ``wait_s`` seconds when given)."""
    work: dict[str, Any] = {"id": "work", "block": "bench.noop", "in": {"value": "${item}"}}
    if wait_s is not None:
        work = {**work, "block": "bench.wait", "in": {"value": "${item}", "seconds": wait_s}}
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": "${vars.items}", "itemVar": "item", "max_concurrency": concurrency},
        "body": {
            "plan": {
                "graph": [work],
                "exports": [{"from": "work.value", "as": "result"}],
            }
        },
        "out": {"collect": "result"},
    }
    plan = {"apiVersion": "v1", "id": "bench_foreach", "vars": {"items": []}, "graph": [loop]}
    return yaml.safe_dump(plan, sort_keys=False)
