"""A node's retries (policy on_error: retry) wait with exponential backoff, through the runner's
injected sleep; a cancel during the wait ends the node without another attempt."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import PlanRunner
from keiri_agent.plan._run.engine import RETRY_BACKOFF_MAX_S, retry_delay

WritePlan = Callable[[str, str], Path]


def flaky_plan(write_plan: WritePlan, state: Path, retries: int, failures: int) -> Path:
    return write_plan(
        "flaky",
        f"""
id: flaky
policy: {{on_error: retry, retries: {retries}}}
graph:
  - {{id: call, block: test.flaky, in: {{state_dir: "{state}", key: k, failures: {failures}}}}}
""",
    )


def test_retries_wait_longer_each_time(
    registry: BlockRegistry, write_plan: WritePlan, tmp_path: Path
) -> None:
    waits: list[float] = []
    plan = flaky_plan(write_plan, tmp_path, retries=3, failures=3)
    with PlanRunner(registry, runs_dir=tmp_path / "runs", config={}, sleep=waits.append) as r:
        result = r.run(plan)
    assert result.status == "success"
    assert result.outputs["call"] == {"calls": 4}
    assert waits == [0.5, 1.0, 2.0]  # one wait before each retry, doubling


def test_a_node_that_never_recovers_waits_before_every_retry_only(
    registry: BlockRegistry, write_plan: WritePlan, tmp_path: Path
) -> None:
    waits: list[float] = []
    plan = flaky_plan(write_plan, tmp_path, retries=2, failures=10)
    with PlanRunner(registry, runs_dir=tmp_path / "runs", config={}, sleep=waits.append) as r:
        result = r.run(plan)
    assert result.status == "failed"
    assert (tmp_path / "k.count").read_text() == "3"
    assert waits == [0.5, 1.0]  # no wait after the last attempt


def test_the_wait_is_capped() -> None:
    assert [retry_delay(n) for n in range(3)] == [0.5, 1.0, 2.0]
    assert retry_delay(30) == RETRY_BACKOFF_MAX_S


def test_a_cancel_during_the_wait_stops_the_retries(
    registry: BlockRegistry, write_plan: WritePlan, tmp_path: Path
) -> None:
    cancel = threading.Event()

    def sleep(seconds: float) -> None:
        cancel.set()  # the user cancels while the node waits for its retry

    plan = flaky_plan(write_plan, tmp_path, retries=5, failures=10)
    with PlanRunner(registry, runs_dir=tmp_path / "runs", config={}, sleep=sleep) as r:
        result = r.run(plan, cancel=cancel)
    assert result.status == "cancelled"
    assert result.error is not None
    assert result.error.code == "CANCELLED"
    assert (tmp_path / "k.count").read_text() == "1"  # no attempt after the cancel
