"""The worker-side isolation layers hold against the attacks of DESIGN.md §5.

Every test forks a child that applies the layers to a fresh workdir, attacks, and reports what
happened as JSON over a pipe; the parent asserts containment (and, where it can, checks the
outside world itself: no file appeared, no connection arrived, no signal landed). Everything the
child uses is imported here first: once confined it may not be able to read the standard library.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import json
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.sandbox import landlock, seccomp
from keiri_agent.sandbox.isolation import (
    LAYER_NAMES,
    IsolationConfig,
    IsolationError,
    apply_isolation,
    default_readonly_paths,
    sandbox_env,
)
from keiri_agent.sandbox.layers import PROPERTY_NAMES
from keiri_agent.sandbox.probe import probe_layers
from keiri_agent.sandbox.profiles import ANALYSIS

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

MiB = 1024 * 1024
IS_ROOT = os.geteuid() == 0
SMALL = dataclasses.replace(
    ANALYSIS, cpu_seconds=2, memory_bytes=200 * MiB, fsize_bytes=1 * MiB, nofile=64
)
CHILD_TIMEOUT_S = 15.0
LIBC = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

Attack = Callable[[Path], Any]


def _userns_available() -> bool:
    """Whether an ordinary user may create a user namespace here (decides the netns layer)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os._exit(0 if LIBC.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNET)) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


NETNS_EXPECTED = IS_ROOT or _userns_available()


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A workdir inside a private (0700) directory: no other uid ever needs to reach it."""
    base = Path(tempfile.mkdtemp(prefix="keiri-isolation-test-"))
    work = base / "work"
    work.mkdir()
    yield work
    shutil.rmtree(base, ignore_errors=True)


def _read_pipe(fd: int, timeout: float) -> bytes | None:
    """Everything written to ``fd`` until EOF; None if the writer is still there at ``timeout``."""
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    while (remaining := deadline - time.monotonic()) > 0:
        if select.select([fd], [], [], remaining)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    return None


def run_child(
    workdir: Path,
    attack: Attack,
    *,
    setup: Callable[[Path], Any] | None = None,
    profile: Any = SMALL,
    timeout: float = CHILD_TIMEOUT_S,
) -> tuple[dict[str, Any], int, float]:
    """Fork, confine (``setup`` or apply_isolation), attack; returns (report, wait status, secs)."""
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        report: dict[str, Any]
        try:
            os.close(read_fd)
            os.setpgid(0, 0)
            if setup is None:
                layers = apply_isolation(IsolationConfig(workdir=workdir, profile=profile))
                report = {"layers": [dataclasses.asdict(s) for s in layers]}
            else:
                report = {"setup": setup(workdir)}
            report["outcome"] = attack(workdir)
        except BaseException as exc:
            report = {"error": f"{type(exc).__name__}: {exc}"}
        try:
            data = json.dumps(report, default=str).encode()
            while data:
                data = data[os.write(write_fd, data) :]
        finally:
            os._exit(0)
    os.close(write_fd)
    try:
        raw = _read_pipe(read_fd, timeout)
    finally:
        os.close(read_fd)
    if raw is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the sandboxed child did not finish in time")
    _, status = os.waitpid(pid, 0)
    elapsed = time.monotonic() - started
    report = json.loads(raw) if raw else {}
    return report, status, elapsed


def outcome_of(workdir: Path, attack: Attack, **kwargs: Any) -> Any:
    report, status, _ = run_child(workdir, attack, **kwargs)
    assert "error" not in report, report.get("error")
    assert os.waitstatus_to_exitcode(status) == 0
    return report["outcome"]


def attempt(action: Callable[[], Any]) -> str:
    """'ok: <value>' or the exception's class and errno name, as the child saw it."""
    try:
        return f"ok: {action()!r}"
    except OSError as exc:
        return f"{type(exc).__name__}:{errno.errorcode.get(exc.errno or 0, exc.errno)}"
    except Exception as exc:
        return type(exc).__name__


