"""seccomp: a hand-written classic BPF filter that denies the syscalls sandboxed code never needs.

The filter runs on every syscall of the process (all threads, ``SECCOMP_FILTER_FLAG_TSYNC``) and
can never be removed. It

* kills the process outright when the syscall comes from a foreign ABI (i386 through
  ``int 0x80`` on x86_64, anything not matching ``seccomp_data.arch``), and denies x32 syscall
  numbers (``>= 0x40000000``) on x86_64, so no second syscall table can bypass the checks;
* fails with ``EPERM``: program execution (``execve``, ``execveat``), process creation (``fork``,
  ``vfork``, ``clone`` without ``CLONE_THREAD`` or with a namespace flag), sockets of any family
  (``socket``, ``socketpair``), tracing and reading other processes (``ptrace``,
  ``process_vm_*``, ``kcmp``, ``pidfd_*``), signals to anything but the process itself,
  raising limits (``setrlimit``, ``prlimit64`` with a new limit), namespaces, mounts, ``chroot``,
  keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring``, hard links and device
  nodes, kernel modules, reboot, swap, accounting, I/O ports, ``memfd_create``, System V IPC and
  POSIX message queues, ``inotify``/``fanotify``, identity changes (``set*uid``,
  ``set*gid``, ``setgroups``), ``prctl`` options that would undo the uid layer
  (``PR_SET_DUMPABLE``, ``PR_SET_MM``, ``PR_SET_PTRACER``), and metadata changes by path
  (``chmod``, ``chown``, ``*setxattr``/``*removexattr``), which Landlock does not check (so
  they fail inside the workdir too: ``os.chmod``, ``shutil.copymode``);
* fails ``clone3`` with ``ENOSYS``: its flags live in memory a filter cannot read, and glibc then
  falls back to ``clone`` for threads, which the filter can check;
* allows everything else (an allowlist would break numpy, pandas and matplotlib on every update).

Limits: seccomp sees syscall numbers and register arguments, never memory behind pointers, so it
cannot tell paths apart (Landlock does that). Argument checks compare the 32-bit halves of the
64-bit registers; pids and ``prctl`` options are 32-bit ``int`` in the kernel.
"""

from __future__ import annotations

import ctypes
import errno
import platform
from collections.abc import Mapping
from dataclasses import dataclass

from keiri_agent.sandbox.layers import LayerUnavailableError
from keiri_agent.sandbox.libc import LIBC, check, last_error, prctl

__all__ = [
    "AARCH64",
    "X86_64",
    "SyscallTable",
    "build_filter",
    "check_available",
    "install_filter",
    "table_for_machine",
]

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000

SECCOMP_SET_MODE_FILTER = 1
SECCOMP_GET_ACTION_AVAIL = 2
SECCOMP_FILTER_FLAG_TSYNC = 1
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
PR_GET_SECCOMP = 21
PR_SET_NO_NEW_PRIVS = 38

# Classic BPF opcodes (linux/filter.h).
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
BPF_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K
BPF_MAX_JUMP = 255

# struct seccomp_data offsets: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARGS = 16

CLONE_THREAD = 0x00010000
# CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
# | CLONE_NEWNET: a thread never needs a new namespace.
CLONE_NAMESPACE_FLAGS = 0x7E020000
PR_SET_DUMPABLE = 4
PR_SET_MM = 35
PR_SET_PTRACER = 0x59616D61
DENIED_PRCTL_OPTIONS = (PR_SET_DUMPABLE, PR_SET_MM, PR_SET_PTRACER)

# Denied outright with EPERM; names missing from an architecture's table are skipped there.
DENIED_SYSCALLS: tuple[str, ...] = (
    "execve", "execveat", "fork", "vfork",
    "socket", "socketpair",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "pidfd_open", "pidfd_getfd", "pidfd_send_signal", "tkill",
    "setrlimit",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "name_to_handle_at", "open_by_handle_at", "quotactl",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "link", "linkat", "mknod", "mknodat", "uselib",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "iopl", "ioperm", "syslog",
    "settimeofday", "clock_settime", "adjtimex", "clock_adjtime", "sethostname", "setdomainname",
    "migrate_pages", "move_pages", "process_madvise",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
    "setfsuid", "setfsgid",
    # Metadata changes by path: Landlock does not check them, so outside the workdir they would
    # reach every file the uid owns. The fd-based variants (fchmod, fchown, fsetxattr) need an
    # open file, which Landlock does check, and stay allowed. Timestamps (utime*) stay allowed:
    # xlsxwriter, and so DataFrame.to_excel, sets them on its temporary files.
    "chmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchownat",
    "setxattr", "lsetxattr", "removexattr", "lremovexattr", "setxattrat", "removexattrat",
    # Kernel objects that could outlive the action or escape its limits: anonymous files
    # (memfd), System V IPC and POSIX message queues, and watches that report what happens
    # to files outside the workdir (inotify, fanotify). No library the sandbox offers uses them.
    "memfd_create", "memfd_secret",
    "shmget", "shmat", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl", "mq_open",
    "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",
)  # fmt: skip
# Allowed only when arg0 (a pid) is the process itself.
OWN_PID_SYSCALLS: tuple[str, ...] = ("tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")

