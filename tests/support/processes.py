"""Servers that tests start as subprocesses: a free loopback port, and stopping their group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess

__all__ = ["free_port", "stop_process_group"]

STOP_TIMEOUT_S = 10


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
