"""Watching one running action from its supervisor: its pipes, its clock, its end.

The supervisor (``supervisor``) reads the worker's pipes into capped buffers (``Capture``)
while the worker runs, kills every process of the action when an output cap overflows or the
wall clock runs out (as PID 1 of the action's PID namespace, ``kill(-1)`` reaches all of them
and nothing else), and reaps them all once the worker has exited.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import time
from dataclasses import dataclass, field

__all__ = ["POLL_S", "Capture", "Pipes", "decode_status", "kill_action", "watch_worker"]

POLL_S = 0.05
READ_CHUNK = 65536


@dataclass
class Capture:
    """What one pipe delivered, up to ``limit`` bytes; ``overflow`` once it sent more."""

    limit: int
    data: bytearray = field(default_factory=bytearray)
    overflow: bool = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if len(chunk) > room:
            self.overflow = True
        self.data += chunk[: max(room, 0)]


@dataclass
class Pipes:
    """Read ends the supervisor watches; ``targets`` maps each to its buffer."""

    targets: dict[int, Capture]

    def read_ready(self, timeout: float, wake: int | None = None) -> None:
        watched = [*self.targets, *([wake] if wake is not None else [])]
        if not watched:
            time.sleep(timeout)
            return
        ready, _, _ = select.select(watched, [], [], timeout)
        for fd in ready:
            if fd not in self.targets:
                continue
            chunk = os.read(fd, READ_CHUNK)
            if chunk:
                self.targets[fd].add(chunk)
            else:
                del self.targets[fd]
                os.close(fd)

    def close(self) -> None:
        for fd in self.targets:
            os.close(fd)
        self.targets.clear()


def _signal_action() -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)  # from PID 1: every process of the namespace, but itself


def kill_action() -> None:
    """SIGKILL every other process of the action's PID namespace and reap them all."""
    _signal_action()
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait4(-1, 0)


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (None where the kernel lacks it)."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def watch_worker(
    worker: int, wall_seconds: float, pipes: Pipes, out: Capture, err: Capture
) -> tuple[int, resource.struct_rusage, str | None]:
    """Until ``worker`` exits (or is killed): its wait status, rusage and the kill reason."""
    deadline = time.monotonic() + wall_seconds
    wake = _pidfd(worker)
    killed_by: str | None = None
    try:
        while True:
            pipes.read_ready(POLL_S, wake)
            if killed_by is None:
                if out.overflow or err.overflow:
                    killed_by = "output"
                elif time.monotonic() >= deadline:
                    killed_by = "wall"
                if killed_by is not None:
                    _signal_action()  # the worker is reaped below, the rest after it
            done, status, usage = os.wait4(worker, 0 if killed_by else os.WNOHANG)
            if done == worker:
                return status, usage, killed_by
    finally:
        if wake is not None:
            os.close(wake)


def decode_status(status: int) -> tuple[int | None, int | None]:
    """(exit code, signal) of a wait status; (None, None) when it is neither."""
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status), None
    return None, None
