"""Fixtures for the sandbox executor tests: one warm executor, workdirs, canaries, listeners.

The executor starts one jail (bubblewrap + warm fork server) per workdir, a few seconds each, so
the ``workdir`` fixture hands every test the same directory (emptied before and after): one jail
serves the whole session. It lives inside a 0700 directory, as a workdir of a private
``mkdtemp`` would: the jail binds it at its own path, so no other uid ever has to reach it.

Secrets the sandbox must never reveal are planted before the server starts: a canary token in
the test process's environment and (through ``PYTHONPATH``, one of the few variables the executor
hands to its server) in the server's own environment block, and a canary file in a directory
outside every workdir. Listeners on TCP, UDP and a unix socket count every connection attempt
that reaches them.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any
from unittest import mock

import pytest

import keiri_agent.sandbox.executor as executor_module
from keiri_agent.sandbox import ANALYSIS, ExecutionOutcome, SandboxExecutor, SandboxProfile
from keiri_agent.sandbox.procs import descendants

MiB = 1024 * 1024
IS_ROOT = os.geteuid() == 0
CANARY_ENV_VAR = "SBX_CANARY_TOKEN"
CANARY_TOKEN = f"sbx-canary-{uuid.uuid4().hex}"
# Reaches the fork server's environment (PYTHONPATH is passed through): a nonexistent entry.
CANARY_PYTHONPATH = f"/nonexistent/{CANARY_TOKEN}"
SURVIVOR_TIMEOUT_S = 60.0  # a generous "did not linger" bound on a loaded machine (10 s was not)
SANDBOX_DIR_PREFIX = "keiri-sbx-"
# A test that starts a jail of its own (the CLI, the doctor, a private tree) waits for the warm
# server's imports: a minute or more on a loaded two-core machine, twice for two CLI calls.
JAIL_TEST_TIMEOUT_S = 600

# Not a product profile: the real ``analysis`` allowlist plus everything an attacker wants, and
# small limits so the corpus stays fast. Runs of this profile skip the AST policy (see
# ``run_unchecked``) to prove that the OS layers hold on their own.
ATTACK = dataclasses.replace(
    ANALYSIS,
    name="attack",
    allowed_imports=ANALYSIS.allowed_imports
    | {
        "os",
        "os.path",
        "sys",
        "socket",
        "subprocess",
        "ctypes",
        "ctypes.util",
        "signal",
        "resource",
        "multiprocessing",
        "threading",
        "urllib",
        "urllib.request",
        "shutil",
        "pathlib",
        "mmap",
        "select",
        "fcntl",
        "time",
        "errno",
        "pickle",
        "inspect",
        "concurrent.futures",
        "matplotlib.animation",
    },
    cpu_seconds=3,
    wall_seconds=5.0,
    memory_bytes=256 * MiB,
    fsize_bytes=1 * MiB,
    max_files=50,
    max_total_bytes=5 * MiB,
    output_bytes=64 * 1024,
)


def make_sandbox_dir(prefix: str) -> Path:
    """A fresh directory directly under /tmp that the sandbox user can traverse."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix=prefix))
    path.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def sigterm_hits() -> Iterator[list[int]]:
    """Every SIGTERM the test process receives (none may come from the sandbox)."""
    hits: list[int] = []

    def record(signum: int, _frame: FrameType | None) -> None:
        hits.append(signum)

    previous = signal.signal(signal.SIGTERM, record)
    yield hits
    signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="session")
def executor(sigterm_hits: list[int]) -> Iterator[SandboxExecutor]:
    """One warm executor for the session, started after the canaries are in the environment."""
    del sigterm_hits  # only its installation before the server starts matters
    saved = {name: os.environ.get(name) for name in (CANARY_ENV_VAR, "PYTHONPATH")}
    os.environ[CANARY_ENV_VAR] = CANARY_TOKEN
    pythonpath = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = (
        f"{pythonpath}{os.pathsep}{CANARY_PYTHONPATH}" if pythonpath else CANARY_PYTHONPATH
    )
    sandbox = SandboxExecutor()
    try:
        sandbox.warm(_SESSION_WORKDIR)
    finally:
        # The server has its copy; nothing else in the session needs the canaries.
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    yield sandbox
    sandbox.close()


_PRIVATE_PARENT = Path(tempfile.mkdtemp(prefix="keiri-sbx-private-"))  # 0700, as mkdtemp makes it
_SESSION_WORKDIR = _PRIVATE_PARENT / "work"


def empty_dir(path: Path) -> None:
    """Remove everything inside ``path`` (never following a symlink), keeping the directory."""
    for item in path.iterdir():
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item)
        else:
            item.unlink()


@pytest.fixture
def workdir() -> Iterator[Path]:
    """The session's workdir (inside a 0700 directory), empty at the start of each test."""
    _SESSION_WORKDIR.mkdir(exist_ok=True)
    empty_dir(_SESSION_WORKDIR)
    yield _SESSION_WORKDIR
    empty_dir(_SESSION_WORKDIR)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(JAIL_TEST_TIMEOUT_S))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    del session, exitstatus
    shutil.rmtree(_PRIVATE_PARENT, ignore_errors=True)


