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


# The child's own peak, written when it exits. Its ru_maxrss (wait4) is no measure: Linux keeps
# there the peak of the process that forked it, this test runner, hundreds of MB late in a run.
_REPORT_PEAK = """
import atexit, os
def _report_peak(path=os.environ.pop("KEIRI_TEST_PEAK_FILE")):
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            with open(path, "w") as out:
                out.write(line.split()[1])
atexit.register(_report_peak)
"""


def run_measured(code: str, *args: str, cwd: Path | None = None) -> Measured:
    """``python -c code args...`` under an address-space cap; peak RSS is the child's VmHWM
    (written at exit; ``wait4``'s figure when the child died without running its exit hooks).
    """
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as scratch,
    ):
        peak_file = Path(scratch) / "peak_kb"
        proc = subprocess.Popen(
            [sys.executable, "-c", _REPORT_PEAK + code, *args],
            env={**os.environ, "KEIRI_TEST_PEAK_FILE": str(peak_file)},
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
        peak_kb = int(peak_file.read_text()) if peak_file.exists() else usage.ru_maxrss
        return Measured(
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            peak_kb / 1024,  # KiB on Linux
        )
