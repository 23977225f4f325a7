"""The host side of one jail: the ``bwrap`` process running the warm fork server for a workdir.

``JailServer`` creates the jail's private host directory (0700, outside the workdir: inputs,
outcomes, the server's log and matplotlib cache), its cgroups where the machine has them, starts
``bwrap`` with ``jail.jail_command`` around ``python -m keiri_agent.sandbox.forkserver`` and
reads the server's messages in a thread. ``submit`` sends one request and waits for its
outcome file; if the jail stops answering within the wall limit plus a margin, the whole jail
is killed (its PID namespace takes every process of the action with it).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.sandbox.cgroups import CgroupTree, remove_cgroup_dirs
from keiri_agent.sandbox.jail import JAIL_DIR, JailPaths, find_bwrap, jail_command

__all__ = ["SERVER_ENV_KEEP", "JailServer", "server_env"]

SERVER_START_TIMEOUT_S = 120.0  # the first start may build matplotlib's font cache
CLOSE_TIMEOUT_S = 5.0
# Variables passed to the fork server; everything else (API keys!) stays behind.
SERVER_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "PYTHONPATH")


def sandbox_error(message: str, hint: str, **details: Any) -> BlockError:
    return BlockError(message, code=ErrorCode.INTERNAL_ERROR, hint=hint, details=details)


def server_env() -> dict[str, str]:
    """The fork server's environment: a few of the caller's variables, homes inside the jail."""
    env = {name: os.environ[name] for name in SERVER_ENV_KEEP if name in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env["HOME"] = f"{JAIL_DIR}/home"
    env["MPLCONFIGDIR"] = f"{JAIL_DIR}/mpl"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


class JailServer:
    """One running jail (bwrap + fork server) for one workdir, and its message reader."""

    def __init__(self, python: str, workdir: Path) -> None:
        bwrap = find_bwrap()
        self.workdir = workdir
        self.identity = _identity(workdir)
        self.host_dir = Path(tempfile.mkdtemp(prefix="keiri-jail-"))
        os.chmod(self.host_dir, 0o700)
        for sub in ("inputs", "home", "mpl"):
            (self.host_dir / sub).mkdir(mode=0o700)
        jail_cgroups = CgroupTree().make_jail_dirs()
        self.cgroups = jail_cgroups.dirs
        self.unenforced = jail_cgroups.unenforced  # property -> why not, sent with each request
        self.log_path = self.host_dir / "server.log"
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115 - closed in close()
        argv = [python, "-m", "keiri_agent.sandbox.forkserver", JAIL_DIR]
        paths = JailPaths(workdir=workdir, host_dir=self.host_dir, cgroups=self.cgroups)
        self.command = jail_command(bwrap, paths, argv)
        self.process = _spawn(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=server_env(),
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
        self._lock = threading.Lock()
        self._waiters: dict[int, threading.Event] = {}
        self._running: dict[int, int] = {}  # action id -> its supervisor's pid in the jail
        self._spare: int | None = None  # the spare supervisor's pid in the jail
        self._ready = threading.Event()
        self.info: dict[str, Any] = {}
        self.alive = True
        self._reader = threading.Thread(target=self._read, name="sandbox-jail", daemon=True)
        self._reader.start()
        if not self._ready.wait(SERVER_START_TIMEOUT_S) or not self.alive:
            log = self.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
            self.close()
            raise sandbox_error(
                "サンドボックスのジェイル（bubblewrap）を起動できませんでした。",
                "`keiri-agent sandbox doctor` で環境を確認してください。",
                log=log,
                workdir=str(workdir),
            )

    def matches(self, workdir: Path) -> bool:
        """Whether this jail still shows ``workdir`` (not a directory since replaced)."""
        return self.alive and _identity(workdir) == self.identity

    @property
    def server_pid(self) -> int | None:
        """The fork server's pid as the host sees it (inside the jail it has another)."""
        jail_pid = self.info.get("pid")
        return self._host_pid(jail_pid) if isinstance(jail_pid, int) else None

    def action_pids(self) -> list[int]:
        """Host pids of every process of the actions running now (supervisors and below)."""
        with self._lock:
            running = list(self._running.values())
        return self._with_descendants(running)

    def spare_pids(self) -> list[int]:
        """Host pids of the spare action (a supervisor and its worker, waiting for a request)."""
        return self._with_descendants([self._spare] if self._spare is not None else [])

    def _with_descendants(self, jail_pids: list[int]) -> list[int]:
        from keiri_agent.sandbox.procs import descendants

        found: list[int] = []
        for jail_pid in jail_pids:
            pid = self._host_pid(jail_pid)
            if pid is not None:
                found += [pid, *descendants(pid)]
        return found

    def _host_pid(self, jail_pid: int) -> int | None:
        """The host pid of the process the jail knows as ``jail_pid`` (None once it is gone)."""
        if not self.alive:
            return None
        from keiri_agent.sandbox.procs import descendants

        for pid in descendants(self.process.pid):
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    # NSpid: host, jail[, the action's own namespace]
                    if line.startswith("NSpid:") and line.split()[2:3] == [str(jail_pid)]:
                        return pid
        return None

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            try:
                message = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if not isinstance(message, dict):
                continue
            kind = message.get("type")
            if kind == "ready":
                self.info = message
                self._ready.set()
            elif kind == "spare" and isinstance(message.get("pid"), int):
                self._spare = message["pid"]
            elif kind == "started" and isinstance(message.get("pid"), int):
                with self._lock:
                    self._running[message.get("id", -1)] = message["pid"]
                if self._spare == message["pid"]:
                    self._spare = None
            elif kind == "done":
                with self._lock:
                    event = self._waiters.get(message.get("id", -1))
                    self._running.pop(message.get("id", -1), None)
                if event is not None:
                    event.set()
        self.alive = False
        self._ready.set()
        with self._lock:
            for event in self._waiters.values():
                event.set()

    def input_path(self, name: str) -> tuple[Path, str]:
        """Where the host writes an input file, and where the jail sees it."""
        return self.host_dir / "inputs" / name, f"{JAIL_DIR}/inputs/{name}"

    def submit(self, request: dict[str, Any], timeout: float) -> Any:
        """Send one request; the supervisor's outcome document (parsed JSON, not validated)."""
        action_id = int(request["id"])
        event = threading.Event()
        with self._lock:
            self._waiters[action_id] = event
        result_path = self.host_dir / f"{action_id}.json"
        try:
            line = (json.dumps({**request, "unenforced": self.unenforced}) + "\n").encode()
            assert self.process.stdin is not None
            with self._lock:
                self.process.stdin.write(line)
                self.process.stdin.flush()
            if not event.wait(timeout) or not result_path.exists():
                alive = self.alive
                self.close()  # the action is stuck: the jail goes, and every process in it
                raise sandbox_error(
                    "サンドボックスの実行が応答しなくなったため停止しました。",
                    "時間をおいて再実行してください。繰り返す場合は `keiri-agent sandbox doctor` を確認してください。",
                    action=action_id,
                    server_alive=alive,
                )
            return json.loads(result_path.read_text(encoding="ascii", errors="replace"))
        finally:
            with self._lock:
                self._waiters.pop(action_id, None)
            result_path.unlink(missing_ok=True)
            for item in (self.host_dir / "inputs").glob(f"{action_id}-*"):
                item.unlink(missing_ok=True)

    def close(self) -> None:
        self.alive = False
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=CLOSE_TIMEOUT_S)
        self._log.close()
        remove_cgroup_dirs(self.cgroups)
        shutil.rmtree(self.host_dir, ignore_errors=True)


