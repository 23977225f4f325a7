"""The runner's node table is built explicitly and passed to every frame (issue 39)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.plan import PlanRunner
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, SubflowNode
from keiri_agent.plan._run import runner as runner_module
from keiri_agent.plan._run.blocknode import run_block_node
from keiri_agent.plan._run.control import run_loop, run_subflow

WritePlan = Callable[[str, str], Path]


def test_the_table_names_a_runner_for_each_kind_of_node() -> None:
    assert dict(runner_module.NODE_RUNNERS) == {
        BlockNode: run_block_node,
        LoopNode: run_loop,
        SubflowNode: run_subflow,
    }


def test_nested_frames_run_nodes_through_the_table_passed_in(
    runner: PlanRunner, write_plan: WritePlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def recording(run: Callable[..., Any]) -> Callable[..., Any]:
        def record(frame: Any, node: Any, path: str) -> Any:
            seen.append(path)
            return run(frame, node, path)

        return record

    table = {kind: recording(run) for kind, run in runner_module.NODE_RUNNERS.items()}
    monkeypatch.setattr(runner_module, "NODE_RUNNERS", table)
    plan = write_plan(
        "table",
        """
id: table
graph:
  - {id: items, block: test.items, in: {count: 2}}
  - id: each
    type: loop
    foreach: {input: "${items.items}", itemVar: it}
    body:
      plan:
        graph:
          - {id: step, block: test.sleep, in: {value: "${it.n}"}}
""",
    )
    result = runner.run(plan)
    assert result.status == "success"
    assert sorted(seen) == ["each", "each[0]/step", "each[1]/step", "items"]
