"""Memory and threads of `keiri-agent serve` across a burst of 50 plan tasks (issue 27).

Starts a real server process, measures its idle RSS (the baseline of this run), sends 50 plan
tasks at once (the duplicate-invoice example), samples RSS and threads while they run, waits
until all have finished plus 30 s, and prints the RSS after the burst against the idle RSS.

    python benchmarks/server_memory.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.processes import free_port, stop_process_group

TASKS = 50
SETTLE_S = 30.0


def _tree(proc: psutil.Process) -> tuple[float, int]:
    """RSS in MB and threads of the server process."""
    return proc.memory_info().rss / 2**20, proc.num_threads()


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="keiri-mem-"))
    port = free_port()
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(root / "workspace"),
        "KEIRI_RUNS_DIR": str(root / "runs"),
        "KEIRI_MAX_QUEUED_TASKS": str(TASKS),
        "KEIRI_LOG_LEVEL": "warning",
    }
    command = [sys.executable, "-m", "keiri_agent", "serve", "--port", str(port)]
    server = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=60) as c:
            while True:
                try:
                    if c.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            proc = psutil.Process(server.pid)
            c.post("/agent/run", json={"kind": "plan", "plan": "duplicate_invoice_check"})
            time.sleep(5)  # one task first: the plan engine and its imports are loaded
            idle, idle_threads = _tree(proc)
            ids = [
                c.post(
                    "/agent/run", json={"kind": "plan", "plan": "duplicate_invoice_check"}
                ).json()["task_id"]
                for _ in range(TASKS)
            ]
            peak, peak_threads = idle, idle_threads
            while True:
                rss, threads = _tree(proc)
                peak, peak_threads = max(peak, rss), max(peak_threads, threads)
                statuses = [c.get(f"/agent/tasks/{i}").json()["status"] for i in ids]
                if all(s not in ("queued", "running") for s in statuses):
                    break
                time.sleep(0.5)
            time.sleep(SETTLE_S)
            after, after_threads = _tree(proc)
    finally:
        stop_process_group(server)
    done = statuses.count("success")
    print(f"tasks: {TASKS} ({done} success)")
    print(f"RSS idle {idle:.0f} MB, peak {peak:.0f} MB, after +{SETTLE_S:.0f} s {after:.0f} MB")
    print(f"threads idle {idle_threads}, peak {peak_threads}, after {after_threads}")
    print(f"RSS after / idle: {after / idle:.2f}x (after - idle: {after - idle:+.0f} MB)")


if __name__ == "__main__":
    main()
