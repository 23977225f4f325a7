"""The jail: a bubblewrap sandbox that the warm fork server runs in, one per workdir.

``jail_command`` builds the ``bwrap`` command line: every namespace unshared (user, mount, PID,
IPC, UTS, network, cgroup), the jail dies with its parent and has its own session, and the only
things visible inside are

* read-only binds of what the interpreter needs: the real paths of ``sys.prefix``,
  ``sys.base_prefix``, ``sys.exec_prefix`` and every existing ``sys.path`` entry (an editable
  install's ``src``, user site-packages), ``/usr`` and ``/lib*``, and a few files under ``/etc``
  (``ld.so.cache``, fonts, local time, MIME types);
* a fresh ``/proc`` (the jail's own PID namespace), a minimal ``/dev`` (``null``, ``zero``,
  ``full``, ``random``, ``urandom``, ``tty``; no pseudo-terminals) and a size-limited ``/tmp``;
* the workdir, bound read-write at its own path (only the supervisor writes there: an action
  sees it through a per-action overlay, see ``actionfs``);
* the jail's private host directory at ``JAIL_DIR`` (requests' inputs, outcomes, the server's
  log and matplotlib cache) and, where the host has them, the jail's memory and pids cgroups
  at ``CGROUP_MOUNT``.

Nothing else of the host is there: not its home directories, its ``/tmp``, its processes or its
network. The server keeps ``CAP_SYS_ADMIN`` and ``CAP_DAC_OVERRIDE`` inside the jail's user
namespace (all other capabilities are dropped) so that each supervisor can build the action's
mounts; the worker drops every capability before any user code runs. Because the jail's user namespace maps the caller's own
uid, the interpreter may live anywhere the caller can read (pyenv under ``/root``, a venv in a
0700 home) and the workdir anywhere the caller can write.

bubblewrap is chosen over nsjail (not packaged in Debian 12) and gVisor (its own runtime binary);
see benchmarks/README.md.
"""

from __future__ import annotations

import os
import shutil
import site
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from keiri_agent.errors import BlockError, ErrorCode

__all__ = [
    "ACTION_MOUNT",
    "BWRAP_INSTALL_HINT",
    "CGROUP_MOUNT",
    "JAIL_DIR",
    "JAIL_TMP_BYTES",
    "JailPaths",
    "find_bwrap",
    "jail_command",
    "readonly_paths",
]

JAIL_DIR = "/run/keiri"  # the jail's private host directory, inside the jail
CGROUP_MOUNT = "/run/keiri-cgroup"  # <controller>/ below it: the jail's own cgroups
ACTION_MOUNT = "/run/keiri-action"  # where a supervisor mounts the action's scratch tmpfs
JAIL_TMP_BYTES = 64 * 1024 * 1024  # /tmp of the jail (the server's; actions cannot write it)
BWRAP_INSTALL_HINT = (
    "bubblewrap をインストールしてください（Debian/Ubuntu: `sudo apt-get install bubblewrap`）。"
    "`keiri-agent sandbox doctor` で確認できます。"
)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
DEV_LINKS = (
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
)
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/fonts",
    "/etc/mime.types",
    "/etc/matplotlibrc",
)


@dataclass(frozen=True)
class JailPaths:
    """Host paths one jail is built from."""

    workdir: Path  # real path, bound read-write at the same path
    host_dir: Path  # private to the caller, bound at JAIL_DIR
    cgroups: dict[str, Path]  # controller -> host cgroup directory, bound below CGROUP_MOUNT


def find_bwrap() -> str:
    """The ``bwrap`` executable; BlockError with the install hint when it is missing."""
    found = shutil.which("bwrap") or next(
        (p for p in ("/usr/bin/bwrap", "/usr/local/bin/bwrap") if os.access(p, os.X_OK)), None
    )
    if found is None:
        raise BlockError(
            "サンドボックスに必要な bubblewrap（bwrap）が見つかりません。隔離なしでは実行しません。",
            code=ErrorCode.DEPENDENCY_NOT_FOUND,
            hint=BWRAP_INSTALL_HINT,
            details={"missing": "bwrap"},
        )
    return found


