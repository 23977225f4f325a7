"""Parsing a plan is linear in its nodes (issue 25): no cycle collection walks the heap meanwhile,
and a parse holds nothing per node besides the data and the source map it returns.

Wall time is not asserted (benchmarks/plan_parse.py prints the 3,000/1,000 ratio); what made it
super-linear is counted instead. Every full collection during a parse walked the whole heap, and
a longer plan paid for more and larger walks; a parse builds no reference cycle, so none has to
run. And PyYAML's node tree (a peak of 2.5x the memory of the result) made a 3,000-node parse take
its memory from the OS anew every time (24x the page faults of 1,000 nodes); plain YAML is now
built from the parser's events directly.
"""

from __future__ import annotations

import gc
import threading
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from keiri_agent.plan import load_yaml, parse_source


def _chain(nodes: int) -> str:
    graph: list[dict[str, Any]] = [{"id": "n0", "block": "bench.noop", "in": {"value": 42}}]
    graph += [
        {"id": f"n{i}", "block": "bench.noop", "in": {"value": f"${{n{i - 1}.value}}"}}
        for i in range(1, nodes)
    ]
    return yaml.safe_dump({"apiVersion": "v1", "id": "chain", "graph": graph}, sort_keys=False)


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations of the cycle collections that run while the test body runs."""
    seen: list[int] = []

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(count)
    try:
        yield seen
    finally:
        gc.callbacks.remove(count)


def test_parsing_3000_nodes_runs_no_cycle_collection(collections: list[int]) -> None:
    text = _chain(3000)
    gc.collect()
    collections.clear()
    source = parse_source(text)
    # Without the pause: about 180 young and 1-2 full collections. With it, at most the one
    # that the first allocation after it may start (of the young objects: linear).
    assert len(collections) <= 1
    assert 2 not in collections
    assert source.syntax_error is None
    assert len(source.raw["graph"]) == 3000
    last = text.splitlines().index("- id: n2999") + 1
    assert source.position(("graph", 2999, "id")) == (last, 3)  # the source map too
    assert gc.isenabled()  # and the collector is back on afterwards


def test_a_parse_holds_no_more_memory_than_the_data_and_source_map_it_returns() -> None:
    text = _chain(3000)
    parse_source(_chain(3))  # the loader's and the regexes' one-time state
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        source = parse_source(text)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # What is kept: the data and a position per path (the item, id, block, in, in.value).
    assert len(source.positions) >= 5 * 3000
    # PyYAML's node tree made the peak 2.5x what is kept; the one-pass reader keeps a few events.
    assert peak - start < 1.5 * (kept - start), (peak - start, kept - start)


def test_the_collector_comes_back_after_a_syntax_error_and_stays_off_if_it_was(
    collections: list[int],
) -> None:
    assert parse_source("a: [1, 2\n").syntax_error is not None
    assert gc.isenabled()
    gc.disable()
    try:
        load_yaml("a: 1")
        parse_source("graph: []")
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()


def test_concurrent_parses_share_the_pause_and_end_with_the_collector_on() -> None:
    text = _chain(300)
    errors: list[BaseException] = []

    def parse_many() -> None:
        try:
            for _ in range(20):
                assert parse_source(text).syntax_error is None
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=parse_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert gc.isenabled()
