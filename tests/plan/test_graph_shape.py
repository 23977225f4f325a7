"""A plan's edges, order and cycles are computed once, by ``graph_shape`` (issue 39).

The validator reports the shape's cycle, ``compile_graph`` runs in the shape's order and refuses
exactly the plans whose shape has a cycle, and the app draws the shape's edges
(``tests/ui/test_plan_graph.py``). Before, the validator collected its own edges while it
resolved references and ``compile_graph`` computed others: a node reading itself, or a loop body
reading its own loop, was a cycle to the validator and none to the compiled graph.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import GraphShape, Plan, graph_shape, parse_source, validate_text
from keiri_agent.plan._graph.compiled import CompiledGraph, compile_graph

REPO = Path(__file__).resolve().parents[2]
PLANS = sorted(
    [
        *(REPO / "designs" / "examples").glob("*.yaml"),
        *(REPO / "tests/plan/golden/plans").glob("*.yaml"),
    ]
)


def _plan(text: str) -> Plan:
    return Plan.model_validate(parse_source(text).raw)


def _same(shape: GraphShape, graph: CompiledGraph) -> None:
    assert list(shape.order) == graph.order
    assert {n: set(d) for n, d in shape.deps.items()} == graph.deps
    assert shape.bodies.keys() == graph.bodies.keys()
    for loop_id, body in shape.bodies.items():
        _same(body, graph.bodies[loop_id])


def _cycle_ids(message: str) -> tuple[str, ...]:
    """The node ids a cycle's message names, in order (``「name」（id）`` or ``'id'``)."""
    said = message.split(": ", 1)[1].split(" → ")
    return tuple(re.sub(r"^.*（([^（）]+)）$|^'(.*)'$", r"\1\2", node) for node in said)


@pytest.mark.parametrize("path", PLANS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_validator_and_the_compiled_graph_take_one_shape(
    path: Path, registry: BlockRegistry
) -> None:
    text = path.read_text(encoding="utf-8")
    source = parse_source(text)
    if source.syntax_error is not None:
        pytest.skip("not YAML: no graph to shape")
    try:
        plan = Plan.model_validate(source.raw)
    except Exception:
        pytest.skip("not a plan as a whole: the validator checks its nodes one by one")
    shape = graph_shape(plan.graph)
    report = validate_text(text, registry, designs_dir=path.parent, config={}, env={})
    cycles = [i.message for i in report.errors if i.code == "CYCLE" and i.file == source.file]
    if shape.cycle:
        assert [_cycle_ids(c) for c in cycles] == [shape.cycle]
        with pytest.raises(BlockError) as refused:  # a cycle, or a text that does not parse
            compile_graph(list(plan.graph))
        assert refused.value.details.get("nodes", list(shape.stuck)) == list(shape.stuck)
    else:
        assert cycles == []
        _same(shape, compile_graph(list(plan.graph), plan.exports))


SELF = """\
apiVersion: v1
id: self
graph:
  - {id: a, block: test.add, in: {a: 1, b: "${a.sum}"}}
"""

BODY_READS_ITS_LOOP = """\
apiVersion: v1
id: body_loop
graph:
  - id: each
    type: loop
    foreach: {input: [1, 2], itemVar: it}
    body:
      plan:
        graph:
          - {id: add, block: test.add, in: {a: "${it}", b: "${each.total}"}}
        exports:
          - {from: add.sum, as: total}
    out: {collect: total}
"""


@pytest.mark.parametrize(
    ("text", "cycle"),
    [
        (SELF, "「a + b」（a） → 「a + b」（a）"),
        (BODY_READS_ITS_LOOP, "「繰り返し」（each） → 「繰り返し」（each）"),
    ],
    ids=["self", "loop"],
)
def test_a_node_reading_itself_is_one_cycle_to_the_validator_and_the_compiler(
    text: str, cycle: str, registry: BlockRegistry, tmp_path: Path
) -> None:
    report = validate_text(text, registry, designs_dir=tmp_path, config={}, env={})
    assert [i.message for i in report.errors if i.code == "CYCLE"] == [
        f"ノードの依存関係が循環しています: {cycle}"
    ]
    with pytest.raises(BlockError) as refused:
        compile_graph(list(_plan(text).graph))
    assert refused.value.code == ErrorCode.PLAN_INVALID
    assert "循環" in refused.value.message


def test_a_bad_plan_has_a_shape_and_its_cycle_is_named_once(registry: BlockRegistry) -> None:
    graph: list[dict[str, Any]] = [
        {"id": "x", "block": "test.add", "in": {"a": "${y.sum"}},  # unclosed: reads nothing
        {"id": "y", "block": "no.such_block", "when": "${z.sum} >", "in": {"v": "${z.sum}"}},
        {"id": "z", "block": "test.add", "in": {"a": "${y.sum}", "b": "${x.sum}"}},
        {"id": "y", "block": "test.add"},  # a duplicate id counts at its first definition
    ]
    text = yaml.safe_dump({"apiVersion": "v1", "id": "bad", "graph": graph})
    shape = graph_shape(_plan(text).graph)

    assert shape.deps == {"x": frozenset(), "y": frozenset({"z"}), "z": frozenset({"x", "y"})}
    assert shape.order == ("x",)
    assert shape.stuck == ("y", "z")
    assert shape.cycle == ("y", "z", "y")
    report = validate_text(text, registry, env={}, config={})
    assert [i.message for i in report.errors if i.code == "CYCLE"] == [
        "ノードの依存関係が循環しています: 'y' → 「a + b 2」（z） → 'y'"
    ]
    assert {"INVALID_REFERENCE", "INVALID_EXPRESSION", "DUPLICATE_NODE_ID"} <= set(report.codes())


def test_a_while_condition_reads_its_body_and_its_loop_depends_on_what_the_body_reads() -> None:
    text = """\
apiVersion: v1
id: nested
graph:
  - {id: start, block: test.add, in: {a: 1, b: 1}}
  - id: again
    type: loop
    while: {condition: "${step.sum} < ${limit.sum}", max_iterations: 3}
    body:
      plan:
        graph:
          - {id: step, block: test.add, in: {a: "${start.sum}", b: 1}}
        exports:
          - {from: step.sum, as: total}
    out: {collect: total}
  - {id: limit, block: test.add, in: {a: 5, b: 5}}
"""
    shape = graph_shape(_plan(text).graph)

    assert shape.deps["again"] == {"start", "limit"}  # its body's read and its condition's
    assert shape.order == ("start", "limit", "again")
    assert shape.sources["again"] == ("limit", "again/step")  # by root name: limit, step
    assert shape.bodies["again"].deps == {"step": frozenset()}
    assert shape.bodies["again"].sources == {"step": ("start",)}