_COMMON_NUMBERS = {
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_open": 434, "clone3": 435,
    "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "fchmodat2": 452,
    "setxattrat": 463, "removexattrat": 466, "memfd_secret": 447,
}  # fmt: skip
_X86_64_NUMBERS = {
    "socket": 41, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "execve": 59,
    "kill": 62, "link": 86, "ptrace": 101, "syslog": 103, "setuid": 105, "setgid": 106,
    "setreuid": 113, "setregid": 114, "setgroups": 116, "setresuid": 117, "setresgid": 119,
    "setfsuid": 122, "setfsgid": 123, "rt_sigqueueinfo": 129, "mknod": 133, "uselib": 134,
    "pivot_root": 155, "prctl": 157, "adjtimex": 159, "setrlimit": 160, "chroot": 161,
    "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167,
    "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172,
    "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "tkill": 200,
    "clock_settime": 227, "tgkill": 234, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "migrate_pages": 256, "mknodat": 259, "linkat": 265,
    "unshare": 272, "move_pages": 279, "rt_tgsigqueueinfo": 297, "perf_event_open": 298,
    "prlimit64": 302, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311,
    "kcmp": 312, "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "execveat": 322,
    "userfaultfd": 323, "chmod": 90, "chown": 92, "lchown": 94, "fchownat": 260,
    "fchmodat": 268, "setxattr": 188, "lsetxattr": 189, "removexattr": 197,
    "lremovexattr": 198, "memfd_create": 319, "shmget": 29, "shmat": 30, "shmctl": 31,
    "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semget": 64, "semop": 65,
    "semctl": 66, "semtimedop": 220, "mq_open": 240, "inotify_init": 253,
    "inotify_add_watch": 254, "inotify_init1": 294, "fanotify_init": 300,
    "fanotify_mark": 301, **_COMMON_NUMBERS,
}  # fmt: skip
# aarch64 uses the generic table (asm-generic/unistd.h): no fork, vfork, link, mknod, iopl.
_AARCH64_NUMBERS = {
    "mknodat": 33, "linkat": 37, "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51,
    "quotactl": 60, "acct": 89, "unshare": 97, "kexec_load": 104, "init_module": 105,
    "delete_module": 106, "clock_settime": 112, "syslog": 116, "ptrace": 117, "kill": 129,
    "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "reboot": 142, "setregid": 143,
    "setgid": 144, "setreuid": 145, "setuid": 146, "setresuid": 147, "setresgid": 149,
    "setfsuid": 151, "setfsgid": 152, "setgroups": 159, "sethostname": 161,
    "setdomainname": 162, "setrlimit": 164, "prctl": 167, "settimeofday": 170,
    "adjtimex": 171, "socket": 198, "socketpair": 199, "add_key": 217, "request_key": 218,
    "keyctl": 219, "clone": 220, "execve": 221, "swapon": 224, "swapoff": 225,
    "migrate_pages": 238, "move_pages": 239, "rt_tgsigqueueinfo": 240,
    "perf_event_open": 241, "prlimit64": 261, "name_to_handle_at": 264,
    "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268, "process_vm_readv": 270,
    "process_vm_writev": 271, "kcmp": 272, "finit_module": 273, "bpf": 280, "execveat": 281,
    "userfaultfd": 282, "kexec_file_load": 294, "setxattr": 5, "lsetxattr": 6,
    "removexattr": 14, "lremovexattr": 15, "fchmodat": 53, "fchownat": 54,
    "memfd_create": 279, "shmget": 194, "shmctl": 195, "shmat": 196, "msgget": 186,
    "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190, "semctl": 191,
    "semtimedop": 192, "semop": 193, "mq_open": 180, "inotify_init1": 26,
    "inotify_add_watch": 27, "fanotify_init": 262, "fanotify_mark": 263, **_COMMON_NUMBERS,
}  # fmt: skip


