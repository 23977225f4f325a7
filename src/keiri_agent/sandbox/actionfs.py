"""The namespaces and file system of one action: an overlay on the workdir over a sized tmpfs.

Each action has a supervisor, PID 1 of a PID namespace of its own, forked by the warm fork
server before the action's request arrives (``spare``). Ahead of the request it calls
``enter_action_namespaces``: a mount, IPC and UTS namespace of its own (nothing propagates to
the server) with that PID namespace's own ``/proc``. When the request comes it calls
``mount_action_fs``: it keeps a descriptor of the real workdir, mounts a tmpfs at
``jail.ACTION_MOUNT`` whose size and inode count are the profile's ``max_total_bytes`` and
``max_files`` and mounts an overlay at the workdir's path: the workdir is the read-only lower
layer, the tmpfs holds the upper layer. Every byte the action writes (``write``, ``fallocate``
with or without ``KEEP_SIZE``, ``posix_fallocate``, a copy-up of a file it opens for writing)
and every entry it makes (files, directories however deep) is charged to that tmpfs, so the
kernel refuses the first byte over the limit with ``ENOSPC``; pre-existing files are never
modified in place. Afterwards the supervisor copies the upper layer out (``copyout``).

``isolate_worker_fs`` runs in the worker (still trusted code, before its own isolation): it
takes a mount namespace of its own (a copy of the supervisor's, so with the overlay and the
action's ``/proc``) and detaches everything the action must not see (the jail's private
directory, its cgroups, the scratch mount), so the worker's view is the interpreter, the system
binds and the overlay, nothing else.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from pathlib import Path

from keiri_agent.sandbox.jail import ACTION_MOUNT, CGROUP_MOUNT, JAIL_DIR
from keiri_agent.sandbox.libc import LIBC, check

__all__ = [
    "CLONE_NEWIPC",
    "CLONE_NEWNS",
    "CLONE_NEWPID",
    "CLONE_NEWUTS",
    "INODE_HEADROOM",
    "ActionFs",
    "enter_action_namespaces",
    "isolate_worker_fs",
    "mount_action_fs",
    "setns",
    "unshare",
]

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
# The upper layer's root, its overlay work directory, .sandbox and its home/tmp/mpl: entries
# the action did not make itself, on top of max_files.
INODE_HEADROOM = 16
UPPER = "upper"
OVERLAY_WORK = "work"

LIBC.mount.argtypes = (
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
)
LIBC.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
LIBC.unshare.argtypes = (ctypes.c_int,)
LIBC.setns.argtypes = (ctypes.c_int, ctypes.c_int)


def unshare(flags: int) -> None:
    check(LIBC.unshare(flags), f"unshare({flags:#x})")


def setns(fd: int, flags: int) -> None:
    check(LIBC.setns(fd, flags), f"setns({flags:#x})")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    result = LIBC.mount(
        source.encode(),
        target.encode(),
        fstype.encode() if fstype else None,
        flags,
        data.encode() if data is not None else None,
    )
    check(result, f"mount {fstype or source} on {target}")


@dataclass(frozen=True)
class ActionFs:
    """What the supervisor keeps of the action's mounts."""

    workdir_fd: int  # the real workdir (beneath the overlay): where copy-out writes
    upper: Path  # the overlay's upper layer: everything the action wrote
    max_bytes: int
    max_entries: int


def _escape(path: str) -> str:
    # overlayfs splits its options on ',' and lowerdir on ':'; both are escaped with '\\'.
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def enter_action_namespaces() -> None:
    """Supervisor, PID 1 of the action's PID namespace, ahead of its request: own mount, IPC and
    UTS namespaces, nothing propagating back, and the action's own ``/proc``."""
    unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS)
    _mount("none", "/", None, MS_REC | MS_PRIVATE, None)  # nothing propagates to the server
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)


def mount_action_fs(workdir: Path, max_bytes: int, max_entries: int) -> ActionFs:
    """Supervisor, when the request comes: the sized tmpfs and the overlay on the workdir."""
    workdir_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    inodes = max_entries + INODE_HEADROOM
    _mount(
        "keiri-action",
        ACTION_MOUNT,
        "tmpfs",
        MS_NOSUID | MS_NODEV | MS_NOEXEC,
        f"size={max(max_bytes, 4096)},nr_inodes={inodes},mode=0700",
    )
    upper = Path(ACTION_MOUNT, UPPER)
    upper.mkdir()
    Path(ACTION_MOUNT, OVERLAY_WORK).mkdir()
    options = (
        f"lowerdir={_escape(str(workdir))},upperdir={_escape(str(upper))},"
        f"workdir={_escape(ACTION_MOUNT + '/' + OVERLAY_WORK)},userxattr"
    )
    _mount("keiri-overlay", str(workdir), "overlay", MS_NOSUID | MS_NODEV, options)
    return ActionFs(workdir_fd=workdir_fd, upper=upper, max_bytes=max_bytes, max_entries=inodes)


def isolate_worker_fs() -> None:
    """Worker, before its isolation: own mount namespace, nothing of the jail's plumbing."""
    unshare(CLONE_NEWNS)
    _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    for path in (JAIL_DIR, CGROUP_MOUNT, ACTION_MOUNT):
        if os.path.ismount(path) or os.path.isdir(path):
            for mount in _mounts_below(path):
                check(LIBC.umount2(mount.encode(), MNT_DETACH), f"umount {mount}")


def _mounts_below(path: str) -> list[str]:
    """Mount points at or below ``path``, deepest first."""
    found = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        target = line.split()[1].replace("\\040", " ")
        if target == path or target.startswith(path + "/"):
            found.append(target)
    return sorted(set(found), key=len, reverse=True)
