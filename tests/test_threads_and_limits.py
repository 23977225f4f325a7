"""The two process helpers at the bottom of the package: work in a daemon thread whose outcome
comes back to the caller (``threads``), and lowering a resource limit without ever asking for
more than the process holds (``rlimits``)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import keiri_agent
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.threads import in_daemon_thread

WAIT_S = 60.0  # generous: the machine running the tests may be loaded


def test_the_work_runs_in_a_daemon_thread_and_its_value_comes_back() -> None:
    seen: list[tuple[str, bool]] = []

    def work() -> int:
        current = threading.current_thread()
        seen.append((current.name, current.daemon))
        return 42

    assert in_daemon_thread(work, name="keiri-test-work").result(timeout=WAIT_S) == 42
    assert seen == [("keiri-test-work", True)]


def test_the_work_s_error_is_raised_in_the_caller_s_thread() -> None:
    def work() -> None:
        raise BlockError("計算できません。", code=ErrorCode.INTERNAL_ERROR)

    outcome = in_daemon_thread(work, name="keiri-test-error")
    with pytest.raises(BlockError, match="計算できません"):
        outcome.result(timeout=WAIT_S)


def test_the_caller_stays_free_while_the_work_blocks() -> None:
    release = threading.Event()
    outcome = in_daemon_thread(lambda: release.wait(WAIT_S), name="keiri-test-block")
    assert not outcome.done()  # this thread goes on while the work waits
    release.set()
    assert outcome.result(timeout=WAIT_S) is True


# Run in a child: lowering a limit cannot be undone in the process that does it.
_LOWER = """
import resource
from keiri_agent.rlimits import lower_limit
kind = resource.RLIMIT_NOFILE
resource.setrlimit(kind, (64, 128))
print(lower_limit(kind, 512), resource.getrlimit(kind))  # above the hard limit held
print(lower_limit(kind, 32, 48), resource.getrlimit(kind))  # below it: both come down
"""


def test_a_limit_only_comes_down_and_a_lower_hard_limit_stays() -> None:
    source = str(Path(keiri_agent.__file__).parents[1])  # this package, not another install
    done = subprocess.run(
        [sys.executable, "-c", _LOWER],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=True,
        env={**os.environ, "PYTHONPATH": source},
    )
    assert done.stdout.splitlines() == ["128 (128, 128)", "32 (32, 48)"]
    # The test process itself is untouched.
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[1] != 48