def _read(path: str | Path) -> Callable[[], bytes]:
    return lambda: Path(path).read_bytes()


# ---- the probe and the statuses ---------------------------------------------------------------


def test_probe_reports_every_layer_and_leaves_the_parent_alone() -> None:
    env_before = dict(os.environ)
    limits_before = resource.getrlimit(resource.RLIMIT_CPU), resource.getrlimit(resource.RLIMIT_AS)
    layers = probe_layers()
    assert [s.name for s in layers] == list(PROPERTY_NAMES)
    inactive = {s.name for s in layers if not s.active}
    assert inactive <= (set() if IS_ROOT else {"memory_cgroup", "pids_cgroup"}), layers
    assert all(s.detail for s in layers)
    assert os.geteuid() == (0 if IS_ROOT else os.getuid())
    assert dict(os.environ) == env_before
    assert (resource.getrlimit(resource.RLIMIT_CPU), resource.getrlimit(resource.RLIMIT_AS)) == (
        limits_before
    )
    with socket.socket():  # the parent can still create sockets
        pass


def test_apply_returns_statuses_in_order_with_reasons(workdir: Path) -> None:
    report, _, _ = run_child(workdir, lambda _: os.readlink("/proc/self/ns/net"))
    names = [s["name"] for s in report["layers"]]
    assert names == list(LAYER_NAMES)
    details = {s["name"]: s["detail"] for s in report["layers"]}
    assert "Landlock ABI" in details["landlock"]
    assert "ケーパビリティ" in details["caps"]


def test_preflight_rejects_a_missing_or_foreign_workdir(workdir: Path) -> None:
    report, _, _ = run_child(workdir / "missing", lambda _: None)
    assert "IsolationError" in report["error"]


def test_isolation_error_is_a_block_error() -> None:
    exc = IsolationError("landlock", "失敗", details={"errno": 1})
    assert exc.to_dict()["details"] == {"layer": "landlock", "applied": [], "errno": 1}
    assert "landlock" in exc.message


# ---- host files -------------------------------------------------------------------------------


def test_host_files_cannot_be_read(workdir: Path) -> None:
    secret = Path.cwd() / "secret.txt"  # the parent's cwd (conftest: an empty tmp dir)
    secret.write_text("parent secret")
    secret.chmod(0o644)
    ppid = os.getpid()

    def attack(_: Path) -> dict[str, str]:
        return {
            "passwd": attempt(_read("/etc/passwd")),
            "ppid_environ": attempt(_read(f"/proc/{ppid}/environ")),
            "ppid_cmdline": attempt(_read(f"/proc/{ppid}/cmdline")),
            "root_link": attempt(_read("/proc/self/root/etc/passwd")),
            "cwd_secret": attempt(_read(secret)),
            "listdir_tmp": attempt(lambda: os.listdir("/tmp")),
            "listdir_etc": attempt(lambda: os.listdir("/etc")),
        }

    outcome = outcome_of(workdir, attack)
    assert all(v.startswith("PermissionError") for v in outcome.values()), outcome


