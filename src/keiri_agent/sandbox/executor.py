"""``SandboxExecutor``: the one way keiri-agent runs code that an LLM wrote.

``run(code, workdir=..., profile="analysis" | "codeact", inputs={name: DataFrame})`` checks the
code against the profile's AST policy (a violation is refused before any process starts),
writes the DataFrames as Arrow files into the workdir, and hands the action to the warm fork
server, which forks a supervisor and a confined worker for it. The outcome comes back as JSON
and is validated into an ``ExecutionOutcome``; nothing the child wrote is ever unpickled.

The executor is thread-safe: several actions may run at once (one supervisor each). The fork
server starts on first use and is shut down by ``close()`` (or at interpreter exit).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.sandbox.outcome import ExecutionError, ExecutionOutcome, outcome_from_supervisor
from keiri_agent.sandbox.policy import PolicyError, enforce_policy
from keiri_agent.sandbox.profiles import SandboxProfile, get_profile
from keiri_agent.sandbox.supervisor import remove_sandbox_dir, reset_sandbox_dir

__all__ = ["SandboxExecutor", "default_executor", "run"]

SERVER_START_TIMEOUT_S = 120.0  # the first start may build matplotlib's font cache
RESULT_MARGIN_S = 30.0  # beyond the wall limit, time for the supervisor to clean up
# Variables passed to the fork server; everything else (API keys!) stays behind.
SERVER_ENV_KEEP = ("PATH", "HOME", "LANG", "LC_ALL", "XDG_CACHE_HOME", "MPLCONFIGDIR", "PYTHONPATH")


def _server_env() -> dict[str, str]:
    env = {name: os.environ[name] for name in SERVER_ENV_KEEP if name in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _sandbox_error(message: str, hint: str, **details: Any) -> BlockError:
    return BlockError(message, code=ErrorCode.INTERNAL_ERROR, hint=hint, details=details)


class _Server:
    """One running fork server process and the thread that reads its messages."""

    def __init__(self, python: str) -> None:
        self.results_dir = Path(tempfile.mkdtemp(prefix="keiri-sandbox-"))
        os.chmod(self.results_dir, 0o700)
        self.log_path = self.results_dir / "server.log"
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(
            [python, "-m", "keiri_agent.sandbox.forkserver", str(self.results_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=_server_env(),
            cwd=self.results_dir,
            start_new_session=True,
            close_fds=True,
        )
        self._lock = threading.Lock()
        self._waiters: dict[int, threading.Event] = {}
        self._pids: dict[int, int] = {}
        self._ready = threading.Event()
        self.info: dict[str, Any] = {}
        self.alive = True
        self._reader = threading.Thread(target=self._read, name="sandbox-server", daemon=True)
        self._reader.start()
        if not self._ready.wait(SERVER_START_TIMEOUT_S) or not self.alive:
            log = self.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
            self.close()
            raise _sandbox_error(
                "サンドボックスの実行プロセスを起動できませんでした。",
                "`keiri-agent sandbox doctor` で環境を確認してください。",
                log=log,
            )

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            try:
                message = json.loads(raw)
            except json.JSONDecodeError:
                continue
            kind = message.get("type")
            if kind == "ready":
                self.info = message
                self._ready.set()
            elif kind == "started":
                self._pids[int(message["id"])] = int(message["pid"])
            elif kind == "done":
                with self._lock:
                    event = self._waiters.get(int(message["id"]))
                if event is not None:
                    event.set()
        self.alive = False
        self._ready.set()
        with self._lock:
            for event in self._waiters.values():
                event.set()

    def submit(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        action_id = int(request["id"])
        event = threading.Event()
        with self._lock:
            self._waiters[action_id] = event
        result_path = self.results_dir / f"{action_id}.json"
        try:
            line = (json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8")
            assert self.process.stdin is not None
            with self._lock:
                self.process.stdin.write(line)
                self.process.stdin.flush()
            if not event.wait(timeout) or not result_path.exists():
                self._kill_action(action_id)
                raise _sandbox_error(
                    "サンドボックスの実行が応答しなくなったため停止しました。",
                    "時間をおいて再実行してください。繰り返す場合は `keiri-agent sandbox doctor` を確認してください。",
                    action=action_id,
                    server_alive=self.alive,
                )
            return dict(json.loads(result_path.read_text(encoding="utf-8")))
        finally:
            with self._lock:
                self._waiters.pop(action_id, None)
            self._pids.pop(action_id, None)
            result_path.unlink(missing_ok=True)

    def _kill_action(self, action_id: int) -> None:
        pid = self._pids.get(action_id)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, 9)

    def close(self) -> None:
        self.alive = False
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait(timeout=5)
        self._log.close()
        shutil.rmtree(self.results_dir, ignore_errors=True)


class SandboxExecutor:
    """Runs code in fresh confined processes forked from one warm server."""

    def __init__(self, *, python: str | None = None) -> None:
        self.python = python or sys.executable
        self._server: _Server | None = None
        self._lock = threading.Lock()
        self._next_id = 0

    def _ensure_server(self) -> tuple[_Server, int]:
        """The live server (started or restarted if needed) and a fresh action id."""
        with self._lock:
            if self._server is None or not self._server.alive:
                if self._server is not None:
                    self._server.close()
                self._server = _Server(self.python)
            self._next_id += 1
            return self._server, self._next_id

    @property
    def server_pid(self) -> int | None:
        """The fork server's pid while it runs (for diagnostics and containment checks)."""
        server = self._server
        return server.process.pid if server is not None and server.alive else None

    def warm(self) -> dict[str, Any]:
        """Start the fork server now (otherwise the first action does); returns its info."""
        return dict(self._ensure_server()[0].info)

    def run(
        self,
        code: str,
        *,
        workdir: Path | str,
        profile: str | SandboxProfile = "analysis",
        inputs: Mapping[str, Any] | None = None,
    ) -> ExecutionOutcome:
        chosen = get_profile(profile)
        try:
            enforce_policy(code, chosen)
        except PolicyError as exc:
            return _refused(exc, chosen)
        except BlockError as exc:  # a syntax error: the code cannot run at all
            return ExecutionOutcome(
                success=False,
                error=ExecutionError(
                    type="SyntaxError",
                    message=exc.message,
                    traceback=[],
                    line=exc.details.get("line"),
                ),
                profile=chosen.name,
            )
        root = Path(workdir).resolve()
        root.mkdir(parents=True, exist_ok=True)
        server, action_id = self._ensure_server()
        input_paths = _write_inputs(root, action_id, inputs or {})
        request = {
            "id": action_id,
            "code": code,
            "workdir": str(root),
            "profile": _profile_dict(chosen),
            "inputs": input_paths,
        }
        try:
            raw = server.submit(request, timeout=chosen.wall_seconds + RESULT_MARGIN_S)
        finally:
            remove_sandbox_dir(root)
        if server.info.get("threads", 1) > 1:
            raw.setdefault("warnings", []).append(
                "サンドボックスの待機プロセスが複数スレッドで動いています（fork が不安定になる恐れ）。"
            )
        return outcome_from_supervisor(raw)

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.close()
                self._server = None


