"""Subflow cycles and depth (issue 18): found by file identity and by id, never a RecursionError."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import validate_file
from keiri_agent.plan._dsl.models import MAX_SUBFLOW_DEPTH

WritePlan = Callable[[str, str], Path]


def call(plan_id: str, node: str = "inner") -> str:
    return f"  - {{id: {node}, type: subflow, call: {{plan_id: {plan_id}}}}}\n"


def issues(report: object, code: str) -> list:
    return [e for e in report.errors if e.code == code]  # type: ignore[attr-defined]


def test_self_call_with_an_id_unlike_its_file_is_a_cycle(
    registry: BlockRegistry, designs: Path, write_plan: WritePlan
) -> None:
    # The file is designs/loop_a.yaml, the plan inside says id: other_name.
    plan = write_plan("loop_a", "id: other_name\ngraph:\n" + call("loop_a"))

    report = validate_file(plan, registry, designs_dir=designs, config={}, env={})

    (cycle,) = issues(report, "SUBFLOW_CYCLE")
    assert "other_name → other_name" in cycle.message
    assert cycle.line == 3  # the call.plan_id line
    assert cycle.hint


def test_indirect_cycle_through_files_with_other_ids(
    registry: BlockRegistry, designs: Path, write_plan: WritePlan
) -> None:
    write_plan("flows/b", "id: bee\ngraph:\n" + call("flows/a"))
    plan = write_plan("flows/a", "id: ay\ngraph:\n" + call("flows/b"))

    report = validate_file(plan, registry, designs_dir=designs, config={}, env={})

    cycles = issues(report, "SUBFLOW_CYCLE")
    assert cycles, report.errors
    assert "ay → bee → ay" in cycles[0].message


def test_two_files_with_the_same_id_calling_each_other_are_a_cycle(
    registry: BlockRegistry, designs: Path, write_plan: WritePlan
) -> None:
    write_plan("copy2", "id: same\ngraph:\n" + call("copy1"))
    plan = write_plan("copy1", "id: same\ngraph:\n" + call("copy2"))

    report = validate_file(plan, registry, designs_dir=designs, config={}, env={})

    assert issues(report, "SUBFLOW_CYCLE")


def test_deep_chain_stops_at_the_depth_limit(
    registry: BlockRegistry, designs: Path, write_plan: WritePlan
) -> None:
    def chain(prefix: str, depth: int) -> Path:
        for i in range(depth):
            last = i + 1 == depth
            body = (
                "  - {id: x, block: test.add, in: {a: 1}}\n" if last else call(f"{prefix}{i + 1}")
            )
            write_plan(f"{prefix}{i}", f"id: {prefix}{i}\ngraph:\n{body}")
        return designs / f"{prefix}0.yaml"

    # Far beyond the limit, and beyond what recursion alone would survive.
    report = validate_file(chain("c", 300), registry, designs_dir=designs, config={}, env={})
    (deep,) = issues(report, "SUBFLOW_TOO_DEEP")
    assert f"{MAX_SUBFLOW_DEPTH} 段" in deep.message
    assert "c0 → c1 →" in deep.message
    assert deep.hint
    # A chain as deep as the limit allows is fine.
    within = chain("d", MAX_SUBFLOW_DEPTH)
    assert validate_file(within, registry, designs_dir=designs, config={}, env={}).valid


def test_diamond_of_subflows_is_validated_once_per_file(
    registry: BlockRegistry, designs: Path, write_plan: WritePlan
) -> None:
    # Each level calls the next one twice: 2**18 paths, 18 files.
    levels = 18
    for i in range(levels):
        if i + 1 < levels:
            body = call(f"m{i + 1}", "left") + call(f"m{i + 1}", "right")
        else:
            body = "  - {id: x, block: test.fail, in: {fail: true, value: '${vars.nope}'}}\n"
        write_plan(f"m{i}", f"id: m{i}\ngraph:\n{body}")

    report = validate_file(designs / "m0.yaml", registry, designs_dir=designs, config={}, env={})

    # The bad reference at the bottom is reported (once per calling node), and the walk ends.
    assert not report.valid
    assert any("nope" in e.message for e in report.errors)
    assert len(report.errors) < 100