def test_environment_has_no_secrets(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-not-leak")

    def attack(_: Path) -> dict[str, Any]:
        LIBC.getenv.restype = ctypes.c_char_p
        return {
            "environ": dict(os.environ),
            "libc_getenv": LIBC.getenv(b"OPENAI_API_KEY"),
            "proc_environ": attempt(lambda: Path("/proc/self/environ").read_bytes().strip(b"\0")),
            "cwd": os.getcwd(),
            "tempdir": tempfile.gettempdir(),
        }

    outcome = outcome_of(workdir, attack)
    assert outcome["environ"] == sandbox_env(workdir)
    assert outcome["libc_getenv"] is None
    # The exec-time block is zeroed (as nobody with dumpable=0 it is not even readable).
    assert outcome["proc_environ"] in ("ok: b''", "PermissionError:EACCES")
    assert outcome["cwd"] == str(workdir)
    assert outcome["tempdir"] == str(workdir / ".sandbox" / "tmp")


# ---- writes -----------------------------------------------------------------------------------


def test_writes_stay_in_the_workdir(workdir: Path) -> None:
    outside = Path(f"/tmp/keiri-isolation-{uuid.uuid4().hex}")
    escape = workdir.parent / "escape.txt"

    def attack(wd: Path) -> dict[str, str]:
        return {
            "tmp": attempt(lambda: outside.write_text("x")),
            "dotdot": attempt(lambda: Path("../escape.txt").write_text("x")),
            "inside": attempt(lambda: (wd / "out.csv").write_text("a,b\n1,2\n")),
            "subdir": attempt(lambda: (wd / "sub").mkdir()),
            "home": attempt(lambda: (Path.home() / "h.txt").write_text("x")),
        }

    outcome = outcome_of(workdir, attack)
    assert outcome["tmp"].startswith("PermissionError")
    assert outcome["dotdot"].startswith("PermissionError")
    assert not outside.exists()
    assert not escape.exists()
    assert outcome["inside"].startswith("ok")
    assert outcome["home"].startswith("ok")
    assert (workdir / "out.csv").read_text() == "a,b\n1,2\n"
    assert (workdir / "out.csv").stat().st_uid == os.geteuid()  # no uid change, no chown


def test_metadata_outside_cannot_be_changed(workdir: Path) -> None:
    outside = workdir.parent / "owned.txt"  # the worker's own uid owns it: modes would allow it
    outside.write_text("x")
    outside.chmod(0o600)
    before = outside.stat()

    def attack(_: Path) -> dict[str, str]:
        return {
            "chmod": attempt(lambda: os.chmod(outside, 0o666)),
            "chown": attempt(lambda: os.chown(outside, os.getuid(), os.getgid())),
            "xattr": attempt(lambda: os.setxattr(outside, "user.k", b"v")),
        }

    outcome = outcome_of(workdir, attack)
    assert set(outcome.values()) == {"PermissionError:EPERM"}, outcome
    after = outside.stat()
    assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid)


def test_links_do_not_reach_outside(workdir: Path) -> None:
    outside = workdir.parent / "outside.txt"  # readable by anyone as far as file modes go
    outside.write_text("outside secret")
    outside.chmod(0o644)

    def attack(wd: Path) -> dict[str, str]:
        os.symlink("/etc/passwd", wd / "passwd")
        os.symlink(outside, wd / "outside")
        return {
            "symlink_passwd": attempt(_read(wd / "passwd")),
            "symlink_outside": attempt(_read(wd / "outside")),
            "hardlink": attempt(lambda: os.link(outside, wd / "hard")),
            "hardlink_passwd": attempt(lambda: os.link("/etc/passwd", wd / "hard2")),
        }

    outcome = outcome_of(workdir, attack)
    assert outcome["symlink_passwd"].startswith("PermissionError")
    assert outcome["symlink_outside"].startswith("PermissionError")
    assert outcome["hardlink"].startswith("PermissionError")
    assert outcome["hardlink_passwd"].startswith("PermissionError")
    assert not (workdir / "hard").exists()
    assert not (workdir / "hard2").exists()


# ---- processes, network, signals, tracing -----------------------------------------------------


def test_no_process_can_be_created(workdir: Path) -> None:
    def attack(wd: Path) -> dict[str, Any]:
        def fork() -> int:
            pid = os.fork()
            if pid == 0:
                (wd / "fork-marker").write_text("x")
                os._exit(0)
            return pid

        touch = ["/bin/sh", "-c", f"touch {wd / 'marker'}"]
        return {
            "fork": attempt(fork),
            "subprocess": attempt(lambda: subprocess.run(touch, check=False)),
            "system": os.system(f"touch {wd / 'marker'}"),
            "posix_spawn": attempt(lambda: os.posix_spawn(touch[0], touch, {})),
            "execv": attempt(lambda: os.execv(touch[0], touch)),
        }

    outcome = outcome_of(workdir, attack)
    for key in ("fork", "subprocess", "posix_spawn", "execv"):
        assert outcome[key] == "PermissionError:EPERM", outcome
    assert outcome["system"] != 0
    assert not (workdir / "marker").exists()
    assert not (workdir / "fork-marker").exists()


