"""The worker: the forked process that confines itself and runs the user's code.

It starts as a fork of the action's supervisor (so of the warm server: pandas, numpy,
matplotlib, seaborn and sklearn already imported; see ``spare``), becomes a session leader, points
stdin/stdout/stderr at the supervisor's pipes, closes every other descriptor, applies the
isolation layers, writes their statuses on the layers pipe and closes it (before any user code
runs, so the supervisor can trust what came through it), reads the input DataFrames from
descriptors it opened before its isolation and ``exec``s the code.

Its exit status is ``WORKER_EXIT_COMPLETED`` only on the path where ``exec`` returned; anything
else exits with ``WORKER_EXIT_FAILED``. The JSON report on its result pipe (result value or
error) is written after user code ran and is untrusted: no pickles, no objects, just data.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

from keiri_agent.sandbox.isolation import IsolationConfig, apply_isolation
from keiri_agent.sandbox.outcome import WORKER_EXIT_COMPLETED
from keiri_agent.sandbox.profiles import SandboxProfile
from keiri_agent.sandbox.timeline import Marks, mark

__all__ = ["USER_CODE_FILENAME", "WORKER_EXIT_FAILED", "run_worker"]

USER_CODE_FILENAME = "<user_code>"
MAX_RESULT_JSON_BYTES = 1024 * 1024  # the ``result`` variable is returned only up to this size
MAX_TRACEBACK_LINES = 20
RESERVED_NAMES = frozenset({"df", "dfs", "workspace_dir", "__name__", "__builtins__"})
WORKER_EXIT_FAILED = 1


def _redirect(stdout_fd: int, stderr_fd: int, keep: set[int]) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    # Nothing else of the server's survives: not its protocol pipe, not its log.
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace", write_through=True
    )
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="replace", write_through=True
    )


def _error_report(exc: BaseException, code_lines: list[str]) -> dict[str, Any]:
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename == USER_CODE_FILENAME
    ]
    lines = []
    for frame in frames[-MAX_TRACEBACK_LINES:]:
        lineno = frame.lineno or 0
        text = code_lines[lineno - 1].strip() if 0 < lineno <= len(code_lines) else ""
        lines.append(f"{lineno} 行目: {text}")
    if isinstance(exc, SyntaxError) and exc.lineno:
        lines.append(f"{exc.lineno} 行目: {(exc.text or '').strip()}")
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": lines,
        "line": frames[-1].lineno if frames else getattr(exc, "lineno", None),
        "errno": getattr(exc, "errno", None),
    }


def _load_inputs(input_fds: dict[str, int]) -> dict[str, Any]:
    if not input_fds:
        return {}
    import pyarrow.feather as feather

    frames = {}
    for name, fd in input_fds.items():
        with os.fdopen(fd, "rb") as source:
            frames[name] = feather.read_feather(source)
    return frames


def _json_result(namespace: dict[str, Any]) -> Any:
    if "result" not in namespace:
        return None
    try:
        text = json.dumps(namespace["result"], ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return None
    return json.loads(text) if len(text) <= MAX_RESULT_JSON_BYTES else None


def run_worker(
    *,
    code: str,
    workdir: Path,
    profile: SandboxProfile,
    input_fds: dict[str, int],
    stdout_fd: int,
    stderr_fd: int,
    result_fd: int,
    layers_fd: int,
    marks: Marks | None = None,
) -> NoReturn:
    """Confine this process, run ``code`` and exit; never returns.

    ``marks``: the timeline so far (see ``timeline``), sent on with the layers.
    """
    report: dict[str, Any] = {"error": None, "result": None}
    marks = list(marks or [])
    exit_code = WORKER_EXIT_FAILED
    try:
        os.setsid()
        _redirect(stdout_fd, stderr_fd, {result_fd, layers_fd, *input_fds.values()})
        os.chdir(workdir)
        statuses = apply_isolation(IsolationConfig(workdir=workdir, profile=profile))
        mark(marks, "isolation")
        # Read through descriptors opened before confinement: pyarrow starts threads, which
        # must not exist while the layers are applied.
        frames = _load_inputs(input_fds)
        mark(marks, "worker_inputs")
        layers = [{"name": s.name, "active": s.active, "detail": s.detail} for s in statuses]
        trusted = {"layers": layers, "marks": marks}
        _write_all(layers_fd, json.dumps(trusted, ensure_ascii=True).encode("ascii"))
        os.close(layers_fd)  # from here on, nothing this process writes is trusted
        namespace: dict[str, Any] = {
            "__name__": "__main__",
            "__builtins__": __builtins__,
            **{name: frame for name, frame in frames.items() if name not in RESERVED_NAMES},
            "dfs": frames,
            "df": next(iter(frames.values())) if frames else None,
            "workspace_dir": ".",
        }
        del frames
        compiled = compile(code, USER_CODE_FILENAME, "exec")
        try:
            exec(compiled, namespace)
        except SystemExit as stop:
            if stop.code not in (None, 0):
                raise
        exit_code = WORKER_EXIT_COMPLETED
        report["result"] = _json_result(namespace)
    except BaseException as exc:
        exit_code = WORKER_EXIT_FAILED
        report["error"] = _error_report(exc, code.splitlines())
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        with contextlib.suppress(BaseException):
            data = json.dumps(report, ensure_ascii=True, default=str).encode("ascii")
            _write_all(result_fd, data + b"\n")
        os._exit(exit_code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
