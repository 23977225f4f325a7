"""A sandbox action that a cancel flag stops at once: :func:`run_cancellable`.

The action runs in a daemon thread while the caller watches the flag. Once it is set the jail of
the action's workdir is stopped (``SandboxExecutor.stop``), which kills whatever runs in it,
and stopped again at every poll until the action has returned, so an action that started a jail
after an earlier stop (the flag set while it was about to start) is killed too. Actions of other
workdirs on the same executor go on. A cancelled action's outcome is never read: nothing it
wrote is copied out of its jail as a result.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from keiri_agent.sandbox.executor import SandboxExecutor
from keiri_agent.sandbox.outcome import ExecutionOutcome
from keiri_agent.sandbox.profiles import SandboxProfile
from keiri_agent.threads import in_daemon_thread

__all__ = ["CANCEL_POLL_S", "run_cancellable"]

CANCEL_POLL_S: Final = 0.05  # how often a running action's cancel flag is looked at


def run_cancellable(
    executor: SandboxExecutor,
    cancel: threading.Event | None,
    code: str,
    *,
    workdir: Path | str,
    profile: str | SandboxProfile,
    inputs: Mapping[str, Any] | None = None,
) -> ExecutionOutcome | None:
    """``executor.run(code, ...)``, or None when ``cancel`` is set before or while it runs (the
    action was never started, or was killed). Without ``cancel`` the action simply runs."""

    def action() -> ExecutionOutcome:
        return executor.run(code, workdir=workdir, profile=profile, inputs=inputs)

    if cancel is None:
        return action()
    if cancel.is_set():
        return None
    outcome = in_daemon_thread(action, name="keiri-sandbox-action")
    while not outcome.done():
        if cancel.wait(CANCEL_POLL_S):
            # The killed action's own error is the expected consequence, not a failure.
            executor.stop(workdir)
            cf.wait([outcome], timeout=CANCEL_POLL_S)
    return None if cancel.is_set() else outcome.result()