@dataclass
class Outside:
    """A directory outside every workdir, holding a canary file no action may read or touch."""

    path: Path
    token: str
    secret: Path

    def entries(self) -> dict[str, tuple[int, int, int]]:
        """Every path below the directory with (size, mode, link count)."""
        found: dict[str, tuple[int, int, int]] = {}
        for item in sorted(self.path.rglob("*")):
            info = item.lstat()
            found[item.relative_to(self.path).as_posix()] = (
                info.st_size,
                info.st_mode,
                info.st_nlink,
            )
        return found


@pytest.fixture
def outside() -> Iterator[Outside]:
    """The outside directory; readable by everyone, so only the sandbox layers can stop a read."""
    path = make_sandbox_dir("keiri-sbx-outside-")
    token = f"outside-canary-{uuid.uuid4().hex}"
    secret = path / "secret.txt"
    secret.write_text(f"{token}\n", encoding="utf-8")
    secret.chmod(0o666)
    path.chmod(0o777)
    yield Outside(path=path, token=token, secret=secret)
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class Listener:
    """Loopback listeners that count every connection or datagram that reaches them."""

    tcp_port: int
    udp_port: int
    unix_path: Path
    counts: dict[str, int] = field(default_factory=lambda: {"tcp": 0, "udp": 0, "unix": 0})

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _serve(sock: socket.socket, kind: str, listener: Listener, stop: threading.Event) -> None:
    sock.settimeout(0.1)
    while not stop.is_set():
        try:
            if kind == "udp":
                sock.recvfrom(65536)
            else:
                conn, _ = sock.accept()
                conn.close()
        except (TimeoutError, OSError):
            continue
        listener.counts[kind] += 1


@pytest.fixture
def listener() -> Iterator[Listener]:
    """TCP and UDP on 127.0.0.1 and a world-writable unix socket, each counted by a thread."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(16)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix_dir = make_sandbox_dir("keiri-sbx-unix-")
    unix_path = unix_dir / "listener.sock"
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(unix_path))
    unix_path.chmod(0o777)  # were it not for the sandbox, nobody could connect
    unix.listen(16)
    result = Listener(
        tcp_port=tcp.getsockname()[1], udp_port=udp.getsockname()[1], unix_path=unix_path
    )
    stop = threading.Event()
    threads = [
        threading.Thread(target=_serve, args=(s, kind, result, stop), daemon=True)
        for s, kind in ((tcp, "tcp"), (udp, "udp"), (unix, "unix"))
    ]
    for thread in threads:
        thread.start()
    yield result
    stop.set()
    for thread in threads:
        thread.join(timeout=2)
    for sock in (tcp, udp, unix):
        sock.close()
    shutil.rmtree(unix_dir, ignore_errors=True)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # gone already
    return stat[stat.rindex(")") + 2] in "ZX"


def _live_descendants(pid: int) -> list[int]:
    """Running descendants of ``pid``.

    A supervisor that has reported its outcome exits and stays a zombie until the fork server's
    next idle poll (up to 0.5 s) reaps it; a zombie runs no code and holds no resources but its
    pid, so it does not count as left behind.
    """
    return [child for child in descendants(pid) if not _is_zombie(child)]


def assert_no_survivors(executor: SandboxExecutor, timeout: float = SURVIVOR_TIMEOUT_S) -> None:
    """Within ``timeout``, the last used jail's fork server has no running descendant but its
    spare action (a supervisor and its worker, forked for the next request: at most two)."""
    server = executor.server_pid
    assert server is not None, "the fork server died"
    deadline = time.monotonic() + timeout
    while True:
        spare = set(executor.spare_pids())
        left = [pid for pid in _live_descendants(server) if pid not in spare]
        if not left and len(spare) <= 2:
            return
        if time.monotonic() >= deadline:
            details = {pid: _cmdline(pid) for pid in left}
            raise AssertionError(f"processes survived the action: {details} (spare {spare})")
        time.sleep(0.05)


def _cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return "?"


def _skip_policy(code: str, _profile: SandboxProfile) -> ast.Module:
    return ast.parse(code)


def run_unchecked(
    executor: SandboxExecutor,
    code: str,
    *,
    workdir: Path,
    profile: SandboxProfile,
    inputs: dict[str, Any] | None = None,
) -> ExecutionOutcome:
    """Run ``code`` as if the AST policy had been bypassed: only the OS layers stand in the way.

    Patches the executor's policy hook in this (the parent) process only; the fork server and
    the worker never consult the policy, so what runs is exactly what an attacker who found a
    hole in the AST check would get.
    """
    with mock.patch.object(executor_module, "enforce_policy", _skip_policy):
        return executor.run(code, workdir=workdir, profile=profile, inputs=inputs)


RunUnchecked = Callable[..., ExecutionOutcome]
