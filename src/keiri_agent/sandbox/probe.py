"""``probe_layers``: which isolation layers this machine offers, found out in a throwaway child
that applies all of them (the caller's process is unchanged). Used by ``keiri-agent doctor``
and ``keiri-agent sandbox doctor``."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from keiri_agent.sandbox.isolation import IsolationConfig, apply_isolation
from keiri_agent.sandbox.layers import LAYER_NAMES, IsolationError, LayerStatus
from keiri_agent.sandbox.ownership import prepare_workdir_for, resolve_sandbox_ids
from keiri_agent.sandbox.profiles import ANALYSIS

__all__ = ["PROBE_TIMEOUT_SECONDS", "probe_layers"]

PROBE_TIMEOUT_SECONDS = 20.0


def _probe_child(workdir: Path, write_fd: int) -> None:
    payload: dict[str, object]
    try:
        statuses = apply_isolation(IsolationConfig(workdir=workdir, profile=ANALYSIS))
        payload = {"statuses": [asdict(s) for s in statuses]}
    except IsolationError as exc:
        failed = {"layer": exc.layer, "message": exc.message}
        payload = {"statuses": [asdict(s) for s in exc.statuses], "failed": failed}
    except Exception as exc:  # a bug must show up in the probe, not as a silent child exit
        payload = {"statuses": [], "failed": {"layer": "probe", "message": repr(exc)}}
    data = json.dumps(payload, ensure_ascii=False).encode()
    while data:
        data = data[os.write(write_fd, data) :]


def _read_all(fd: int, timeout: float) -> bytes:
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    while (remaining := deadline - time.monotonic()) > 0:
        if select.select([fd], [], [], remaining)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    raise TimeoutError


def probe_layers(workdir: Path | None = None) -> list[LayerStatus]:
    """Which layers work here: a throwaway child applies all of them and reports back.

    The child confines itself to a temporary directory (created under ``workdir`` when given,
    which the sandbox user must be able to traverse); the caller's process is unchanged. A layer
    that failed is reported inactive with the error, the layers after it as unchecked.
    """
    base = Path(tempfile.mkdtemp(prefix="keiri-probe-", dir=workdir))
    try:
        if os.geteuid() == 0:
            prepare_workdir_for(*resolve_sandbox_ids(), base)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                os.close(read_fd)
                _probe_child(base, write_fd)
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        try:
            raw = _read_all(read_fd, PROBE_TIMEOUT_SECONDS)
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            raise IsolationError("probe", "確認用の子プロセスが応答しません") from None
        finally:
            os.close(read_fd)
            os.waitpid(pid, 0)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if not raw:
        raise IsolationError("probe", "確認用の子プロセスが結果を返さずに終了しました")
    payload = json.loads(raw)
    statuses = [LayerStatus(**s) for s in payload["statuses"]]
    if failed := payload.get("failed"):
        statuses.append(LayerStatus(failed["layer"], False, f"失敗: {failed['message']}"))
    done = {s.name for s in statuses}
    unchecked = [n for n in LAYER_NAMES if n not in done]
    return statuses + [LayerStatus(n, False, "前の層が失敗したため未確認") for n in unchecked]