def test_no_network_and_the_listener_hears_nothing(workdir: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:

        def attack(_: Path) -> dict[str, str]:
            return {
                "tcp": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2)),
                "udp": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
                "unix": attempt(lambda: socket.socket(socket.AF_UNIX)),
                "socketpair": attempt(socket.socketpair),
            }

        outcome = outcome_of(workdir, attack)
        assert all(v == "PermissionError:EPERM" for v in outcome.values()), outcome
        assert select.select([listener], [], [], 0.2)[0] == []
    finally:
        listener.close()


def test_the_parent_cannot_be_signalled_or_traced(workdir: Path) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _: received.append(signum))
    ppid = os.getpid()
    try:

        def attack(_: Path) -> dict[str, str]:
            LIBC.ptrace.restype = ctypes.c_long
            zero = ctypes.c_void_p(None)

            def ptrace() -> int:
                if LIBC.ptrace(ctypes.c_long(PTRACE_ATTACH), ctypes.c_long(ppid), zero, zero):
                    raise OSError(ctypes.get_errno(), "ptrace")
                return 0

            return {
                "kill": attempt(lambda: os.kill(ppid, signal.SIGTERM)),
                "killpg": attempt(lambda: os.killpg(os.getpgid(ppid), signal.SIGTERM)),
                "ptrace": attempt(ptrace),
                "self": attempt(lambda: os.kill(os.getpid(), 0)),
            }

        outcome = outcome_of(workdir, attack)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert outcome["kill"] == outcome["killpg"] == outcome["ptrace"] == "PermissionError:EPERM"
    assert outcome["self"] == "ok: None"
    assert received == []


# ---- limits -----------------------------------------------------------------------------------


def test_limits_cannot_be_raised(workdir: Path) -> None:
    def attack(_: Path) -> dict[str, Any]:
        cpu = resource.getrlimit(resource.RLIMIT_CPU)
        address_space = resource.getrlimit(resource.RLIMIT_AS)
        return {
            "cpu_limit": cpu,
            # Soft up to hard is what the kernel allows anyone: only seccomp stops it.
            "cpu": attempt(lambda: resource.prlimit(0, resource.RLIMIT_CPU, (cpu[1], cpu[1]))),
            "as": attempt(
                lambda: resource.prlimit(0, resource.RLIMIT_AS, (address_space[1] * 2,) * 2)
            ),
            "setrlimit": attempt(lambda: resource.setrlimit(resource.RLIMIT_CPU, (cpu[1],) * 2)),
            "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
            "core": resource.getrlimit(resource.RLIMIT_CORE),
            "fd_exhaustion": attempt(open_until_exhausted),
        }

    def open_until_exhausted() -> None:
        held = [os.open("/dev/null", os.O_RDONLY) for _ in range(100_000)]
        raise AssertionError(f"opened {len(held)} descriptors")

    outcome = outcome_of(workdir, attack)
    assert outcome["cpu_limit"] == [SMALL.cpu_seconds, SMALL.cpu_seconds + 3]
    assert outcome["cpu"] == outcome["as"] == "PermissionError:EPERM"
    assert outcome["setrlimit"] == "ValueError"  # CPython's wording of EPERM
    assert outcome["core"] == [0, 0]
    assert outcome["nofile"][0] >= SMALL.nofile  # more only if the parent holds high fds
    assert outcome["fd_exhaustion"] == "OSError:EMFILE"


def test_memory_bomb_raises_memory_error(workdir: Path) -> None:
    def attack(_: Path) -> dict[str, str]:
        return {
            "bomb": attempt(lambda: len(bytearray(400 * MiB))),
            "small": attempt(lambda: len(bytearray(10 * MiB))),
        }

    assert outcome_of(workdir, attack) == {"bomb": "MemoryError", "small": "ok: 10485760"}