@dataclass(frozen=True)
class SyscallTable:
    """Syscall numbers of one architecture, and the ``seccomp_data.arch`` value it reports."""

    name: str
    audit_arch: int
    numbers: Mapping[str, int]
    seccomp_nr: int  # the seccomp(2) syscall itself
    has_x32: bool


X86_64 = SyscallTable("x86_64", AUDIT_ARCH_X86_64, _X86_64_NUMBERS, 317, has_x32=True)
AARCH64 = SyscallTable("aarch64", AUDIT_ARCH_AARCH64, _AARCH64_NUMBERS, 277, has_x32=False)
_MACHINES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}

Instruction = tuple[int, int, int, int]  # (code, jt, jf, k) of struct sock_filter


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


class _Assembler:
    """Classic BPF with named jump targets; ``None`` as a target means the next instruction."""

    def __init__(self) -> None:
        self._code: list[tuple[int, str | None, str | None, int]] = []
        self._labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self._code.append((BPF_LD_W_ABS, None, None, offset))

    def jump(self, op: int, k: int, jt: str | None, jf: str | None) -> None:
        self._code.append((op, jt, jf, k))

    def ret(self, value: int) -> None:
        self._code.append((BPF_RET_K, None, None, value))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def assemble(self) -> list[Instruction]:
        out: list[Instruction] = []
        for index, (op, jt, jf, k) in enumerate(self._code):
            out.append((op, self._offset(index, jt), self._offset(index, jf), k))
        return out

    def _offset(self, index: int, target: str | None) -> int:
        if target is None:
            return 0
        offset = self._labels[target] - index - 1
        if not 0 <= offset <= BPF_MAX_JUMP:
            raise ValueError(f"BPF jump to {target!r} out of range: {offset}")
        return offset


def _arg_low(index: int) -> int:
    return OFFSET_ARGS + 8 * index  # little-endian: the low half comes first


def _arg_high(index: int) -> int:
    return OFFSET_ARGS + 8 * index + 4


def table_for_machine(machine: str | None = None) -> SyscallTable:
    """The syscall table of ``machine`` (default: this one); raises LayerUnavailableError."""
    name = (machine or platform.machine()).lower()
    if name not in _MACHINES:
        raise LayerUnavailableError(f"未対応のアーキテクチャです（{name}）")
    return _MACHINES[name]


