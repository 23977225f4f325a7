"""Stopping servers that tests start as subprocesses in their own process group."""

from __future__ import annotations

import os
import signal
import subprocess

__all__ = ["stop_process_group"]

STOP_TIMEOUT_S = 10


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group started with ``start_new_session=True``; SIGKILL it if it lingers."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
