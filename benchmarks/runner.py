"""Per-node overhead of the plan runner against an equivalent LangGraph graph.

Both sides run the same no-op work in the same process, one after the other in each round:

- **chain**: ``--chain`` (1,000) ``bench.noop`` nodes, each taking ``${prev.value}``, against a
  LangGraph ``StateGraph`` of as many sequential no-op nodes (one superstep each).
- **foreach**: a loop over ``--items`` (10,000) items whose body is one ``bench.noop`` node,
  with ``max_concurrency`` 1 and 8, against LangGraph's map pattern: a conditional edge returning
  ``[Send("work", {"item": i}) ...]`` into a no-op ``work`` node whose results a reducer
  (``Annotated[list, operator.add]``) collects, with ``max_concurrency`` set the same way.

The time of one run is the wall time of ``PlanRunner.run(source)`` (validation against the
block contracts, the JSONL run log, the plan snapshot, input/output JSON Schema checks: what a
user pays) against ``compiled.invoke(...)`` (no checkpointer: LangGraph persists nothing by
default). Loading the plan (``parse_source``) and building/compiling the LangGraph graph are
done once, outside the timed runs, and printed separately. Everything is warmed up once first
(the foreach on ``--warmup-items`` items). Per-node overhead is the best wall time over the
repeats divided by the number of nodes (items for the foreach).

Run: ``python benchmarks/runner.py [--chain 1000] [--items 10000] [--chain-repeat 5]
[--foreach-repeat 3] [--profile chain]``. ``--profile CASE`` additionally runs our side of one
case under cProfile and prints the top 25 functions by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import operator
import os
import platform
import pstats
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypedDict

import yaml
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import PlanRunner, PlanSource, parse_source

SPEC_DIR = Path(__file__).resolve().parent / "specs"  # bench.noop (benchmarks/specs/noop.py)
CONCURRENCY = (1, 8)

# --- our side -------------------------------------------------------------------------------


def chain_plan(nodes: int) -> str:
    graph: list[dict[str, Any]] = [{"id": "n0", "block": "bench.noop", "in": {"value": 42}}]
    graph += [
        {"id": f"n{i}", "block": "bench.noop", "in": {"value": f"${{n{i - 1}.value}}"}}
        for i in range(1, nodes)
    ]
    return yaml.safe_dump(
        {"apiVersion": "v1", "id": "bench_chain", "graph": graph}, sort_keys=False
    )


def foreach_plan(concurrency: int) -> str:
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": "${vars.items}", "itemVar": "item", "max_concurrency": concurrency},
        "body": {
            "plan": {
                "graph": [{"id": "work", "block": "bench.noop", "in": {"value": "${item}"}}],
                "exports": [{"from": "work.value", "as": "result"}],
            }
        },
        "out": {"collect": "result"},
    }
    plan = {"apiVersion": "v1", "id": "bench_foreach", "vars": {"items": []}, "graph": [loop]}
    return yaml.safe_dump(plan, sort_keys=False)


class Ours:
    """A PlanRunner with the bench.noop spec dir, writing its run logs under a temp dir."""

    def __init__(self, root: Path) -> None:
        # builtin=False: only bench.noop; lookups are dict hits either way.
        self.registry = BlockRegistry([SPEC_DIR], builtin=False)
        self.runs_dir = root / "runs"
        designs = root / "designs"
        designs.mkdir(parents=True, exist_ok=True)
        # config={}: no plan config file; env: os.environ as for a user (the default).
        self.runner = PlanRunner(
            self.registry, runs_dir=self.runs_dir, designs_dir=designs, config={}
        )
        self.log_bytes: dict[str, int] = {}

    def close(self) -> None:
        self.runner.close()

    def run(
        self,
        case: str,
        source: PlanSource,
        vars: dict[str, Any] | None,
        expect: Callable[..., bool],
    ) -> None:
        result = self.runner.run(source, vars=vars)
        if result.status != "success" or not expect(result.outputs):
            raise SystemExit(f"{case}: our run failed: {result.status} {result.error}")
        assert result.log_path is not None
        self.log_bytes[case] = result.log_path.stat().st_size

    def cleanup(self) -> None:
        """Remove the run logs (outside the timed region; keeps the disk small)."""
        shutil.rmtree(self.runs_dir, ignore_errors=True)


# --- LangGraph side -------------------------------------------------------------------------


class ChainState(TypedDict):
    value: Any


class MapState(TypedDict):
    items: list[Any]
    results: Annotated[list[Any], operator.add]


class WorkState(TypedDict):
    item: Any


def _noop(state: ChainState) -> dict[str, Any]:
    return {"value": state["value"]}


def _work(state: WorkState) -> dict[str, Any]:
    return {"results": [state["item"]]}


def _fan_out(state: MapState) -> list[Send]:
    return [Send("work", {"item": item}) for item in state["items"]]


def langgraph_chain(nodes: int) -> Any:
    graph = StateGraph(ChainState)
    for i in range(nodes):
        graph.add_node(f"n{i}", _noop)
    graph.add_edge(START, "n0")
    for i in range(1, nodes):
        graph.add_edge(f"n{i - 1}", f"n{i}")
    graph.add_edge(f"n{nodes - 1}", END)
    return graph.compile()


def langgraph_map() -> Any:
    graph = StateGraph(MapState)
    graph.add_node("work", _work)
    graph.add_conditional_edges(START, _fan_out, ["work"])
    graph.add_edge("work", END)
    return graph.compile()


# --- measurement ----------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    nodes: int
    repeat: int
    ours: Callable[[], None]
    langgraph: Callable[[], None]
    warmup: list[Callable[[], None]]
    setup_ms: tuple[float, float]  # ours (parse_source), LangGraph (build + compile)
    cleanup: Callable[[], None]
    times: dict[str, list[float]] = field(default_factory=lambda: {"ours": [], "langgraph": []})

    def measure(self) -> None:
        for warm in self.warmup:
            warm()
        self.cleanup()
        for _ in range(self.repeat):  # alternate the sides round by round
            for side, fn in (("ours", self.ours), ("langgraph", self.langgraph)):
                start = time.perf_counter()
                fn()
                self.times[side].append(time.perf_counter() - start)
                self.cleanup()

    def per_node_us(self, side: str) -> float:
        return min(self.times[side]) / self.nodes * 1e6


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - start) * 1000


def build_cases(ours: Ours, args: argparse.Namespace) -> list[Case]:
    cases: list[Case] = []
    n = args.chain
    source, parse_ms = _timed(lambda: parse_source(chain_plan(n)))
    chain_app, build_ms = _timed(lambda: langgraph_chain(n))
    last = f"n{n - 1}"
    config = {"recursion_limit": 2 * n + 10}
    chain_name = f"chain of {n:,} nodes"

    def ours_chain() -> None:
        ours.run(chain_name, source, None, lambda out: out[last]["value"] == 42)

    def lg_chain() -> None:
        if chain_app.invoke({"value": 42}, config)["value"] != 42:
            raise SystemExit("chain: LangGraph run returned the wrong value")

    cases.append(
        Case(
            chain_name,
            n,
            args.chain_repeat,
            ours_chain,
            lg_chain,
            [ours_chain, lg_chain],
            (parse_ms, build_ms),
            ours.cleanup,
        )
    )

    items = list(range(args.items))
    warm_items = items[: args.warmup_items]
    map_app, map_build_ms = _timed(langgraph_map)
    for concurrency in CONCURRENCY:
        loop_source, loop_parse_ms = _timed(lambda c=concurrency: parse_source(foreach_plan(c)))
        name = f"foreach {args.items:,} items, max_concurrency {concurrency}"

        def ours_each(
            data: list[int] = items, src: PlanSource = loop_source, case: str = name
        ) -> None:
            ours.run(case, src, {"items": data}, lambda out: out["each"]["result"] == data)

        def lg_each(data: list[int] = items, c: int = concurrency) -> None:
            result = map_app.invoke({"items": data}, {"max_concurrency": c})
            if sorted(result["results"]) != data:
                raise SystemExit("foreach: LangGraph run collected the wrong results")

        cases.append(
            Case(
                name,
                args.items,
                args.foreach_repeat,
                ours_each,
                lg_each,
                [
                    lambda f=ours_each: f(warm_items),
                    lambda f=lg_each: f(warm_items),
                ],
                (loop_parse_ms, map_build_ms),
                ours.cleanup,
            )
        )
    return cases


PROFILE_CASES = {"chain": 0, "foreach1": 1, "foreach8": 2}  # indexes into build_cases()


def profile(case: Case) -> None:
    """Our side of ``case`` under cProfile: top 25 by cumulative time.

    Loops run on their own threads (and foreach iterations on a pool), so every thread started
    during the run gets its own profiler; the stats are merged, which sums time across threads.
    """
    profilers = [cProfile.Profile()]

    def start_thread_profiler(*_: Any) -> None:
        sys.setprofile(None)
        profiler = cProfile.Profile()
        profilers.append(profiler)
        profiler.enable()

    threading.setprofile(start_thread_profiler)
    profilers[0].enable()
    try:
        case.ours()
    finally:
        profilers[0].disable()
        threading.setprofile(None)  # type: ignore[arg-type]
    print(
        f"\ncProfile of our side, {case.name} ({len(profilers)} threads, top 25 by cumulative time):"
    )
    stats = pstats.Stats(profilers[0], stream=sys.stdout)
    for profiler in profilers[1:]:
        profiler.create_stats()
        stats.add(profiler)
    stats.strip_dirs().sort_stats("cumulative").print_stats(25)


def print_results(cases: list[Case], ours: Ours) -> None:
    print("\nPer-node overhead (best wall time / nodes):\n")
    print("| case | ours µs/node | LangGraph µs/node | ratio LangGraph/ours | runs |")
    print("|---|---:|---:|---:|---:|")
    for case in cases:
        mine, theirs = case.per_node_us("ours"), case.per_node_us("langgraph")
        print(
            f"| {case.name} | {mine:,.1f} | {theirs:,.1f} | {theirs / mine:.2f}x | {case.repeat} |"
        )
    print("\nOnce per plan/graph, outside the timed runs:\n")
    print(
        "| case | ours: parse_source ms | LangGraph: build + compile ms | ours: run log bytes/node |"
    )
    print("|---|---:|---:|---:|")
    for case in cases:
        parse_ms, build_ms = case.setup_ms
        log = ours.log_bytes.get(case.name, 0) / case.nodes
        print(f"| {case.name} | {parse_ms:,.1f} | {build_ms:,.1f} | {log:,.0f} |")
    print(
        "\nratio > 1: LangGraph spends more per node than our runner (target: > 1 in every case)."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chain", type=int, default=1_000, help="nodes in the chain")
    parser.add_argument("--items", type=int, default=10_000, help="items in the foreach")
    parser.add_argument("--chain-repeat", type=int, default=5)
    parser.add_argument("--foreach-repeat", type=int, default=3)
    parser.add_argument("--warmup-items", type=int, default=1_000)
    parser.add_argument(
        "--profile",
        choices=list(PROFILE_CASES),
        help="also profile our side of this case (cProfile, top 25 by cumulative time)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"Python {platform.python_version()}, langgraph {version('langgraph')}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"
    )
    with tempfile.TemporaryDirectory() as tmp:
        ours = Ours(Path(tmp))
        try:
            cases = build_cases(ours, args)
            for case in cases:
                case.measure()
            print_results(cases, ours)
            print(f"total benchmark time {time.perf_counter() - started:.0f} s")
            if args.profile:
                profile(cases[PROFILE_CASES[args.profile]])
        finally:
            ours.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
