"""`when`, `while` and bindings are parsed once, when the graph is compiled (issue 23).

The parser's functions are counted with a profile hook on every thread while a plan runs: a
foreach over 1,000 items with a `when` and bound inputs must call them exactly as often as the
same plan over 10 items (validation and compilation parse each text once; iterations parse
nothing). Before the compiled graph held the parsed forms, every iteration parsed its `when`
and its inputs again.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import Plan, PlanRunner, parse_source
from keiri_agent.plan._dryrun.dryrun import dry_run
from keiri_agent.plan._dsl import expr, refs

PARSERS = {
    expr.parse_expression.__code__: "parse_expression",
    expr.compile_when.__code__: "compile_when",
    refs.split_template.__code__: "split_template",
    refs.parse_reference_at.__code__: "parse_reference_at",
}

PLAN = """\
apiVersion: v1
id: many
graph:
  - id: items
    block: test.items
    in: {{count: {count}}}
  - id: each
    type: loop
    foreach: {{input: "${{items.items}}", itemVar: it, indexVar: i, max_concurrency: 4}}
    body:
      plan:
        graph:
          - id: double
            block: test.add
            when: "${{it.n}} != 3 and ${{i}} >= 0"
            in: {{a: "${{it.n}}", b: "${{i}}"}}
        exports:
          - {{from: double.sum, as: doubled}}
    out: {{collect: doubled}}
"""


@contextmanager
def counting(counts: Counter[str]) -> Iterator[None]:
    lock = threading.Lock()

    def hook(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if event == "call":
            name = PARSERS.get(frame.f_code)
            if name is not None:
                with lock:
                    counts[name] += 1
        return None

    threading.setprofile(hook)  # threads started from here on (the run's workers)
    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def _parser_calls(registry: BlockRegistry, tmp_path: Path, count: int) -> Counter[str]:
    plan = tmp_path / f"many_{count}.yaml"
    plan.write_text(PLAN.format(count=count), encoding="utf-8")
    counts: Counter[str] = Counter()
    runs = tmp_path / "runs"
    refs._split_cached.cache_clear()  # each run starts with no text split yet
    with (
        counting(counts),
        PlanRunner(registry, runs_dir=runs, designs_dir=tmp_path, config={}) as r,
    ):
        result = r.run(plan)
    assert result.status == "success", result.error and result.error.to_dict()
    doubled = result.outputs["each"]["doubled"]
    assert len(doubled) == count
    assert doubled[3] is None  # the `when` skipped item 3
    assert doubled[count - 1] == 2 * (count - 1)
    return counts


def test_a_thousand_iterations_parse_nothing_more_than_ten(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    small = _parser_calls(registry, tmp_path, 10)
    large = _parser_calls(registry, tmp_path, 1000)
    assert small["compile_when"] > 0  # the hook sees the parser (validation, compilation)
    assert large == small


DRY_PLAN = """\
apiVersion: v1
id: dry
graph:
  - id: items
    block: test.items
    in: {count: 3}
  - id: first
    block: test.add
    when: "${items.items} != null"
    in: {a: 1, b: 2}
  - id: each
    type: loop
    foreach: {input: "${items.items}", itemVar: it}
    body:
      plan:
        graph:
          - id: double
            block: test.add
            when: "${it.n} != 3"
            in: {a: "${it.n}", b: 1}
        exports:
          - {from: double.sum, as: doubled}
    out: {collect: doubled}
  - id: again
    type: loop
    while: {condition: "${step.sum} < 10", max_iterations: 5}
    body:
      plan:
        graph:
          - id: step
            block: test.add
            in: {a: 1, b: 2}
        exports:
          - {from: step.sum, as: total}
    out: {collect: total}
"""


def test_the_dry_run_walks_the_compiled_conditions_and_parses_each_once(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    plan = Plan.model_validate(parse_source(DRY_PLAN).raw)
    counts: Counter[str] = Counter()
    with counting(counts):
        report = dry_run(plan, registry, designs_dir=tmp_path, config={}, env={})
    # Three conditions (a node's when, a loop body's when, a while): each parsed once, when the
    # graph is compiled. The walk used to parse them again per node (and loop bodies twice more).
    assert counts["compile_when"] == 3
    assert {n.node_id for n in report.nodes} >= {"first", "each/double", "again/step"}
    again = report.node("again")
    assert again is not None
    assert any("while 条件の初回判定" in note for note in again.notes)


def test_each_reference_of_a_chain_is_parsed_once_per_run(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    # Validation, compilation and the run all read each node's `${...}`: the text is split
    # once (refs keeps the parts), so a chain of n nodes parses n - 1 references, not 4(n - 1).
    nodes = 60
    graph = [{"id": "once_0", "block": "test.add", "in": {"a": 1, "b": 0}}]
    graph += [
        {"id": f"once_{i}", "block": "test.add", "in": {"a": f"${{once_{i - 1}.sum}}", "b": 1}}
        for i in range(1, nodes)
    ]
    plan = {"apiVersion": "v1", "id": "chain_once", "graph": graph}
    refs._split_cached.cache_clear()  # other tests may have split these texts already
    counts: Counter[str] = Counter()
    with (
        counting(counts),
        PlanRunner(registry, runs_dir=tmp_path / "runs", designs_dir=tmp_path, config={}) as r,
    ):
        result = r.run(parse_source(yaml.safe_dump(plan, sort_keys=False)))
    assert result.status == "success", result.error and result.error.to_dict()
    assert result.outputs[f"once_{nodes - 1}"]["sum"] == nodes
    assert counts["parse_reference_at"] == nodes - 1