class _Spawner:
    """One thread that lives as long as the process and starts every jail.

    ``bwrap --die-with-parent`` uses ``PR_SET_PDEATHSIG``, which fires when the *thread* that
    started it exits, not the process: a jail started from a short-lived thread (a CodeAct
    action runs in one) would be killed as soon as that thread ends.
    """

    def __init__(self) -> None:
        self._requests: queue.Queue[tuple[list[str], dict[str, Any], queue.Queue[Any]]]
        self._requests = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def spawn(self, command: list[str], **options: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._serve, name="sandbox-jail-spawner", daemon=True
                )
                self._thread.start()
        answer: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._requests.put((command, options, answer))
        result = answer.get()
        if isinstance(result, BaseException):
            raise result
        process: subprocess.Popen[bytes] = result
        return process

    def _serve(self) -> None:
        while True:
            command, options, answer = self._requests.get()
            try:
                answer.put(subprocess.Popen(command, **options))
            except BaseException as exc:  # handed to the caller's thread
                answer.put(exc)


_SPAWNER = _Spawner()


def _spawn(command: list[str], **options: Any) -> subprocess.Popen[bytes]:
    return _SPAWNER.spawn(command, **options)


def _identity(workdir: Path) -> tuple[int, int]:
    info = os.stat(workdir)
    return info.st_dev, info.st_ino
