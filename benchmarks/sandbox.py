"""Per-action cost of the warm sandbox against a cold ``python -c`` in the same jail.

Run: ``python benchmarks/sandbox.py [--warm-runs 30] [--cold-runs 5]``. Both sides get the
same 100,000-row DataFrame (as an Arrow file, the way the executor passes it) and run
``print(df.shape)``. The warm side goes through ``SandboxExecutor`` (policy check, lock, Arrow
write, the jail's warm fork server: supervisor fork, action namespaces, overlay and tmpfs,
cgroups, isolation layers, copy-out); the cold side starts a fresh interpreter in the same
bubblewrap jail (``jail.jail_command`` for the same workdir) that imports the libraries the
warm server preloads, with the same environment as the warm server (its matplotlib cache built
once, by an untimed first run). Prints the medians, their ratio, the load average and the
median of each phase of the warm path (``ExecutionOutcome.phases_ms``, see
``keiri_agent.sandbox.timeline``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.sandbox.jail import JAIL_DIR, JailPaths, find_bwrap, jail_command
from keiri_agent.sandbox.jailserver import server_env

ROWS = 100_000
SETTLE_S = 2.0
CODE = "print(df.shape)"
COLD = (
    "import numpy, pandas, pyarrow.feather as feather, seaborn, sklearn, matplotlib\n"
    "matplotlib.use('Agg')\n"
    "import matplotlib.pyplot, matplotlib_fontja\n"
    "df = feather.read_feather({path!r})\n"
    "print(df.shape)\n"
)


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "日付": pd.date_range("2024-01-01", periods=ROWS, freq="min"),
            "取引先": rng.choice(["あおば", "ミドリ商事", "あさひ物産"], ROWS),
            "金額": rng.integers(1_000, 1_000_000, ROWS),
        }
    )


def _jail_cpu(executor: SandboxExecutor) -> float:
    """CPU seconds of the fork server and of every child it has reaped (supervisors, workers)."""
    server = executor.server_pid
    if server is None:
        raise RuntimeError("the fork server is not running")
    text = Path(f"/proc/{server}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--warm-runs", type=int, default=30)
    parser.add_argument("--cold-runs", type=int, default=5)
    args = parser.parse_args()
    frame = _frame()
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o755)  # as root the worker runs as nobody and must reach its workdir
        workdir = Path(tmp) / "work"
        arrow = Path(tmp) / "df.arrow"
        frame.reset_index(drop=True).to_feather(arrow)
        workdir.mkdir()
        host_dir = Path(tmp) / "jail"
        host_dir.mkdir()
        for sub in ("home", "mpl"):
            (host_dir / sub).mkdir()
        arrow.rename(host_dir / "df.arrow")
        arrow = Path(JAIL_DIR) / "df.arrow"  # where the cold interpreter sees it
        paths = JailPaths(workdir=workdir.resolve(), host_dir=host_dir, cgroups={})
        executor = SandboxExecutor()
        try:
            executor.warm(workdir)
            warm: list[float] = []
            phases: dict[str, list[float]] = {}
            host_cpu, jail_cpu = time.process_time(), _jail_cpu(executor)
            for _ in range(args.warm_runs):
                start = time.perf_counter()
                outcome = executor.run(CODE, workdir=workdir, inputs={"df": frame})
                warm.append(time.perf_counter() - start)
                if not outcome.success or outcome.stdout.strip() != f"({ROWS}, 3)":
                    print("warm run failed:", outcome.model_dump_json(), file=sys.stderr)
                    return 1
                for name, ms in outcome.phases_ms.items():
                    phases.setdefault(name, []).append(ms)
            host_cpu = (time.process_time() - host_cpu) / args.warm_runs
            time.sleep(SETTLE_S)  # the last supervisor is reaped and counted
            jail_cpu = (_jail_cpu(executor) - jail_cpu) / args.warm_runs
        finally:
            executor.close()
        cold: list[float] = []
        cold_argv = [sys.executable, "-c", COLD.format(path=str(arrow))]
        command = jail_command(find_bwrap(), paths, cold_argv)
        for attempt in range(args.cold_runs + 1):  # the first builds matplotlib's font cache
            start = time.perf_counter()
            result = subprocess.run(
                command, capture_output=True, text=True, check=False, env=server_env()
            )
            if attempt:
                cold.append(time.perf_counter() - start)
            if result.stdout.strip() != f"({ROWS}, 3)":
                print("cold run failed:", result.stderr[-2000:], file=sys.stderr)
                return 1
    warm_ms = statistics.median(warm) * 1000
    cold_ms = statistics.median(cold) * 1000
    print(f"action: {CODE} on a {ROWS:,}-row DataFrame")
    print(
        f"warm sandbox  median {warm_ms:8.1f} ms  (p90 {sorted(warm)[int(len(warm) * 0.9) - 1] * 1000:.1f} ms, n={len(warm)})"
    )
    print(f"cold python in the same jail  median {cold_ms:8.1f} ms  (n={len(cold)})")
    print(
        f"ratio cold/warm: {cold_ms / warm_ms:.1f}x  (target >= 25x; warm median target <= 60 ms)"
    )
    print(
        f"CPU per warm action: host {host_cpu * 1000:.1f} ms + jail {jail_cpu * 1000:.1f} ms"
        " (fork server, supervisors and workers, spares included)"
    )
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print("warm path by phase (median ms; each phase ends at the named step):")
    for name, values in phases.items():
        print(f"  {name:<14} {statistics.median(values):8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
