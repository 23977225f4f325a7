"""Landlock: confine the calling process's file system and TCP access (ctypes, no dependencies).

Landlock is an unprivileged Linux security module (kernel 5.13+). A process builds a *ruleset*
that names the access rights it wants to restrict ("handled" rights), adds rules granting some of
those rights beneath given directories or on given files, and then restricts itself; every right
that is handled but not granted by a rule is denied from then on, for the process and all its
future threads and children, and can never be lifted.

What this module handles, by ABI version (queried with ``LANDLOCK_CREATE_RULESET_VERSION``):

* ABI 1: every file system right (execute, read/write files, read dirs, create/remove entries);
* ABI 2: ``REFER`` (linking/renaming across directories), ABI 3: ``TRUNCATE``,
  ABI 5: ``IOCTL_DEV`` (ioctl on device files);
* ABI 4: TCP ``bind`` and ``connect``; no rule grants a port, so no TCP at all;
* ABI 6: scoping: abstract unix sockets and signals to processes outside the domain (the
  supervisor, the server) are denied.

Limits: Landlock checks *opening* a path, not ``stat``/``readlink`` (a sandboxed process can still
learn that a path exists). File descriptors opened before ``restrict_self`` keep their access, so
the caller must close inherited descriptors it does not want to hand over. Only the calling thread
is restricted: call this in a single-threaded process. Unix sockets by path and UDP are not
covered; the seccomp layer and the network namespace handle those.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import site
import stat
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from keiri_agent.sandbox.layers import LayerUnavailableError
from keiri_agent.sandbox.libc import LIBC, check, last_error, prctl

__all__ = [
    "ACCESS_FS_READ_ONLY",
    "LandlockResult",
    "abi_version",
    "default_readonly_paths",
    "handled_fs_access",
    "handled_net_access",
    "restrict_self",
    "scoped_access",
]

# Syscall numbers: the same on x86_64 and aarch64 (and every architecture since 5.13).
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
SUPPORTED_MACHINES = frozenset({"x86_64", "amd64", "aarch64", "arm64"})

LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1

# File system rights (include/uapi/linux/landlock.h).
ACCESS_FS_EXECUTE = 1 << 0
ACCESS_FS_WRITE_FILE = 1 << 1
ACCESS_FS_READ_FILE = 1 << 2
ACCESS_FS_READ_DIR = 1 << 3
ACCESS_FS_REMOVE_DIR = 1 << 4
ACCESS_FS_REMOVE_FILE = 1 << 5
ACCESS_FS_MAKE_CHAR = 1 << 6
ACCESS_FS_MAKE_DIR = 1 << 7
ACCESS_FS_MAKE_REG = 1 << 8
ACCESS_FS_MAKE_SOCK = 1 << 9
ACCESS_FS_MAKE_FIFO = 1 << 10
ACCESS_FS_MAKE_BLOCK = 1 << 11
ACCESS_FS_MAKE_SYM = 1 << 12
ACCESS_FS_REFER = 1 << 13  # ABI 2
ACCESS_FS_TRUNCATE = 1 << 14  # ABI 3
ACCESS_FS_IOCTL_DEV = 1 << 15  # ABI 5

ACCESS_FS_ABI_1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM

# Network rights (ABI 4).
ACCESS_NET_BIND_TCP = 1 << 0
ACCESS_NET_CONNECT_TCP = 1 << 1

# Scopes (ABI 6).
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

# The only rights a rule on a non-directory may carry; anything else makes the kernel reject it.
ACCESS_FS_FILE_RIGHTS = (
    ACCESS_FS_EXECUTE
    | ACCESS_FS_WRITE_FILE
    | ACCESS_FS_READ_FILE
    | ACCESS_FS_TRUNCATE
    | ACCESS_FS_IOCTL_DEV
)
# Read-only paths: reading files and listing directories. EXECUTE only gates execve, which the
# seccomp layer denies anyway; it is granted so the rule set means "as a program would read it".
ACCESS_FS_READ_ONLY = ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR | ACCESS_FS_EXECUTE
# Discarding output into /dev/null is harmless and libraries expect to open it for writing.
WRITABLE_DEVICES = frozenset({Path("/dev/null")})

PR_SET_NO_NEW_PRIVS = 38

# Read-only for sandboxed code besides the interpreter: shared libraries, time zones, fonts, MIME
# types (mimetypes.init opens /etc/mime.types when it exists: openpyxl, so pd.read_excel), the
# random and null devices, the process's own /proc entry (resolved when the rule is added, so in
# the worker it is the worker's) and CPU topology. Never /etc, /proc, /tmp or home directories.
SYSTEM_READONLY_PATHS = (
    "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/usr/share/fonts",
    "/etc/localtime", "/etc/fonts", "/etc/ld.so.cache", "/etc/mime.types", "/dev/null",
    "/dev/zero", "/dev/urandom", "/proc/self", "/sys/devices/system/cpu",
)  # fmt: skip
# Packages the warm server imports; their directories are readable even outside site-packages.
PRELOADED_PACKAGES = (
    "pandas", "numpy", "matplotlib", "seaborn", "sklearn", "scipy", "pyarrow",
    "matplotlib_fontja", "PIL", "joblib",
)  # fmt: skip


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the uapi header
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


@dataclass(frozen=True)
class LandlockResult:
    """What ``restrict_self`` enforced."""

    abi: int
    handled_fs: int
    handled_net: int
    scoped: int
    read_only: tuple[str, ...]  # paths that got a read-only rule
    read_write: tuple[str, ...]  # paths that got a read-write rule
    skipped: tuple[str, ...]  # paths that do not exist or cannot be reached (no rule, no access)


def _package_dirs() -> Iterator[Path]:
    for name in PRELOADED_PACKAGES:
        module = sys.modules.get(name)
        for entry in getattr(module, "__path__", None) or ():
            yield Path(entry)


def default_readonly_paths() -> tuple[Path, ...]:
    """Interpreter prefixes, site-packages, loaded package dirs and SYSTEM_READONLY_PATHS.

    Never ``sys.path`` entries outside the prefixes (a repository root next to its ``.env``),
    nor the current directory. Only paths that exist are returned.
    """
    candidates = [
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        Path(sys.base_exec_prefix),
        *(Path(p) for p in site.getsitepackages()),
        *_package_dirs(),
        *(Path(p) for p in SYSTEM_READONLY_PATHS),
    ]
    return tuple(dict.fromkeys(p for p in candidates if p.exists()))


def _syscall(number: int, *args: ctypes.c_uint64 | ctypes.c_void_p | int) -> int:
    converted = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    ctypes.set_errno(0)
    return int(LIBC.syscall(ctypes.c_long(number), *converted))


def abi_version() -> int:
    """The Landlock ABI version of the running kernel; raises LayerUnavailableError."""
    machine = platform.machine().lower()
    if machine not in SUPPORTED_MACHINES:
        raise LayerUnavailableError(f"未対応のアーキテクチャです（{machine}）")
    version = _syscall(
        SYS_LANDLOCK_CREATE_RULESET, ctypes.c_void_p(None), 0, LANDLOCK_CREATE_RULESET_VERSION
    )
    if version >= 1:
        return version
    err = ctypes.get_errno()
    if err == errno.ENOSYS:
        raise LayerUnavailableError("カーネルが Landlock に未対応です（5.13 以降が必要）")
    if err == errno.EOPNOTSUPP:
        raise LayerUnavailableError(
            "Landlock がカーネルで無効です（起動オプション lsm= に landlock がありません）"
        )
    if err == errno.EPERM:
        raise LayerUnavailableError("Landlock の呼び出しが禁止されています（コンテナの seccomp）")
    raise last_error("landlock_create_ruleset(VERSION)")


def handled_fs_access(abi: int) -> int:
    """Every file system right the given ABI knows."""
    rights = ACCESS_FS_ABI_1
    if abi >= 2:
        rights |= ACCESS_FS_REFER
    if abi >= 3:
        rights |= ACCESS_FS_TRUNCATE
    if abi >= 5:
        rights |= ACCESS_FS_IOCTL_DEV
    return rights


def handled_net_access(abi: int) -> int:
    """TCP bind and connect from ABI 4 on (no port rule: all TCP is denied)."""
    return ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP if abi >= 4 else 0


def scoped_access(abi: int) -> int:
    """Abstract unix sockets and signals leaving the domain, from ABI 6 on."""
    return SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0


def _add_path_rule(ruleset_fd: int, path: Path, access: int) -> bool:
    """Grant ``access`` beneath ``path``; False when the path does not exist or is unreachable."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return False
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= ACCESS_FS_FILE_RIGHTS
        attr = _PathBeneathAttr(allowed_access=access, parent_fd=fd)
        result = _syscall(
            SYS_LANDLOCK_ADD_RULE,
            ruleset_fd,
            LANDLOCK_RULE_PATH_BENEATH,
            ctypes.c_void_p(ctypes.addressof(attr)),
            0,
        )
        check(result, f"landlock_add_rule({path})")
    finally:
        os.close(fd)
    return True


