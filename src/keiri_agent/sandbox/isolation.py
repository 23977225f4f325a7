"""Worker-side isolation: the layers a worker applies to itself right before user code runs.

The worker runs inside the jail (``jail``: user, mount, PID, IPC, UTS, network and cgroup
namespaces, read-only binds) and its action's own namespaces and overlay (``actionfs``). There,
a fork of the warm server, single-threaded, libraries loaded, it calls ``apply_isolation``. Five
layers are applied in this order and each is reported as a ``LayerStatus``; a layer the system
lacks is reported inactive with the reason, a layer that is available but fails raises
``IsolationError`` (never a silent skip):

1. ``rlimits``: CPU seconds (SIGXCPU at the soft limit, the kernel's SIGKILL 3 s later), address
   space (the warm interpreter's size + the profile's memory), file size (SIGXFSZ ignored, so
   an oversized write raises ``OSError(EFBIG)``), open files, no core dumps, and a task cap
   that counts the jail's user namespace only (the action's pids cgroup is the exact bound).
2. ``env``: the environment is replaced by ``sandbox_env`` (no API key survives) and the
   process's initial environment block, which ``/proc/self/environ`` shows, is zeroed. The
   working directory becomes the workdir. Limit: secrets in the *memory* of the warm server are
   inherited by the fork; the warm server must never hold any.
3. ``landlock``: read-only access to the interpreter, its site-packages and a few system paths
   (``default_readonly_paths``), read-write to the workdir, nothing else; no TCP, no signals or
   abstract sockets leaving the domain (see ``landlock.py``).
4. ``caps``: every capability dropped (effective, permitted, inheritable and ambient: the
   ``CAP_SYS_ADMIN`` the jail kept for building mounts is gone) and
   ``PR_SET_DUMPABLE=0``, so nothing can trace or read the worker.
5. ``seccomp``: deny exec, process creation, sockets, tracing, signals to others, raising limits,
   namespaces, mounts, memfd, System V IPC, inotify and more (see ``seccomp.py``).

``keiri_agent.sandbox.probe`` reports what this machine supports.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import resource
import signal
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from keiri_agent.errors import cause_of, reason_of
from keiri_agent.rlimits import lower_limit
from keiri_agent.sandbox import landlock, seccomp
from keiri_agent.sandbox.landlock import default_readonly_paths
from keiri_agent.sandbox.layers import (
    LAYER_NAMES,
    IsolationError,
    LayerStatus,
    LayerUnavailableError,
)
from keiri_agent.sandbox.libc import LIBC, check, prctl
from keiri_agent.sandbox.profiles import SandboxProfile

__all__ = [
    "LAYER_NAMES",
    "IsolationConfig",
    "IsolationError",
    "LayerStatus",
    "apply_isolation",
    "default_readonly_paths",
    "prepare_isolation",
    "sandbox_env",
    "set_not_dumpable",
]

SANDBOX_DIRNAME = ".sandbox"  # under the workdir: home, tmp and matplotlib config
SANDBOX_PATH = "/usr/bin:/bin"
THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
CPU_KILL_GRACE_SECONDS = 3  # hard RLIMIT_CPU = soft + this: SIGXCPU first, SIGKILL after
NOFILE_HEADROOM = 16
# RLIMIT_NPROC counts the uid's tasks in the jail's user namespace: the jail's own processes
# (bwrap, the server, the supervisor, the action's init) plus the action's tasks.
JAIL_TASKS = 8
MiB = 1024 * 1024

PR_SET_DUMPABLE = 4
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
# /proc/<pid>/stat fields 50 and 51 (env_start, env_end), counted from field 3 after "comm)".
STAT_ENV_START_INDEX = 47


@dataclass(frozen=True)
class IsolationConfig:
    """What one worker is confined to; see the module docstring for the layers."""

    workdir: Path  # the only read-write place
    profile: SandboxProfile
    readonly_paths: tuple[Path, ...] = ()  # on top of default_readonly_paths()
    base_address_space: int | None = None  # VmSize of the warm interpreter; measured if None


@dataclass(frozen=True)
class _Worker:
    config: IsolationConfig
    workdir: Path


def sandbox_env(workdir: Path) -> dict[str, str]:
    """The complete environment of the worker: nothing from the parent survives."""
    base = workdir / SANDBOX_DIRNAME
    return {
        "PATH": SANDBOX_PATH,
        "HOME": str(base / "home"),
        "TMPDIR": str(base / "tmp"),
        "MPLCONFIGDIR": str(base / "mpl"),
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        **dict.fromkeys(THREAD_ENV_VARS, "1"),
    }


def _proc_status(field: str) -> str:
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key == field:
            return value.strip()
    raise OSError(errno.ENOENT, f"/proc/self/status has no {field}")


# ---- layer 1: resource limits -----------------------------------------------------------------


def _layer_rlimits(w: _Worker) -> LayerStatus:
    profile = w.config.profile
    cpu = lower_limit(
        resource.RLIMIT_CPU, profile.cpu_seconds, profile.cpu_seconds + CPU_KILL_GRACE_SECONDS
    )
    base = w.config.base_address_space
    if base is None:
        base = int(_proc_status("VmSize").split()[0]) * 1024
    address_space = lower_limit(resource.RLIMIT_AS, base + profile.memory_bytes)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead
    fsize = lower_limit(resource.RLIMIT_FSIZE, profile.fsize_bytes)
    fds = [int(name) for name in os.listdir("/proc/self/fd")]
    floor = max(len(fds), max(fds, default=0) + 1) + NOFILE_HEADROOM
    nofile = lower_limit(resource.RLIMIT_NOFILE, max(profile.nofile, floor))
    lower_limit(resource.RLIMIT_CORE, 0)
    nproc = lower_limit(resource.RLIMIT_NPROC, profile.max_tasks + JAIL_TASKS)
    return LayerStatus(
        "rlimits",
        True,
        f"CPU {cpu} 秒（{cpu + CPU_KILL_GRACE_SECONDS} 秒で強制終了）、"
        f"メモリ {profile.memory_bytes // MiB} MiB（アドレス空間 {address_space // MiB} MiB）、"
        f"ファイルサイズ {fsize // MiB} MiB、ファイル記述子 {nofile}、"
        f"タスク数 {nproc}（ジェイルのユーザー名前空間内）、コアダンプなし",
    )


# ---- layer 2: environment ---------------------------------------------------------------------


def _scrub_initial_environ() -> None:
    """Zero the exec-time environment block that /proc/self/environ reads."""
    text = Path("/proc/self/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    start, end = int(fields[STAT_ENV_START_INDEX]), int(fields[STAT_ENV_START_INDEX + 1])
    if start and end > start:
        ctypes.memset(start, 0, end - start)
    if Path("/proc/self/environ").read_bytes().strip(b"\0"):
        raise OSError(errno.EIO, "/proc/self/environ still has content")


def _layer_env(w: _Worker) -> LayerStatus:
    env = sandbox_env(w.workdir)
    base = w.workdir / SANDBOX_DIRNAME
    for path in (base, Path(env["HOME"]), Path(env["TMPDIR"]), Path(env["MPLCONFIGDIR"])):
        path.mkdir(mode=0o700, exist_ok=True)
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise OSError(errno.ENOTDIR, f"{path} is not a plain directory")
    check(int(LIBC.clearenv()), "clearenv")  # also what C code set behind os.environ
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = env["TMPDIR"]
    _scrub_initial_environ()
    os.chdir(w.workdir)
    return LayerStatus(
        "env", True, f"環境変数を {len(env)} 個に置き換え（API キーなどは引き継がない）"
    )


# ---- layer 3: Landlock ------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _readonly_paths() -> tuple[Path, ...]:
    return default_readonly_paths()


@functools.lru_cache(maxsize=4)
def _seccomp_program(own_pid: int, allow_group_kill: bool) -> tuple[seccomp.Instruction, ...]:
    table = seccomp.table_for_machine()
    return tuple(seccomp.build_filter(table, own_pid=own_pid, allow_group_kill=allow_group_kill))


def prepare_isolation(worker_pid: int) -> None:
    """In the warm server: work every worker would redo (the read-only paths, the seccomp
    program of a worker that will be ``worker_pid`` and lead its own process group), done once
    and inherited by each fork."""
    _readonly_paths()
    with contextlib.suppress(LayerUnavailableError):
        _seccomp_program(worker_pid, True)


def _layer_landlock(w: _Worker) -> LayerStatus:
    try:
        abi = landlock.abi_version()
    except LayerUnavailableError as exc:
        return LayerStatus("landlock", False, exc.reason)
    readonly = (*_readonly_paths(), *w.config.readonly_paths)
    result = landlock.restrict_self(readonly, [w.workdir], abi=abi)
    if not result.read_write:
        raise OSError(errno.ENOENT, f"workdir {w.workdir} could not be granted")
    extra = "、TCP 禁止" if result.handled_net else ""
    extra += "、外部へのシグナル・抽象ソケット禁止" if result.scoped else ""
    ro = len(result.read_only)
    return LayerStatus(
        "landlock",
        True,
        f"Landlock ABI {abi}（読み取り専用 {ro} 件、読み書きは作業ディレクトリのみ{extra}）",
    )


# ---- layer 4: capabilities -------------------------------------------------------------------


def set_not_dumpable() -> None:
    check(prctl(PR_SET_DUMPABLE), "prctl(PR_SET_DUMPABLE)")


def _layer_caps(w: _Worker) -> LayerStatus:
    del w
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)  # EINVAL on kernels without ambient caps
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)  # {version, pid=self}
    no_caps = (ctypes.c_uint32 * 6)()  # 2 x {effective, permitted, inheritable}
    check(int(LIBC.capset(header, no_caps)), "capset")
    set_not_dumpable()
    held = {key: _proc_status(key) for key in ("CapEff", "CapPrm", "CapInh", "CapAmb")}
    if any(int(value, 16) for value in held.values()):
        raise OSError(errno.EPERM, f"capabilities remain: {held}")
    # The bounding set only matters at execve, which seccomp denies (and no_new_privs is set):
    # dropping it would need CAP_SETPCAP, which the jail does not hand out.
    return LayerStatus(
        "caps", True, "すべてのケーパビリティを破棄（実効・許可・継承・アンビエント）、ダンプ不可"
    )


# ---- layer 5: seccomp -------------------------------------------------------------------------


def _layer_seccomp(w: _Worker) -> LayerStatus:
    try:
        table = seccomp.table_for_machine()
        seccomp.check_available(table)
    except LayerUnavailableError as exc:
        return LayerStatus("seccomp", False, exc.reason)
    pid = os.getpid()
    program = list(_seccomp_program(pid, os.getpgrp() == pid))
    seccomp.install_filter(program, table)
    return LayerStatus(
        "seccomp",
        True,
        f"seccomp BPF {len(program)} 命令（exec・プロセス生成・ソケット・ptrace などを拒否）",
    )


_LAYERS: tuple[Callable[[_Worker], LayerStatus], ...] = (
    _layer_rlimits,
    _layer_env,
    _layer_landlock,
    _layer_caps,
    _layer_seccomp,
)


def _preflight(config: IsolationConfig) -> _Worker:
    try:
        workdir = config.workdir.resolve(strict=True)
    except OSError as exc:
        raise IsolationError(
            "preflight", f"作業ディレクトリがありません: {config.workdir}"
        ) from exc
    if not workdir.is_dir():
        raise IsolationError("preflight", f"作業ディレクトリではありません: {workdir}")
    threads = int(_proc_status("Threads"))
    if threads != 1:  # Landlock restricts the calling thread only
        raise IsolationError(
            "preflight",
            f"ワーカーに {threads} 個のスレッドがあります（隔離は単一スレッドで行う必要があります）",
        )
    return _Worker(config=config, workdir=workdir)


def apply_isolation(config: IsolationConfig) -> list[LayerStatus]:
    """Confine the calling worker process; returns every layer's status, in LAYER_NAMES order.

    Irreversible: call it in the forked worker only, right before running user code. Raises
    IsolationError when a layer that is available fails; the worker must then exit.
    """
    worker = _preflight(config)
    statuses: list[LayerStatus] = []
    for name, layer in zip(LAYER_NAMES, _LAYERS, strict=True):
        try:
            statuses.append(layer(worker))
        except Exception as exc:
            code = exc.errno if isinstance(exc, OSError) else None
            reason = errno.errorcode.get(code or 0, type(exc).__name__)
            raise IsolationError(
                name,
                f"{reason_of(exc)}（{reason}）",
                statuses=tuple(statuses),
                details={"errno": code, "cause": cause_of(exc)},
            ) from exc
    return statuses
