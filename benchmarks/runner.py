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

The **floor** of the foreach is a bare ``ThreadPoolExecutor(max_workers=8)`` that maps the same
``bench.noop`` block's ``run`` over the items and writes one JSON line per item
(``{"item": i, "value": ...}``, one ``os.write`` on an ``O_APPEND`` descriptor, as the run log
does). Its fsync policy is the runner's for a foreach body: no fsync per item (nothing
downstream depends on one item's line until the loop ends) and one ``fsync`` of the file at the
end. It runs in the same rounds as both sides of the foreach at concurrency 8.

At the end the benchmark prints the goals of issue 25 with the measured ratios and PASS/FAIL:
foreach 10,000 at concurrency 8 within 4x the floor and at least 3x faster than LangGraph; the
chain of 1,000 nodes at least 2x faster than LangGraph. The run log is fsynced as a user runs it
(``KEIRI_RUN_LOG_FSYNC``, default on); the line printed first says which.

Run: ``python benchmarks/runner.py [--chain 1000] [--items 10000] [--chain-repeat 5]
[--foreach-repeat 3] [--profile chain]``. ``--profile CASE`` additionally runs our side of one
case under cProfile and prints the top 25 functions by cumulative time.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import cProfile
import json
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
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from benchmarks.plans import SPEC_DIR, chain_plan, foreach_plan
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import load_settings
from keiri_agent.plan import PlanRunner, PlanSource, parse_source

CONCURRENCY = (1, 8)
# Goals (issue 25), each checked on its case: (case key, kind, bound).
FLOOR_GOAL = 4.0  # foreach(8) ours / floor at most this
LANGGRAPH_GOALS = {"foreach8": 3.0, "chain": 2.0}  # LangGraph / ours at least this
BLOCKING_CHECK = 1.25  # a waiting body at concurrency 8: ours / LangGraph at most this

# --- our side -------------------------------------------------------------------------------


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


class Floor:
    """A bare thread pool: the same no-op per item and one JSON line per item (see above)."""

    def __init__(self, ours: Ours, root: Path) -> None:
        self.block = ours.registry.load("bench.noop")
        self.ctx = BlockContext(
            run_id="floor", plan_id="floor", node_id="work", block_version="1.0.0", workspace=root
        )
        self.path = root / "floor.jsonl"

    def run(self, items: list[Any], concurrency: int) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
        run, ctx = self.block.run, self.ctx

        def one(item: Any) -> Any:
            value = run({"value": item}, ctx)["value"]
            os.write(fd, (json.dumps({"item": item, "value": value}) + "\n").encode())
            return value

        try:
            with cf.ThreadPoolExecutor(max_workers=concurrency) as pool:
                results = list(pool.map(one, items))
            os.fsync(fd)
        finally:
            os.close(fd)
        if results != items:
            raise SystemExit("floor: the thread pool returned the wrong results")


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


def langgraph_map(wait_s: float | None = None) -> Any:
    """The map pattern; each ``work`` waits ``wait_s`` seconds first when given."""

    def waiting_work(state: WorkState) -> dict[str, Any]:
        time.sleep(wait_s or 0.0)
        return _work(state)

    graph = StateGraph(MapState)
    graph.add_node("work", _work if wait_s is None else waiting_work)
    graph.add_conditional_edges(START, _fan_out, ["work"])
    graph.add_edge("work", END)
    return graph.compile()


# --- measurement ----------------------------------------------------------------------------


@dataclass
class Case:
    key: str  # chain | foreach1 | foreach8
    name: str
    nodes: int
    repeat: int
    ours: Callable[[], None]
    langgraph: Callable[[], None]
    warmup: list[Callable[[], None]]
    setup_ms: tuple[float, float]  # ours (parse_source), LangGraph (build + compile)
    cleanup: Callable[[], None]
    floor: Callable[[], None] | None = None  # the bare thread pool (foreach at concurrency 8)
    times: dict[str, list[float]] = field(
        default_factory=lambda: {"ours": [], "langgraph": [], "floor": []}
    )

    def sides(self) -> list[tuple[str, Callable[[], None]]]:
        sides = [("ours", self.ours), ("langgraph", self.langgraph)]
        return sides + ([("floor", self.floor)] if self.floor is not None else [])

    def measure(self) -> None:
        for warm in self.warmup:
            warm()
        self.cleanup()
        for _ in range(self.repeat):  # alternate the sides round by round
            for side, fn in self.sides():
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


def build_cases(ours: Ours, floor: Floor, args: argparse.Namespace) -> list[Case]:
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
            "chain",
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

        def parse_loop(c: int = concurrency) -> PlanSource:
            return parse_source(foreach_plan(c))

        loop_source, loop_parse_ms = _timed(parse_loop)
        name = f"foreach {args.items:,} items, max_concurrency {concurrency}"

        def ours_each(
            data: list[int] = items, src: PlanSource = loop_source, case: str = name
        ) -> None:
            ours.run(case, src, {"items": data}, lambda out: out["each"]["result"] == data)

        def lg_each(data: list[int] = items, c: int = concurrency) -> None:
            result = map_app.invoke({"items": data}, {"max_concurrency": c})
            if sorted(result["results"]) != data:
                raise SystemExit("foreach: LangGraph run collected the wrong results")

        warmup: list[Callable[[], None]] = [
            partial(ours_each, warm_items),
            partial(lg_each, warm_items),
        ]
        bare = None
        if concurrency == 8:
            bare = partial(floor.run, items, concurrency)
            warmup.append(partial(floor.run, warm_items, concurrency))
        cases.append(
            Case(
                f"foreach{concurrency}",
                name,
                args.items,
                args.foreach_repeat,
                ours_each,
                lg_each,
                warmup,
                (loop_parse_ms, map_build_ms),
                ours.cleanup,
                bare,
            )
        )
    return cases


