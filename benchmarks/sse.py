"""SSE event delivery latency with 1 and with 100 concurrent subscribers, in one run.

The API server (``create_app`` under uvicorn on 127.0.0.1, in this process) runs one task per
round. Its runner emits a first event, waits until every subscriber has received it (so all of
them are live, none is replaying), then emits ``--events`` log events ``--interval-ms`` apart.
The subscribers are ``GET /agent/sse`` streams over real HTTP from a separate process (one
asyncio loop, httpx), so they do not share the server's interpreter lock. An event's latency is
the wall-clock time it reached a subscriber minus its ``timestamp`` (set when the task emitted
it, before it was written to the log): the log write, the wake-up of the subscriber's stream,
encoding, the socket and the client's parsing.

Prints the median and p99 for 1 subscriber (the baseline) and for ``--subscribers`` (100),
and their ratio. The default pace (20 events a second, 2,000 deliveries a second with 100
subscribers) is well above what a task emits and below what one server process can send; at
5 ms apart the 100-subscriber round measures queueing (throughput) rather than latency. The
client's own parsing is inside the numbers: its 100 streams share one asyncio loop.

Run: ``python -m benchmarks.sse [--events 100] [--interval-ms 50] [--subscribers 100]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime
from importlib.metadata import version
from multiprocessing.synchronize import Event as ProcessEvent
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import machine_note

__all__ = ["main"]

CONNECT_TIMEOUT_S = 60.0


# --- the subscribers (a separate process) ----------------------------------------------------


async def _subscribe(url: str, task_id: str, count: int, ready: ProcessEvent) -> list[float]:
    import httpx
    from httpx_sse import aconnect_sse

    arrived = 0

    async def one(client: httpx.AsyncClient) -> list[float]:
        nonlocal arrived
        latencies: list[float] = []
        params = {"task_id": task_id}
        async with aconnect_sse(client, "GET", "/agent/sse", params=params) as source:
            async for message in source.aiter_sse():
                now = time.time()
                if message.event == "done":
                    break
                if not message.event or message.event == "message":
                    continue  # a heartbeat comment
                event = json.loads(message.data)
                if event["id"] == 1:  # the starting signal: this subscriber is live
                    arrived += 1
                    if arrived == count:
                        ready.set()
                    continue
                emitted = datetime.fromisoformat(event["timestamp"]).timestamp()
                latencies.append(now - emitted)
        return latencies

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx.Timeout(CONNECT_TIMEOUT_S, read=None)
    async with httpx.AsyncClient(
        base_url=url, trust_env=False, limits=limits, timeout=timeout
    ) as client:
        results = await asyncio.gather(*(one(client) for _ in range(count)))
    return [value for result in results for value in result]


def _subscriber_process(url: str, task_id: str, count: int, ready: ProcessEvent, out: Any) -> None:
    out.send(asyncio.run(_subscribe(url, task_id, count, ready)))


# --- the server side -------------------------------------------------------------------------


def _start_server(root: Path) -> tuple[Any, Any, threading.Thread, str]:
    import uvicorn

    from keiri_agent.config import Settings
    from keiri_agent.server import TaskRegistry, create_app

    settings = Settings(
        _env_file=None, keiri_workspace_root=root / "workspace", keiri_runs_dir=root / "runs"
    )
    registry = TaskRegistry(settings)
    app = create_app(settings, registry=registry)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return registry, server, thread, f"http://127.0.0.1:{port}"


def _round(
    registry: Any, url: str, subscribers: int, events: int, interval_s: float
) -> list[float]:
    from keiri_agent.server.runners import Job, JobResult

    ctx = mp.get_context("spawn")  # the server's threads must not be forked
    ready = ctx.Event()

    def runner(job: Job) -> JobResult:
        job.log("購読者の接続を待っています")
        if not ready.wait(CONNECT_TIMEOUT_S):
            raise RuntimeError("the subscribers did not connect")
        for number in range(1, events + 1):
            job.log(f"イベント {number}")
            time.sleep(interval_s)
        return JobResult("success", answer="完了")

    task = registry.start("benchmark", {"subscribers": subscribers}, runner)
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_subscriber_process, args=(url, task.id, subscribers, ready, send))
    process.start()
    latencies: list[float] = receive.recv()
    process.join()
    if len(latencies) != subscribers * events:
        raise RuntimeError(f"expected {subscribers * events} deliveries, got {len(latencies)}")
    return latencies


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100, help="events per round")
    parser.add_argument("--interval-ms", type=float, default=50.0, help="pause between events")
    parser.add_argument("--subscribers", type=int, default=100, help="subscribers in round 2")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keiri-bench-sse-") as tmp:
        registry, server, thread, url = _start_server(Path(tmp))
        try:
            rows = []
            for count in (1, args.subscribers):
                latencies = _round(registry, url, count, args.events, args.interval_ms / 1000)
                ms = [value * 1000 for value in latencies]
                rows.append((count, len(ms), statistics.median(ms), _p99(ms)))
        finally:
            server.should_exit = True
            thread.join(10)
    print(
        f"SSE event delivery latency: {args.events} events {args.interval_ms:g} ms apart, "
        "subscribers in a separate process over HTTP on 127.0.0.1"
    )
    print(
        machine_note(
            f"fastapi {version('fastapi')}, sse-starlette {version('sse-starlette')}, "
            f"uvicorn {version('uvicorn')}, httpx-sse {version('httpx-sse')}"
        )
    )
    print(f"{'subscribers':>11}  {'deliveries':>10}  {'median ms':>9}  {'p99 ms':>8}")
    for count, deliveries, median, p99 in rows:
        print(f"{count:>11}  {deliveries:>10}  {median:>9.2f}  {p99:>8.2f}")
    (_, _, base_median, base_p99), (count, _, median, p99) = rows
    print(
        f"ratio {count} vs 1 subscriber: median {median / base_median:.2f}x, "
        f"p99 {p99 / base_p99:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
