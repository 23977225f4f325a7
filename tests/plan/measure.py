"""Running Python code in a child process and measuring that child's own peak memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ADDRESS_SPACE_LIMIT", "Measured", "run_measured"]

# A regression must fail the test, not take the shared machine's memory with it.
ADDRESS_SPACE_LIMIT = 3 * 1024**3
TIMEOUT_S = 300


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str
    peak_rss_mb: float


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))


def run_measured(code: str, *args: str, cwd: Path | None = None) -> Measured:
    """``python -c code args...`` under an address-space cap; peak RSS from ``wait4``.

    ``wait4`` reports the rusage of that one child, unlike ``RUSAGE_CHILDREN``, which keeps the
    largest of every child this test process ever waited for.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=out,
            stderr=err,
            cwd=cwd,
            preexec_fn=_limit_address_space,
        )
        reaped: list[tuple[int, resource.struct_rusage]] = []
        waiter = threading.Thread(target=lambda: reaped.append(os.wait4(proc.pid, 0)[1:]))
        waiter.start()
        waiter.join(TIMEOUT_S)
        if waiter.is_alive():
            proc.kill()
            waiter.join()
        status, usage = reaped[0]
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        return Measured(
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            usage.ru_maxrss / 1024,  # KiB on Linux
        )