def restrict_self(
    read_only: Iterable[Path], read_write: Iterable[Path], *, abi: int | None = None
) -> LandlockResult:
    """Restrict the calling thread (and its future children) to the given paths.

    ``read_only`` paths may be read (files) and listed (directories); ``read_write`` paths get
    every handled right. Paths that do not exist are skipped and listed in the result. Sets
    ``PR_SET_NO_NEW_PRIVS``, which ``landlock_restrict_self`` requires. Raises
    LayerUnavailableError when Landlock is missing, OSError when a call fails.
    """
    if abi is None:
        abi = abi_version()
    fs, net, scoped = handled_fs_access(abi), handled_net_access(abi), scoped_access(abi)
    ruleset = _RulesetAttr(handled_access_fs=fs, handled_access_net=net, scoped=scoped)
    ruleset_fd = _syscall(
        SYS_LANDLOCK_CREATE_RULESET,
        ctypes.c_void_p(ctypes.addressof(ruleset)),
        ctypes.sizeof(ruleset),
        0,
    )
    if ruleset_fd < 0:
        raise last_error("landlock_create_ruleset")
    granted_ro: list[str] = []
    granted_rw: list[str] = []
    skipped: list[str] = []
    try:
        for path in read_only:
            access = ACCESS_FS_READ_ONLY
            if path in WRITABLE_DEVICES:
                access |= ACCESS_FS_WRITE_FILE
            added = _add_path_rule(ruleset_fd, path, access & fs)
            (granted_ro if added else skipped).append(str(path))
        for path in read_write:
            added = _add_path_rule(ruleset_fd, path, fs)
            (granted_rw if added else skipped).append(str(path))
        check(prctl(PR_SET_NO_NEW_PRIVS, 1), "prctl(PR_SET_NO_NEW_PRIVS)")
        check(_syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset_fd, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset_fd)
    return LandlockResult(
        abi=abi,
        handled_fs=fs,
        handled_net=net,
        scoped=scoped,
        read_only=tuple(granted_ro),
        read_write=tuple(granted_rw),
        skipped=tuple(skipped),
    )
