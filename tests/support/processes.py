"""Servers that tests start as subprocesses: a free loopback port, and stopping their group;
and the processes under a pid once generated code runs there (:func:`once_code_holds`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any

import psutil

__all__ = [
    "HALF_WRITTEN",
    "LONG_STEP_CODE",
    "free_port",
    "holding",
    "interrupt",
    "once_code_holds",
    "start_interruptible",
    "stop_process_group",
]

STOP_TIMEOUT_S = 10
POLL_S = 0.1
# Generated code of a long step: it holds its output file open, half-written, for 120 s.
HALF_WRITTEN = "half.csv"
LONG_STEP_CODE = (
    "import time\n"
    f"with open('{HALF_WRITTEN}', 'w') as out:\n"
    "    out.write('取引先,金額\\n')\n"
    "    out.flush()\n"
    "    time.sleep(120)\n"
    "    out.write('あおば商事,1\\n')\n"
)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_interruptible(command: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    """``command`` with text pipes, taking SIGINT as a terminal delivers it (the default action
    restored, even when the test runs in a background job)."""
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **kwargs,
    )


def interrupt(proc: subprocess.Popen[str], *, within_s: float) -> tuple[str, str]:
    """Ctrl+C to ``proc``; its stdout and stderr once it ended (killed if not within
    ``within_s``, and the test fails on the timeout)."""
    try:
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=within_s)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


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


def _holds(process: psutil.Process, name: str) -> bool:
    try:
        fds = os.listdir(f"/proc/{process.pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{process.pid}/fd/{fd}").endswith(f"/{name}"):
                return True
        except OSError:
            continue
    return False


def holding(processes: list[psutil.Process], name: str) -> list[psutil.Process]:
    """Those of ``processes`` that have a file called ``name`` open."""
    return [process for process in processes if _holds(process, name)]


def once_code_holds(
    root: int, name: str, *, within_s: float, alive: Callable[[], bool]
) -> list[psutil.Process]:
    """Every process under ``root`` once one of them holds a file called ``name`` open:
    generated code that opened its output file is running (a sandboxed action sees its workdir
    at the host path, so its descriptor names the file there). Fails when ``alive()`` turns
    false or ``within_s`` seconds pass first."""
    deadline = time.monotonic() + within_s
    while True:
        assert alive(), "the work ended before the code ran"
        assert time.monotonic() < deadline, "the generated code did not start"
        below: list[psutil.Process]
        try:
            below = psutil.Process(root).children(recursive=True)
        except psutil.NoSuchProcess:
            below = []
        if holding(below, name):
            return below
        time.sleep(POLL_S)