def build_filter(
    table: SyscallTable, *, own_pid: int, allow_group_kill: bool = False
) -> list[Instruction]:
    """The filter program for a process whose pid is ``own_pid``.

    ``allow_group_kill`` also lets ``kill(0, sig)`` through: only safe when the process leads
    its own process group (then the group is the process itself).
    """
    nr = table.numbers
    asm = _Assembler()
    asm.load(OFFSET_ARCH)
    asm.jump(BPF_JEQ_K, table.audit_arch, None, "kill_process")
    asm.load(OFFSET_NR)
    if table.has_x32:
        asm.jump(BPF_JGE_K, X32_SYSCALL_BIT, "eperm", None)
    for name in DENIED_SYSCALLS:
        if name in nr:
            asm.jump(BPF_JEQ_K, nr[name], "eperm", None)
    asm.jump(BPF_JEQ_K, nr["clone3"], "enosys", None)
    asm.jump(BPF_JEQ_K, nr["clone"], "clone", None)
    asm.jump(BPF_JEQ_K, nr["kill"], "kill", None)
    for name in OWN_PID_SYSCALLS:
        asm.jump(BPF_JEQ_K, nr[name], "own_pid", None)
    asm.jump(BPF_JEQ_K, nr["prlimit64"], "prlimit", None)
    asm.jump(BPF_JEQ_K, nr["prctl"], "prctl", None)
    asm.ret(SECCOMP_RET_ALLOW)

    asm.label("clone")  # threads only: CLONE_THREAD set, no namespace flag
    asm.load(_arg_low(0))
    asm.jump(BPF_JSET_K, CLONE_THREAD, None, "eperm")
    asm.jump(BPF_JSET_K, CLONE_NAMESPACE_FLAGS, "eperm", "allow")

    asm.label("kill")  # kill(pid, sig): own pid, or 0 = own group when it leads one
    asm.load(_arg_high(0))
    asm.jump(BPF_JEQ_K, 0, None, "eperm")
    asm.load(_arg_low(0))
    if allow_group_kill:
        asm.jump(BPF_JEQ_K, 0, "allow", None)
    asm.jump(BPF_JEQ_K, own_pid, "allow", "eperm")

    asm.label("own_pid")  # tgkill / rt_sigqueueinfo / rt_tgsigqueueinfo(tgid, ...)
    asm.load(_arg_high(0))
    asm.jump(BPF_JEQ_K, 0, None, "eperm")
    asm.load(_arg_low(0))
    asm.jump(BPF_JEQ_K, own_pid, "allow", "eperm")

    asm.label("prlimit")  # prlimit64(pid, resource, new, old): reading only
    asm.load(_arg_low(2))
    asm.jump(BPF_JEQ_K, 0, None, "eperm")
    asm.load(_arg_high(2))
    asm.jump(BPF_JEQ_K, 0, "allow", "eperm")

    asm.label("prctl")  # prctl(option, ...): option is a 32-bit int
    asm.load(_arg_low(0))
    for option in DENIED_PRCTL_OPTIONS:
        asm.jump(BPF_JEQ_K, option, "eperm", None)

    asm.label("allow")
    asm.ret(SECCOMP_RET_ALLOW)
    asm.label("eperm")
    asm.ret(SECCOMP_RET_ERRNO | errno.EPERM)
    asm.label("enosys")
    asm.ret(SECCOMP_RET_ERRNO | errno.ENOSYS)
    asm.label("kill_process")
    asm.ret(SECCOMP_RET_KILL_PROCESS)
    return asm.assemble()


def _seccomp(table: SyscallTable, operation: int, flags: int, pointer: ctypes.c_void_p) -> int:
    ctypes.set_errno(0)
    return int(
        LIBC.syscall(
            ctypes.c_long(table.seccomp_nr),
            ctypes.c_ulong(operation),
            ctypes.c_ulong(flags),
            pointer,
        )
    )


def check_available(table: SyscallTable | None = None) -> None:
    """Raise LayerUnavailableError unless filters with ``KILL_PROCESS`` can be installed."""
    table = table or table_for_machine()
    if prctl(PR_GET_SECCOMP) < 0 and ctypes.get_errno() == errno.EINVAL:
        raise LayerUnavailableError("カーネルが seccomp に未対応です（CONFIG_SECCOMP）")
    action = ctypes.c_uint32(SECCOMP_RET_KILL_PROCESS)
    pointer = ctypes.c_void_p(ctypes.addressof(action))
    if _seccomp(table, SECCOMP_GET_ACTION_AVAIL, 0, pointer) == 0:
        return
    err = ctypes.get_errno()
    reasons = {
        errno.ENOSYS: "seccomp(2) がありません（カーネル 3.17 以降が必要）",
        errno.EINVAL: "seccomp フィルターがカーネルで無効です（CONFIG_SECCOMP_FILTER）",
        errno.EOPNOTSUPP: "SECCOMP_RET_KILL_PROCESS に未対応のカーネルです（4.14 以降が必要）",
        errno.EPERM: "seccomp の呼び出しが禁止されています（コンテナの seccomp）",
    }
    if err in reasons:
        raise LayerUnavailableError(reasons[err])
    raise last_error("seccomp(GET_ACTION_AVAIL)")


def install_filter(program: list[Instruction], table: SyscallTable | None = None) -> None:
    """Install ``program`` on every thread of the process; sets ``PR_SET_NO_NEW_PRIVS`` first."""
    table = table or table_for_machine()
    check(prctl(PR_SET_NO_NEW_PRIVS, 1), "prctl(PR_SET_NO_NEW_PRIVS)")
    filters = (_SockFilter * len(program))(*(_SockFilter(*ins) for ins in program))
    fprog = _SockFprog(len=len(program), filter=filters)
    pointer = ctypes.c_void_p(ctypes.addressof(fprog))
    result = _seccomp(table, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, pointer)
    if result > 0:  # TSYNC: the id of a thread that could not be synchronised
        raise OSError(errno.EBUSY, f"seccomp: thread {result} could not be synchronised")
    check(result, "seccomp(SET_MODE_FILTER)")