def test_oversized_file_raises_efbig(workdir: Path) -> None:
    def attack(wd: Path) -> str:
        def write() -> None:
            with open(wd / "big.bin", "wb") as f:
                f.write(b"x" * 2 * MiB)

        return attempt(write)

    assert outcome_of(workdir, attack) == "OSError:EFBIG"
    assert (workdir / "big.bin").stat().st_size <= SMALL.fsize_bytes


def test_busy_loop_is_killed_by_the_cpu_limit(workdir: Path) -> None:
    profile = dataclasses.replace(SMALL, cpu_seconds=1)

    def spin(_: Path) -> None:
        while True:
            pass

    # One CPU second can take many wall seconds on a loaded machine: the kill's signal, not the
    # time it took, shows that the CPU limit stopped the loop.
    report, status, _elapsed = run_child(workdir, spin, profile=profile, timeout=120)
    assert report == {}
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL)


def test_threads_numpy_and_pandas_still_work(workdir: Path) -> None:
    def attack(wd: Path) -> dict[str, Any]:
        box: list[float] = []
        worker = threading.Thread(target=lambda: box.append(float(np.arange(10).sum())))
        worker.start()
        worker.join()
        matrix = np.array([[2.0, 1.0], [1.0, 3.0]])
        frame = pd.DataFrame({"k": ["a", "b", "a"], "v": [1, 2, 3]})
        frame.to_csv(wd / "frame.csv", index=False)
        return {
            "thread": box,
            "det": round(float(np.linalg.det(matrix)), 6),
            "groupby": frame.groupby("k")["v"].sum().to_dict(),
            "reread": pd.read_csv(wd / "frame.csv").shape,
        }

    outcome = outcome_of(workdir, attack)
    assert outcome == {"thread": [45.0], "det": 5.0, "groupby": {"a": 4, "b": 2}, "reread": [3, 2]}


def test_worker_holds_no_capability_and_cannot_change_identity(workdir: Path) -> None:
    def attack(_: Path) -> dict[str, Any]:
        status = dict(
            line.split(":\t", 1) for line in Path("/proc/self/status").read_text().splitlines()
        )
        return {
            "caps": [int(status[key].strip(), 16) for key in ("CapEff", "CapPrm", "CapInh")],
            "setuid": attempt(lambda: os.setuid(0)),
            "chown": attempt(lambda: os.chown("/tmp", 0, 0)),
        }

    outcome = outcome_of(workdir, attack)
    assert outcome["caps"] == [0, 0, 0]  # even as root: every capability is gone
    assert outcome["setuid"] == "PermissionError:EPERM"
    assert outcome["chown"] == "PermissionError:EPERM"


# ---- each layer holds on its own (defence in depth) -------------------------------------------


def test_landlock_alone_denies_files_tcp_and_signals(workdir: Path) -> None:
    abi = landlock.abi_version()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    ppid = os.getpid()

    def setup(wd: Path) -> list[str]:
        return list(landlock.restrict_self(default_readonly_paths(), [wd]).read_write)

    def attack(wd: Path) -> dict[str, str]:
        return {
            "passwd": attempt(_read("/etc/passwd")),
            "inside": attempt(lambda: (wd / "ok.txt").write_text("x")),
            "tcp": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2)),
            "signal": attempt(lambda: os.kill(ppid, 0)),
        }

    try:
        report, _, _ = run_child(workdir, attack, setup=setup)
    finally:
        listener.close()
    outcome = report["outcome"]
    assert report["setup"] == [str(workdir)]
    assert outcome["passwd"].startswith("PermissionError")
    assert outcome["inside"].startswith("ok")
    if abi >= 4:
        assert outcome["tcp"].startswith("PermissionError")
    if abi >= 6:
        assert outcome["signal"] == "PermissionError:EPERM"


def _raw_syscall(number: int, *args: int) -> int:
    LIBC.syscall.restype = ctypes.c_long
    result = int(LIBC.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args)))
    if result < 0:
        raise OSError(ctypes.get_errno(), f"syscall {number}")
    return result


