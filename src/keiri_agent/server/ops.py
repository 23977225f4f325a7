"""What an operator watches the server with: liveness, readiness and Prometheus metrics.

=======  ===============  ==========================================================================
GET      ``/healthz``     the process answers (200 ``{"status": "ok"}``); no authentication
GET      ``/readyz``      ready for work: 200, or 503 with the failed checks (task and run
                          directories writable, the sandbox's bubblewrap present, not stopping);
                          ``not_enforced`` lists the sandbox's per-action limits this machine
                          cannot enforce (no usable cgroup), with why, in Japanese: they do
                          not make the server unready; ``privacy`` says whether personal
                          data is masked before the models (``KEIRI_LLM_MASK_PII``); no
                          authentication, cheap (no LLM call, no sandbox action)
GET      ``/metrics``     Prometheus text format; an admin key once authentication is on
=======  ===============  ==========================================================================

Metrics (``prometheus-client``, one registry per app):

- ``keiri_tasks{kind,status}``: tasks queued or running now;
- ``keiri_tasks_settled_total{kind,status}``: tasks that reached a status other than queued or
  running (success, unverified, failed, cancelled, waiting_input, interrupted);
- ``keiri_task_queue_length``: tasks waiting for a running slot;
- ``keiri_task_duration_seconds{kind}``: how long each run of a task took (histogram);
- ``keiri_llm_tokens_total{kind,direction}``: LLM tokens used by tasks (input / output);
- ``keiri_http_requests_total{method,status}``: requests answered.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from keiri_agent.errors import BlockError, reason_of
from keiri_agent.events import LLMCall, RunEvent
from keiri_agent.privacy import masking_status
from keiri_agent.sandbox.cgroups import CgroupTree
from keiri_agent.sandbox.layers import LIMIT_NAMES
from keiri_agent.server.task_model import Task, TaskStatus
from keiri_agent.server.tasks import TaskRegistry

__all__ = ["METRICS_CONTENT_TYPE", "ServerMetrics", "readiness"]

METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
M = TypeVar("M", Counter, Histogram)
DURATION_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


def _writable(directory: Path) -> str | None:
    """None if a file can be created in ``directory`` (made when missing), else why not."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".ready-", dir=directory)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return f"{directory} に書き込めません: {reason_of(exc)}"
    return None


def _sandbox() -> str | None:
    from keiri_agent.sandbox.jail import find_bwrap

    try:
        find_bwrap()
    except BlockError as exc:
        return exc.message
    return None


def _unenforced_limits(cgroups: CgroupTree) -> list[dict[str, str]]:
    return [
        {"property": name, "limit": LIMIT_NAMES[name], "reason": reason}
        for name, reason in cgroups.plan().unenforced().items()
    ]


def readiness(registry: TaskRegistry, cgroups: CgroupTree | None = None) -> dict[str, Any]:
    """Each check with ``ok`` and, when it fails, ``problem`` (Japanese); and the sandbox's
    limits not in force on this machine (``cgroups``: this process's hierarchies by default)."""
    settings = registry.settings
    problems = {
        "tasks_dir": _writable(registry.root),
        "runs_dir": _writable(Path(settings.keiri_runs_dir).absolute()),
        "sandbox": _sandbox(),
        "accepting": "停止処理中です。" if registry.stopping.is_set() else None,
    }
    checks = {
        name: {"ok": problem is None, **({"problem": problem} if problem else {})}
        for name, problem in problems.items()
    }
    ready = all(check["ok"] for check in checks.values())
    return {
        "status": "ready" if ready else "not_ready",
        "checks": checks,
        "not_enforced": _unenforced_limits(cgroups or CgroupTree()),
        "privacy": masking_status(settings.keiri_llm_mask_pii),
    }


class _LiveTasks(Collector):
    def __init__(self, registry: TaskRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[GaugeMetricFamily]:
        tasks = GaugeMetricFamily(
            "keiri_tasks", "Tasks queued or running now.", labels=["kind", "status"]
        )
        counts: dict[tuple[str, str], int] = {}
        for task in self.registry.runtime.live():
            key = (task.kind, str(task.status))
            counts[key] = counts.get(key, 0) + 1
        for (kind, status), count in sorted(counts.items()):
            tasks.add_metric([kind, status], count)
        yield tasks
        queue = GaugeMetricFamily("keiri_task_queue_length", "Tasks waiting for a running slot.")
        queue.add_metric([], self.registry.queue_length)
        yield queue


class ServerMetrics:
    """The app's metrics; observes the task registry (a ``TaskObserver``)."""

    def __init__(self, registry: TaskRegistry) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_LiveTasks(registry))
        self.settled = self._metric(
            Counter,
            "keiri_tasks_settled",
            "Tasks that reached a status other than queued or running.",
            ["kind", "status"],
        )
        self.duration = self._metric(
            Histogram,
            "keiri_task_duration_seconds",
            "How long each run of a task took.",
            ["kind"],
            buckets=DURATION_BUCKETS,
        )
        self.tokens = self._metric(
            Counter, "keiri_llm_tokens", "LLM tokens used by tasks.", ["kind", "direction"]
        )
        self.requests = self._metric(
            Counter, "keiri_http_requests", "HTTP requests answered.", ["method", "status"]
        )
        self._started: dict[str, float] = {}
        self._lock = threading.Lock()
        registry.observers.append(self)

    def _metric(
        self, kind: type[M], name: str, documentation: str, labels: list[str], **options: Any
    ) -> M:
        """A ``Counter``/``Histogram`` of this app, kept in its own registry."""
        return kind(name, documentation, labels, registry=self.registry, **options)

    def on_event(self, task: Task, event: RunEvent) -> None:
        if isinstance(event, LLMCall):
            self.tokens.labels(task.kind, "input").inc(event.input_tokens)
            self.tokens.labels(task.kind, "output").inc(event.output_tokens)

    def on_status(self, task: Task) -> None:
        with self._lock:
            if task.status == TaskStatus.RUNNING:
                self._started[task.id] = time.monotonic()
                return
            if task.active:
                return
            started = self._started.pop(task.id, None)
        if started is not None:
            self.duration.labels(task.kind).observe(time.monotonic() - started)
        self.settled.labels(task.kind, str(task.status)).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
