"""The worker: the forked process that confines itself and runs the user's code.

It starts as a fork of the warm server (pandas, numpy, matplotlib, seaborn and sklearn already
imported), becomes a session leader, points stdin/stdout/stderr at the supervisor's pipes,
closes every other descriptor, applies the isolation layers, loads the input DataFrames from
Arrow files in its workdir and ``exec``s the code. It reports back one JSON document on its
result pipe: no pickles, no objects, just data.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

from keiri_agent.sandbox.isolation import IsolationConfig, apply_isolation
from keiri_agent.sandbox.profiles import SandboxProfile

__all__ = ["USER_CODE_FILENAME", "run_worker"]

USER_CODE_FILENAME = "<user_code>"
MAX_RESULT_JSON_BYTES = 1024 * 1024  # the ``result`` variable is returned only up to this size
MAX_TRACEBACK_LINES = 20
RESERVED_NAMES = frozenset({"df", "dfs", "workspace_dir", "__name__", "__builtins__"})


def _redirect(stdout_fd: int, stderr_fd: int, keep: int) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    # Nothing else of the server's survives: not its protocol pipe, not its log.
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)
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


def _load_inputs(inputs: dict[str, str]) -> dict[str, Any]:
    if not inputs:
        return {}
    import pyarrow.feather as feather

    return {name: feather.read_feather(path) for name, path in inputs.items()}


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
    inputs: dict[str, str],
    stdout_fd: int,
    stderr_fd: int,
    result_fd: int,
) -> NoReturn:
    """Confine this process, run ``code`` and exit; never returns."""
    report: dict[str, Any] = {"ok": False, "error": None, "layers": [], "result": None}
    try:
        os.setsid()
        _redirect(stdout_fd, stderr_fd, result_fd)
        os.chdir(workdir)
        statuses = apply_isolation(IsolationConfig(workdir=workdir, profile=profile))
        report["layers"] = [
            {"name": s.name, "active": s.active, "detail": s.detail} for s in statuses
        ]
        # Reported at once, so an action killed later by a limit still says how it was confined.
        _write_all(result_fd, json.dumps({"layers": report["layers"]}).encode("utf-8") + b"\n")
        frames = _load_inputs(inputs)
        namespace: dict[str, Any] = {
            "__name__": "__main__",
            "__builtins__": __builtins__,
            **{name: frame for name, frame in frames.items() if name not in RESERVED_NAMES},
            "dfs": frames,
            "df": next(iter(frames.values())) if frames else None,
            "workspace_dir": ".",
        }
        compiled = compile(code, USER_CODE_FILENAME, "exec")
        try:
            exec(compiled, namespace)
        except SystemExit as stop:
            if stop.code not in (None, 0):
                raise
        report["ok"] = True
        report["result"] = _json_result(namespace)
    except BaseException as exc:
        report["error"] = _error_report(exc, code.splitlines())
        report["memory_error"] = isinstance(exc, MemoryError)
        report["fsize_error"] = isinstance(exc, OSError) and exc.errno == errno.EFBIG
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        data = json.dumps(report, ensure_ascii=False, default=str).encode("utf-8")
        with contextlib.suppress(OSError):
            _write_all(result_fd, data + b"\n")
        os._exit(0)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
