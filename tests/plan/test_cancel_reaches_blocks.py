"""A plan run's cancel reaches its running blocks with no thread in between.

A block that is held (a long step, a chart being saved) and goes on when the run's cancel is
set must meet the cancel at its very next check: the flag it reads (``cancel_event``) is read
from the run's cancel itself, and from its node's deadline. Through a thread copying the run's
cancel into each block's flag, the block could pass its check and publish its result before the
copy: ``CancelSeenLate`` makes that moment last until the run has ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.plan import PlanRunner, RunResult
from tests.plan.blockkit.blocks import HeldBlock
from tests.support.late_cancel import CancelSeenLate

WAIT_S = 120.0


@pytest.mark.parametrize("policy", ["", "policy: {timeout_ms: 600000}"])
def test_a_block_released_by_the_runs_cancel_meets_it_at_its_next_check(
    policy: str,
    runner: PlanRunner,
    write_plan: Callable[[str, str], Path],
    tmp_path: Path,
) -> None:
    out = tmp_path / "published.txt"
    plan = write_plan(
        "held",
        f"""
id: held
{policy}
graph:
  - {{id: held, block: test.held, in: {{out: "{out}"}}}}
""",
    )
    HeldBlock.reset()
    ended = threading.Event()
    cancel = CancelSeenLate(ended, WAIT_S, on_set=HeldBlock.release.set)
    outcome: dict[str, RunResult] = {}

    def work() -> None:
        try:
            outcome["r"] = runner.run(plan, cancel=cancel)
        finally:
            ended.set()

    worker = threading.Thread(target=work)
    worker.start()
    assert HeldBlock.reached.wait(WAIT_S)
    cancel.set()  # releases the block, returns once the run has ended
    worker.join(WAIT_S)
    assert not out.exists()
    assert outcome["r"].status == "cancelled"
