"""Runs that are bounded and say when they are incomplete (issue 18): worker threads per run,
while loops stopped by max_iterations, failures continued past inside loops and subflows,
and the number of loop iterations."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.cli import app
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.events import read_events
from keiri_agent.plan import PlanRunner
from keiri_agent.plan._dsl.models import MAX_LOOP_ITERATIONS
from tests.plan.blockkit import SPEC_DIR
from tests.plan.blockkit.blocks import Gauge, ThreadsBlock

WritePlan = Callable[[str, str], Path]
THREAD_LIMIT = 6


@pytest.fixture
def bounded(registry: BlockRegistry, tmp_path: Path, designs: Path) -> Iterator[PlanRunner]:
    Gauge.reset()
    ThreadsBlock.reset()
    settings = Settings(_env_file=None, keiri_plan_max_threads=THREAD_LIMIT)  # type: ignore[call-arg]
    with PlanRunner(
        registry, settings=settings, runs_dir=tmp_path / "runs", designs_dir=designs, config={}
    ) as runner:
        yield runner


def test_nested_foreach_stays_within_the_thread_bound(
    bounded: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "nested",
        """
id: nested
graph:
  - id: outer
    type: loop
    foreach: {input: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], itemVar: row, max_concurrency: 12}
    body:
      plan:
        graph:
          - id: inner
            type: loop
            foreach:
              input: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
              itemVar: col
              max_concurrency: 12
            body:
              plan:
                graph:
                  - {id: cell, block: test.threads, in: {seconds: 0.05, value: "${col}"}}
                exports: [{from: cell.value, as: v}]
            out: {collect: v}
        exports: [{from: inner.v, as: row_values}]
    out: {collect: row_values}
""",
    )
    before = threading.active_count()

    result = bounded.run(plan)

    assert result.status == "success", result.error
    assert result.outputs["outer"]["row_values"] == [list(range(12))] * 12
    # 12 x 12 pools used to start 156 threads; now the run adds at most its bound.
    assert ThreadsBlock.peak - before <= THREAD_LIMIT, ThreadsBlock.peak - before
    assert Gauge.peak >= 2  # still parallel, not serialized


def test_failures_continued_past_in_foreach_make_the_run_partial(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "cont",
        """
id: cont
policy: {on_error: continue}
graph:
  - id: each
    type: loop
    foreach: {input: [false, true, false], itemVar: bad, max_concurrency: 2}
    body:
      plan:
        graph:
          - {id: step, block: test.fail, in: {fail: "${bad}", message: 二件目が失敗, value: 1}}
        exports: [{from: step.value, as: v}]
    out: {collect: v}
""",
    )

    result = runner.run(plan)

    assert result.status == "partial"
    assert result.outputs["each"]["v"] == [1, None, 1]
    assert result.log_path is not None
    end = [e for e in read_events(result.log_path) if e.event == "plan_complete"]
    assert end[-1].status == "partial"  # type: ignore[attr-defined]


def test_failures_continued_past_in_a_subflow_make_the_run_partial(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    write_plan(
        "lenient",
        """
id: lenient
policy: {on_error: continue}
graph:
  - {id: broken, block: test.fail, in: {message: 中で失敗}}
  - {id: fine, block: test.add, in: {a: 2}}
exports: [{from: fine.sum, as: total}]
""",
    )
    plan = write_plan(
        "caller",
        """
id: caller
graph:
  - id: sub
    type: subflow
    call: {plan_id: lenient}
    out: {exports: [{from: total, as: total}]}
""",
    )

    result = runner.run(plan)

    assert result.status == "partial"
    assert result.outputs["sub"] == {"total": 2}


def test_while_limit_is_shown_by_the_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    plan = tmp_path / "wh.yaml"
    plan.write_text(
        """
id: wh
graph:
  - id: again
    type: loop
    while: {condition: "${step.sum} != 100", max_iterations: 3}
    body:
      plan:
        graph: [{id: step, block: test.add, in: {a: 1}}]
        exports: [{from: step.sum, as: s}]
""",
        encoding="utf-8",
    )

    result = CliRunner().invoke(app, ["plan", "run", str(plan)], env={"COLUMNS": "300"})

    out = result.stdout + result.stderr
    assert "注意: 繰り返し ループ again" in out  # the node by its name, the loop by its id
    assert "max_iterations（3 回）に達したため打ち切りました" in out
    assert "一部未完了" in out
    assert result.exit_code != 0


def _foreach_of(write_plan: WritePlan, count: int) -> Path:
    return write_plan(
        f"many{count}",
        f"""
id: many{count}
graph:
  - {{id: items, block: test.items, in: {{count: {count}}}}}
  - id: each
    type: loop
    foreach: {{input: "${{items.items}}", itemVar: it}}
    body:
      plan:
        graph: [{{id: step, block: test.add, in: {{a: 1}}}}]
""",
    )


def test_foreach_items_are_bounded_by_a_setting(
    registry: BlockRegistry, tmp_path: Path, designs: Path, write_plan: WritePlan
) -> None:
    settings = Settings(_env_file=None, keiri_plan_max_foreach_items=5)  # type: ignore[call-arg]
    with PlanRunner(
        registry, settings=settings, runs_dir=tmp_path / "runs", designs_dir=designs, config={}
    ) as runner:
        assert runner.run(_foreach_of(write_plan, 5)).status == "success"
        result = runner.run(_foreach_of(write_plan, 6))
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "LOOP_LIMIT_REACHED"
    assert "6 件あり、上限の 5 件を超えています" in result.error.message
    assert "KEIRI_PLAN_MAX_FOREACH_ITEMS" in (result.error.hint or "")
    assert result.log_path is not None
    assert not [e for e in read_events(result.log_path) if e.event == "loop_iteration"]


def test_while_iterations_are_bounded(runner: PlanRunner, write_plan: WritePlan) -> None:
    long_while = write_plan(
        "long",
        f"""
id: long
graph:
  - id: again
    type: loop
    while: {{condition: "${{step.sum}} != 0", max_iterations: {MAX_LOOP_ITERATIONS + 1}}}
    body:
      plan:
        graph: [{{id: step, block: test.add, in: {{a: 1}}}}]
""",
    )
    with pytest.raises(BlockError) as caught:
        runner.run(long_while)
    assert "max_iterations" in caught.value.message
    assert f"{MAX_LOOP_ITERATIONS}" in caught.value.message
