"""Process bookkeeping shared by the fork server and the supervisors.

Both are child subreapers (``PR_SET_CHILD_SUBREAPER``): a process that double-forks and calls
``setsid`` to escape its process group is re-parented to them instead of to init, so walking
``/proc/<pid>/task/*/children`` from them finds every descendant, and nothing outlives a kill.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from keiri_agent.sandbox.libc import prctl

__all__ = ["become_subreaper", "children", "descendants", "kill_descendants", "kill_tree", "reap"]

PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS = 50  # passes of kill-and-reap before giving up on a process that will not die
KILL_ROUND_PAUSE_S = 0.02


def become_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process; False where unsupported."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0


def children(pid: int | None = None) -> set[int]:
    """Direct children of ``pid`` (default: this process)."""
    return set(_children(os.getpid() if pid is None else pid))


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and everything below it (the caller reaps)."""
    for victim in [pid, *descendants(pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    task_dir = Path(f"/proc/{pid}/task")
    try:
        tasks = list(task_dir.iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            text = (task / "children").read_text()
        except OSError:
            continue
        found.extend(int(part) for part in text.split())
    return found


def descendants(pid: int | None = None) -> list[int]:
    """Every live descendant of ``pid`` (default: this process), parents before children."""
    root = os.getpid() if pid is None else pid
    out: list[int] = []
    queue = _children(root)
    seen: set[int] = set()
    while queue:
        child = queue.pop(0)
        if child in seen:
            continue
        seen.add(child)
        out.append(child)
        queue.extend(_children(child))
    return out


def reap() -> list[tuple[int, int]]:
    """Collect every child that has exited, without blocking: (pid, status) pairs."""
    done: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def kill_descendants(*, keep: set[int] | None = None) -> None:
    """SIGKILL every descendant of this process except ``keep`` and reap them.

    Repeats because a process may fork between the walk and the kill (the seccomp layer makes
    that impossible for sandboxed code, but this must hold without it too).
    """
    keep = keep or set()
    for _ in range(KILL_ROUNDS):
        victims = [pid for pid in descendants() if pid not in keep]
        if not victims:
            return
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(KILL_ROUND_PAUSE_S)
        reap()
