"""The warm path: spare actions forked ahead of their request, and each action's timeline."""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from pathlib import Path

import pandas as pd

from keiri_agent.sandbox import ANALYSIS, ExecutionOutcome, SandboxExecutor
from keiri_agent.sandbox.timeline import MAX_MARKS, parse_marks, phases_ms
from tests.sandbox.conftest import assert_no_survivors

# Every phase an action with an input passes through, in the order they happen.
PHASES = [
    "policy",
    "jail",
    "inputs",
    "server",
    "supervisor",
    "cgroup",
    "action_fs",
    "worker",
    "worker_fs",
    "isolation",
    "worker_inputs",
    "code",
    "reaped",
    "copy_out",
    "outcome",
    "answer",
    "parsed",
]
SPARE_TIMEOUT_S = 60.0


def _wait_for_spare(
    executor: SandboxExecutor, old: set[int] | frozenset[int] = frozenset()
) -> list[int]:
    """The spare's host pids (a supervisor and its worker) once a spare other than ``old`` waits."""
    deadline = time.monotonic() + SPARE_TIMEOUT_S
    while time.monotonic() < deadline:
        pids: list[int] = executor.spare_pids()
        if len(pids) == 2 and not set(pids) & old:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"no spare action appeared (last seen: {executor.spare_pids()})")


def test_each_action_reports_every_phase_in_order(executor: SandboxExecutor, workdir: Path) -> None:
    started = time.monotonic()
    outcome = executor.run(
        "print(len(df))", workdir=workdir, inputs={"df": pd.DataFrame({"a": [1, 2, 3]})}
    )
    elapsed_ms = (time.monotonic() - started) * 1000
    assert outcome.success, outcome.error
    assert [name for name in outcome.phases_ms if name in PHASES] == PHASES
    assert all(ms >= 0 for ms in outcome.phases_ms.values())
    # The phases tile the run: together no longer than the caller waited.
    assert sum(outcome.phases_ms.values()) <= elapsed_ms + 1
    assert_no_survivors(executor)


def test_a_policy_refusal_has_no_sandbox_phases(executor: SandboxExecutor, workdir: Path) -> None:
    outcome = executor.run("import os", workdir=workdir)
    assert outcome.killed_by == "policy"
    assert outcome.phases_ms == {}


def test_the_next_action_is_forked_before_its_request(
    executor: SandboxExecutor, workdir: Path
) -> None:
    executor.run("x = 1", workdir=workdir)
    spare = _wait_for_spare(executor)
    outcome = executor.run("print('次')", workdir=workdir)
    assert outcome.success, outcome.error
    # That spare served this action (and is gone); a new one waits for the next.
    assert not any(Path(f"/proc/{pid}").exists() and pid in executor.spare_pids() for pid in spare)
    _wait_for_spare(executor, set(spare))
    assert_no_survivors(executor)


def test_a_spare_killed_before_its_request_is_replaced(
    executor: SandboxExecutor, workdir: Path
) -> None:
    executor.run("x = 1", workdir=workdir)
    spare = _wait_for_spare(executor)
    for pid in spare:
        os.kill(pid, signal.SIGKILL)
    _wait_for_spare(executor, set(spare))  # the server noticed and forked another
    outcome = executor.run("print(sum(range(5)))", workdir=workdir)
    assert outcome.success, outcome.error
    assert outcome.stdout == "10\n"
    assert_no_survivors(executor)


def test_a_supervisor_killed_mid_action_fails_the_action_at_once(
    executor: SandboxExecutor, workdir: Path
) -> None:
    slow = ANALYSIS.with_overrides(wall_seconds=600.0, cpu_seconds=600)
    done: dict[str, ExecutionOutcome] = {}
    runner = threading.Thread(
        target=lambda: done.update(
            outcome=executor.run("import time\ntime.sleep(500)", workdir=workdir, profile=slow)
        ),
        daemon=True,
    )
    runner.start()
    deadline = time.monotonic() + SPARE_TIMEOUT_S
    while len(executor.action_pids()) < 2:  # the supervisor and its sleeping worker
        assert time.monotonic() < deadline, "the action never started"
        time.sleep(0.05)
    supervisor = executor.action_pids()[0]
    os.kill(supervisor, signal.SIGKILL)
    runner.join(timeout=SPARE_TIMEOUT_S)  # far below the 600 s wall limit
    assert not runner.is_alive(), "the caller kept waiting for a dead supervisor"
    outcome = done["outcome"]
    assert not outcome.success
    assert outcome.error is not None
    assert "監視プロセスが結果を返す前に終了しました" in outcome.error.message
    assert assert_no_survivors(executor) is None
    assert executor.run("print('続行')", workdir=workdir).stdout == "続行\n"


def test_marks_from_a_document_are_checked_one_by_one() -> None:
    raw = [
        ["server", 1.0],
        ["supervisor", 1.5],
        ["forged", True],  # a bool is not a time
        ["nan", math.nan],
        ["inf", math.inf],
        ["short"],
        "not a pair",
        [5, 2.0],  # the name must be text
        ["x" * 100, 2.0],  # kept, its name cut
    ]
    marks = parse_marks(raw)
    assert [name for name, _ in marks] == ["server", "supervisor", "x" * 40]
    assert parse_marks({"server": 1.0}) == []
    assert len(parse_marks([["m", float(i)] for i in range(1000)])) == MAX_MARKS


def test_phases_are_the_time_between_consecutive_marks_in_time_order() -> None:
    phases = phases_ms([("start", 10.0), ("code", 10.250), ("policy", 10.001)])
    assert list(phases) == ["policy", "code"]
    assert phases["policy"] == 1.0
    assert phases["code"] == 249.0
    assert phases_ms([("start", 1.0)]) == {}