def blocking_check(ours: Ours, args: argparse.Namespace) -> None:
    """Items that wait still run side by side: a foreach whose body waits (``bench.wait``).

    Our foreach starts helper threads only once an item has run for ``HELP_AFTER_S`` (quick
    items run on the loop's own thread: see ``keiri_agent.plan._run.workers.Crew``). This
    checks the other side of that rule: a body that waits, as an LLM call does, reaches its
    ``max_concurrency`` and takes about as long as LangGraph's map, whose 8 threads start at once.
    """
    n, wait_s = args.blocking_items, args.blocking_ms / 1000
    items = list(range(n))
    times: dict[str, float] = {}
    for concurrency in (1, 8):
        src = parse_source(foreach_plan(concurrency, wait_s=wait_s))
        name = f"ours, max_concurrency {concurrency}"
        _, took = _timed(
            partial(
                ours.run, name, src, {"items": items}, lambda out: out["each"]["result"] == items
            )
        )
        times[name] = took
        ours.cleanup()
    app = langgraph_map(wait_s)
    result, took = _timed(lambda: app.invoke({"items": items}, {"max_concurrency": 8}))
    if sorted(result["results"]) != items:
        raise SystemExit("blocking: LangGraph run collected the wrong results")
    times["LangGraph, max_concurrency 8"] = took
    ideal = n * args.blocking_ms / 8
    print(
        f"\nA body that waits ({n:,} items, each waiting {args.blocking_ms:g} ms; "
        f"{ideal:,.0f} ms if 8 always wait side by side):\n"
    )
    print("| run | wall ms |")
    print("|---|---:|")
    for name, took in times.items():
        print(f"| {name} | {took:,.0f} |")
    ratio = times["ours, max_concurrency 8"] / times["LangGraph, max_concurrency 8"]
    ok = ratio <= BLOCKING_CHECK
    print(
        f"\nCheck: ours / LangGraph at max_concurrency 8 = {ratio:.2f}x "
        f"(<= {BLOCKING_CHECK:g}x: {'PASS' if ok else 'FAIL'})"
    )


PROFILE_CASES = ("chain", "foreach1", "foreach8")  # Case.key


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
        threading.setprofile(None)
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
    print(
        "| case | ours µs/node | LangGraph µs/node | ratio LangGraph/ours | floor µs/node | runs |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for case in cases:
        mine, theirs = case.per_node_us("ours"), case.per_node_us("langgraph")
        bare = f"{case.per_node_us('floor'):,.1f}" if case.times["floor"] else ""
        print(
            f"| {case.name} | {mine:,.1f} | {theirs:,.1f} | {theirs / mine:.2f}x | {bare} "
            f"| {case.repeat} |"
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
    print_goals(cases)


def print_goals(cases: list[Case]) -> None:
    """The floor and the goals of issue 25, each with its measured ratio and PASS/FAIL."""
    by_key = {case.key: case for case in cases}
    lines: list[tuple[str, float, str, bool]] = []
    each = by_key.get("foreach8")
    if each is not None and each.times["floor"]:
        floor_us, mine = each.per_node_us("floor"), each.per_node_us("ours")
        print(
            f"\nFloor: a bare ThreadPoolExecutor(8) calling bench.noop and writing one JSON line "
            f"per item ({each.nodes:,} items; no fsync per item, one at the end): "
            f"{floor_us:,.1f} µs/item; ours {mine:,.1f} µs/item."
        )
        ratio = mine / floor_us
        lines.append(
            (f"{each.name}: ours / floor", ratio, f"<= {FLOOR_GOAL:g}x", ratio <= FLOOR_GOAL)
        )
    for key, goal in LANGGRAPH_GOALS.items():
        case = by_key.get(key)
        if case is None:
            continue
        ratio = case.per_node_us("langgraph") / case.per_node_us("ours")
        lines.append((f"{case.name}: LangGraph / ours", ratio, f">= {goal:g}x", ratio >= goal))
    print("\nGoals (issue 25):\n")
    print("| goal | ratio | target | result |")
    print("|---|---:|---:|---|")
    for what, ratio, target, ok in lines:
        print(f"| {what} | {ratio:.2f}x | {target} | {'PASS' if ok else 'FAIL'} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chain", type=int, default=1_000, help="nodes in the chain")
    parser.add_argument("--items", type=int, default=10_000, help="items in the foreach")
    parser.add_argument("--chain-repeat", type=int, default=5)
    parser.add_argument("--foreach-repeat", type=int, default=3)
    parser.add_argument("--warmup-items", type=int, default=1_000)
    parser.add_argument("--blocking-items", type=int, default=160)
    parser.add_argument("--blocking-ms", type=float, default=20.0, help="wait of each item")
    parser.add_argument(
        "--profile",
        choices=list(PROFILE_CASES),
        help="also profile our side of this case (cProfile, top 25 by cumulative time)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    durable = load_settings().keiri_run_log_fsync
    print(
        f"Python {platform.python_version()}, langgraph {version('langgraph')}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}, run log fsync (KEIRI_RUN_LOG_FSYNC) "
        f"{'on' if durable else 'OFF'}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        ours = Ours(Path(tmp))
        try:
            cases = build_cases(ours, Floor(ours, Path(tmp)), args)
            for case in cases:
                case.measure()
            print_results(cases, ours)
            blocking_check(ours, args)
            print(f"total benchmark time {time.perf_counter() - started:.0f} s")
            if args.profile:
                profile(next(c for c in cases if c.key == args.profile))
        finally:
            ours.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