def test_seccomp_alone_denies_processes_but_keeps_threads(workdir: Path) -> None:
    table = seccomp.table_for_machine()

    def setup(_: Path) -> int:
        program = seccomp.build_filter(table, own_pid=os.getpid())
        seccomp.install_filter(program, table)
        return len(program)

    def attack(_: Path) -> dict[str, Any]:
        box: list[int] = []
        thread = threading.Thread(target=lambda: box.append(1))
        thread.start()
        thread.join()
        nr = table.numbers
        return {
            "socket": attempt(socket.socket),
            "fork": attempt(os.fork),
            "thread": box,
            "clone3": attempt(lambda: _raw_syscall(nr["clone3"], 0, 0)),
            "dumpable": attempt(lambda: _raw_syscall(nr["prctl"], 4, 1, 0, 0, 0)),
            # x32 ABI: getpid (39) with the x32 bit must not slip past the x86_64 numbers.
            "x32": attempt(lambda: _raw_syscall(seccomp.X32_SYSCALL_BIT | 39))
            if table.has_x32
            else "n/a",
        }

    report, _, _ = run_child(workdir, attack, setup=setup)
    outcome = report["outcome"]
    assert outcome["socket"] == outcome["fork"] == outcome["dumpable"] == "PermissionError:EPERM"
    assert outcome["thread"] == [1]
    assert outcome["clone3"] == "OSError:ENOSYS"  # so glibc falls back to clone for threads
    assert outcome["x32"] in ("PermissionError:EPERM", "n/a")


def test_seccomp_filter_covers_both_architectures() -> None:
    for table in (seccomp.X86_64, seccomp.AARCH64):
        program = seccomp.build_filter(table, own_pid=1234, allow_group_kill=True)
        assert program[0] == (seccomp.BPF_LD_W_ABS, 0, 0, seccomp.OFFSET_ARCH)
        assert program[1][3] == table.audit_arch
        # The last instruction is where a foreign architecture lands: the process is killed.
        assert program[-1] == (seccomp.BPF_RET_K, 0, 0, seccomp.SECCOMP_RET_KILL_PROCESS)
        denied = {ins[3] for ins in program if ins[0] == seccomp.BPF_JEQ_K}
        assert {table.numbers[n] for n in ("execve", "socket", "ptrace", "linkat")} <= denied


@pytest.mark.skipif(not NETNS_EXPECTED, reason="no network namespace for this user here")
def test_netns_alone_makes_loopback_unreachable(workdir: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    flags = CLONE_NEWNET if IS_ROOT else CLONE_NEWUSER | CLONE_NEWNET

    def setup(_: Path) -> int:
        return int(LIBC.unshare(ctypes.c_int(flags)))

    def attack(_: Path) -> str:
        return attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2))

    try:
        report, _, _ = run_child(workdir, attack, setup=setup)
        assert report["setup"] == 0
        assert report["outcome"] == "OSError:ENETUNREACH"
        assert select.select([listener], [], [], 0.2)[0] == []
    finally:
        listener.close()


# ---- the pure helpers -------------------------------------------------------------------------


def test_default_readonly_paths_leave_out_secrets_and_scratch() -> None:
    paths = {str(p) for p in default_readonly_paths()}
    for forbidden in ("/", "/etc", "/proc", "/tmp", "/root", "/home", os.getcwd()):
        assert forbidden not in paths
    assert "/etc/localtime" in paths or not Path("/etc/localtime").exists()
    assert str(Path(np.__file__).parent.parent) in paths or str(Path(np.__file__).parent) in paths


def test_sandbox_env_is_minimal(tmp_path: Path) -> None:
    env = sandbox_env(tmp_path)
    assert env["PATH"] == "/usr/bin:/bin"
    assert env["HOME"] == str(tmp_path / ".sandbox" / "home")
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"
    assert not any("KEY" in name or "TOKEN" in name for name in env)
