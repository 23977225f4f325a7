"""Execution backends for block nodes: threads (default) and Dask distributed.

One small interface: ``submit(fn, *args) -> concurrent.futures.Future`` and ``close()``. The
runner keeps scheduling, loops, subflows and UI nodes in its own threads and hands only block
executions to the backend, so a foreach over 10,000 files can spread over a Dask cluster
(``policy.executor: dask``; scheduler from ``KEIRI_DASK_SCHEDULER``, else a local cluster).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of

__all__ = ["Backend", "DaskBackend", "ThreadBackend"]

T = TypeVar("T")


class Backend(Protocol):
    name: str
    # Whether functions run in this process (they may then share objects with the runner).
    local: bool

    def submit(self, fn: Callable[..., T], /, *args: Any) -> cf.Future[T]: ...

    def close(self) -> None: ...


class ThreadBackend:
    """Block executions in a thread pool of this process."""

    name = "threads"
    local = True

    def __init__(self, max_workers: int = 64) -> None:
        self._pool = cf.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="keiri-block"
        )

    def submit(self, fn: Callable[..., T], /, *args: Any) -> cf.Future[T]:
        # The caller's context (the run's privacy.job_scope vault) goes along to the pool.
        return self._pool.submit(contextvars.copy_context().run, fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class DaskBackend:
    """Block executions on a Dask cluster (functions and arguments must pickle)."""

    name = "dask"
    local = False

    def __init__(self, address: str | None = None, *, n_workers: int = 2) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise BlockError(
                "policy.executor: dask には distributed パッケージが必要です。",
                code=ErrorCode.CONFIGURATION_ERROR,
                hint="pip install 'keiri-agent[dask]' を実行してください。",
            ) from exc
        self._cluster: Any = None
        try:
            if address:
                self._client: Any = Client(address, timeout="10s")  # type: ignore[no-untyped-call]
            else:
                self._cluster = LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=n_workers, threads_per_worker=2, dashboard_address=None
                )
                self._client = Client(self._cluster)  # type: ignore[no-untyped-call]
        except Exception as exc:
            raise BlockError(
                f"Dask スケジューラ {address or '(ローカルクラスタ)'} に接続できません: {reason_of(exc)}",
                code=ErrorCode.CONFIGURATION_ERROR,
                hint="KEIRI_DASK_SCHEDULER のアドレス（tcp://host:8786）とネットワークを確認してください。",
                details={"address": address, "cause": cause_of(exc)},
            ) from exc
        self.address = address or str(self._client.scheduler.address)
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any) -> cf.Future[T]:
        outer: cf.Future[T] = cf.Future()
        # pure=False: the same node with the same inputs may legitimately run twice (retries).
        inner = self._client.submit(fn, *args, pure=False)

        def done(f: Any) -> None:
            if outer.cancelled():
                return
            try:
                outer.set_result(f.result())
            except BaseException as exc:  # the task's own exception, re-raised here
                outer.set_exception(exc)

        def cancel(f: cf.Future[T]) -> None:
            if f.cancelled():
                inner.cancel()

        outer.add_done_callback(cancel)
        outer.set_running_or_notify_cancel()
        inner.add_done_callback(done)
        return outer

    def close(self) -> None:
        with self._lock:
            self._client.close()
            if self._cluster is not None:
                self._cluster.close()