def _interpreter_paths() -> Iterable[str]:
    yield from (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    yield from (entry for entry in sys.path if entry)  # '' is the current directory: never
    yield from site.getsitepackages()
    yield site.getusersitepackages()


def readonly_paths() -> list[tuple[str, str]]:
    """(source, destination) pairs to bind read-only: the interpreter, its packages, the system.

    Each existing path is bound at its real path and, when it is reached through a symlink,
    also where the interpreter expects it. Parents come before their children, so a nested
    entry (site-packages inside the prefix) is never hidden by a later bind of its parent.
    """
    pairs: dict[str, str] = {}  # destination -> source
    for entry in [*_interpreter_paths(), *SYSTEM_DIRS, *ETC_FILES]:
        path = Path(entry)
        if not path.is_absolute() or not (path.exists() or path.is_symlink()):
            continue
        real = os.path.realpath(path)
        if (entry in SYSTEM_DIRS and path.is_symlink()) or entry in ETC_FILES:
            pairs.setdefault(entry, real)  # /bin -> usr/bin stays a symlink (see below)
            continue
        pairs.setdefault(real, real)
        pairs.setdefault(str(path), real)
    return sorted(((source, dest) for dest, source in pairs.items()), key=lambda p: p[1])


def _system_dir_args(source: str, dest: str) -> list[str]:
    if dest in SYSTEM_DIRS and os.path.islink(dest):  # /bin -> usr/bin on merged-/usr systems
        return ["--symlink", os.readlink(dest), dest]
    return ["--ro-bind", source, dest]


def _dev_args() -> list[str]:
    """A minimal ``/dev``: a tmpfs with the host's harmless character devices bound in.

    Not bubblewrap's ``--dev``: it mounts a devpts, for which an unprivileged bwrap maps the
    caller to root in one user namespace and back in a nested one, and the jail's PID namespace
    then belongs to the outer one, where the fork server holds no capability (it could not
    ``setns`` back into it after forking each spare action's PID namespace).
    """
    args = ["--tmpfs", "/dev"]
    for device in DEVICES:
        if os.path.exists(device):
            args += ["--dev-bind", device, device]
    for name, target in DEV_LINKS:
        args += ["--symlink", target, f"/dev/{name}"]
    return [*args, "--dir", "/dev/shm"]


def jail_command(bwrap: str, paths: JailPaths, argv: list[str]) -> list[str]:
    """The full ``bwrap`` command that runs ``argv`` inside the jail."""
    command = [
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SYS_ADMIN",  # mounts for each action (actionfs)
        "--cap-add",
        "CAP_DAC_OVERRIDE",  # overlayfs checks the mounter's access to its layers with it
        "--hostname",
        "keiri-sandbox",
    ]
    # bwrap mounts in argument order, and a later mount hides what was bound below it: the
    # jail's own /proc, /dev and /tmp come first, so an interpreter or venv that lives under
    # /tmp (a CI checkout, a pip install --target) is bound on top of the private /tmp.
    command += ["--proc", "/proc", *_dev_args()]
    command += ["--size", str(JAIL_TMP_BYTES), "--perms", "0700", "--tmpfs", "/tmp"]
    for source, dest in readonly_paths():
        command += _system_dir_args(source, dest)
    command += ["--perms", "0700", "--dir", ACTION_MOUNT]
    command += ["--bind", str(paths.host_dir), JAIL_DIR]
    for controller, directory in sorted(paths.cgroups.items()):
        command += ["--bind", str(directory), f"{CGROUP_MOUNT}/{controller}"]
    command += ["--bind", str(paths.workdir), str(paths.workdir)]
    command += ["--chdir", JAIL_DIR, "--", *argv]
    return command