def _profile_dict(profile: SandboxProfile) -> dict[str, Any]:
    return {
        "name": profile.name,
        "cpu_seconds": profile.cpu_seconds,
        "wall_seconds": profile.wall_seconds,
        "memory_bytes": profile.memory_bytes,
        "fsize_bytes": profile.fsize_bytes,
        "max_files": profile.max_files,
        "max_total_bytes": profile.max_total_bytes,
        "output_bytes": profile.output_bytes,
        "nofile": profile.nofile,
    }


def _write_inputs(root: Path, action_id: int, inputs: Mapping[str, Any]) -> dict[str, str]:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.feather as feather

    paths: dict[str, str] = {}
    folder = reset_sandbox_dir(root) / "inputs"
    for name, frame in inputs.items():
        if not name.isidentifier():
            raise BlockError(
                f"入力名 '{name}' は Python の変数名として使えません。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="英字で始まる英数字とアンダースコアの名前（例: sales, df2）にしてください。",
                details={"input": name},
            )
        if not isinstance(frame, pd.DataFrame):
            raise BlockError(
                f"入力 '{name}' は DataFrame ではありません（{type(frame).__name__}）。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="ファイルは keiri_agent.documents.read_table で DataFrame にしてから渡してください。",
                details={"input": name},
            )
        folder.mkdir(exist_ok=True)
        path = folder / f"{action_id}-{name}.arrow"
        table = pa.Table.from_pandas(frame, preserve_index=True)
        feather.write_feather(table, path, compression="uncompressed")
        paths[name] = str(path)
    return paths


def _refused(exc: PolicyError, profile: SandboxProfile) -> ExecutionOutcome:
    violations = exc.details.get("violations", [])
    lines = [f"{v.get('line')} 行目: {v.get('message')}" for v in violations]
    return ExecutionOutcome(
        success=False,
        error=ExecutionError(
            type="PolicyViolation",
            message=exc.message,
            traceback=lines,
            line=violations[0].get("line") if violations else None,
        ),
        killed_by="policy",
        profile=profile.name,
        warnings=[exc.hint] if exc.hint else [],
    )


_default: SandboxExecutor | None = None
_default_lock = threading.Lock()


def default_executor() -> SandboxExecutor:
    """The process-wide executor (one warm server per process)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SandboxExecutor()
            atexit.register(_default.close)
        return _default


def run(
    code: str,
    *,
    workdir: Path | str,
    profile: str | SandboxProfile = "analysis",
    inputs: Mapping[str, Any] | None = None,
) -> ExecutionOutcome:
    """Run ``code`` with the process-wide executor (see ``SandboxExecutor.run``)."""
    return default_executor().run(code, workdir=workdir, profile=profile, inputs=inputs)
