"""One scope and one reference reader for validate, dry-run and run (issue 39).

The same fixtures go through the three phases and give the same answer for every reference:
found, null (a node without outputs read up to its output name), skipped (read past it) or
missing. The validator sees schemas, not runs: to it a node that a run skips is found.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.plan import PlanRunner, dry_run_source, load_source, validate_file
from keiri_agent.plan._dryrun.evaluator import DryScope, Vars
from keiri_agent.plan._dsl.models import BlockNode
from keiri_agent.plan._dsl.refs import single_reference
from keiri_agent.plan._graph.compiled import topological_order
from keiri_agent.plan._graph.scope import NodeInfo, Scope, StaticScope
from keiri_agent.plan._run.context import RunScope

WritePlan = Callable[[str, str], Path]

# reference → its answer in a run where node ``a`` gave {value: 1} and node ``s`` was skipped
CASES = {
    "${a.value}": "found",
    "${s.value}": "null",
    "${s.value.n}": "skipped",
    "${nope.value}": "missing",
}
STATIC = {"found": "found", "null": "found", "skipped": "found", "missing": "missing"}

PLAN = """\
id: reads
vars: {on: false}
graph:
  - {id: a, block: test.sleep, in: {value: 1}}
  - {id: s, block: test.sleep, when: "${vars.on} == true", in: {value: 2}}
  - {id: reader, block: test.sleep, in: {value: "REF"}}
"""


def _validated(plan: Path, registry: BlockRegistry, designs: Path) -> str:
    report = validate_file(plan, registry, designs_dir=designs, config={}, env={})
    codes = {i.code for i in report.errors}
    assert codes <= {"UNRESOLVED_REFERENCE"}, codes
    return "missing" if codes else "found"


def _dry_run(plan: Path, registry: BlockRegistry, designs: Path) -> str:
    dry = dry_run_source(load_source(plan), registry, designs_dir=designs, config={}, env={})
    codes = {(f.code, f.line is not None) for f in dry.findings}
    if codes == {("UNRESOLVED_REFERENCE", True)}:  # the validation that every dry run starts with
        return "missing"
    if codes == {("UNRESOLVED_REFERENCE", False)}:
        return "skipped"
    assert not codes, codes
    reader = next(n for n in dry.nodes if n.node_id == "reader")
    return "found" if reader.inputs["value"] == 1 else "null"


def _run(plan: Path, runner: PlanRunner) -> str:
    try:
        result = runner.run(plan)
    except BlockError as exc:
        codes = (exc.code, {e["code"] for e in exc.details["errors"]})
        assert codes == ("PLAN_INVALID", {"UNRESOLVED_REFERENCE"})
        return "missing"
    if result.status == "failed":
        assert result.error is not None
        assert result.error.code == "DEPENDENCY_NOT_FOUND"
        return "skipped"
    assert result.status == "success"
    return "found" if result.outputs["reader"] == {"value": 1} else "null"


@pytest.mark.parametrize(("ref", "answer"), CASES.items())
def test_the_three_phases_answer_a_reference_alike(
    ref: str,
    answer: str,
    registry: BlockRegistry,
    designs: Path,
    runner: PlanRunner,
    write_plan: WritePlan,
) -> None:
    plan = write_plan("reads", PLAN.replace("REF", ref))
    phases = (
        _validated(plan, registry, designs),
        _dry_run(plan, registry, designs),
        _run(plan, runner),
    )
    assert phases == (STATIC[answer], answer, answer)


def _info(node_id: str) -> NodeInfo:
    node = BlockNode.model_validate({"id": node_id, "block": "test.sleep"})
    return NodeInfo(node=node, loc=("graph", 0), qual=node_id, outputs={"value": None})


def test_every_phase_scope_reads_through_one_lookup() -> None:
    # What each phase knows of node a, of skipped node s and of loop variable it: a schema, a
    # sample, a runtime value. A loop body sees the enclosing graph's nodes.
    static_top: StaticScope = Scope(vars=None, nodes={"a": _info("a"), "s": _info("s")})
    static: StaticScope = Scope(vars=None, parent=static_top, loop_vars={"it": {"type": "object"}})
    dry_top: DryScope = Scope(vars=Vars(), nodes={"a": {"value": 1}, "s": None})
    dry: DryScope = Scope(vars=Vars(), parent=dry_top, loop_vars={"it": {"n": 2}})
    run_top: RunScope = Scope(vars={}, nodes={"a": {"value": 1}, "s": None})
    run: RunScope = Scope(vars={}, parent=run_top, loop_vars={"it": {"n": 2}})
    for text, answer in {**CASES, "${s}": "null", "${it.n}": "found"}.items():
        ref = single_reference(text)
        assert ref is not None
        answers: tuple[Any, ...] = tuple(s.read(ref).answer for s in (static, dry, run))
        assert answers == (STATIC[answer], answer, answer), text
    assert run.read(single_reference("${it.n}")).loop  # type: ignore[arg-type]


def test_one_kahn_order_for_the_runner_and_the_validator() -> None:
    order, stuck = topological_order(["c", "a", "b"], {"c": {"a"}, "a": set(), "b": {"a"}})
    assert (order, stuck) == (["a", "c", "b"], [])
    order, stuck = topological_order(["x", "y", "z"], {"x": {"y"}, "y": {"x"}, "z": {"x"}})
    assert (order, stuck) == ([], ["x", "y", "z"])
