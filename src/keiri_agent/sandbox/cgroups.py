"""Memory and pids cgroups: one per jail (made by the host), one per action (made inside).

The host creates, below its own cgroup of each controller, a directory for the jail and binds it
into the jail (``jail.CGROUP_MOUNT``). There the supervisor of each action creates a child
cgroup ahead of the request (``spare``), the worker joins it while it waits, the supervisor sets
the action's limits when the request comes (before the worker reads it), reads the peak and the
OOM kills from it afterwards and removes it. Limits
are the kernel's: ``memory.limit_in_bytes``/``memory.max`` counts anonymous memory, memfd,
shared memory and tmpfs pages alike; ``pids.max`` counts the action's processes and threads
(not every process of the uid, as ``RLIMIT_NPROC`` would).

Supported: cgroup v1 with the ``memory`` and ``pids`` controllers mounted at
``/sys/fs/cgroup/<controller>`` (writable by the caller, as root usually is), and cgroup v2 where
the caller's own cgroup has both controllers enabled for its children (a delegated subtree).
``host_cgroup_dirs`` says why not otherwise; the caller reports that in every outcome.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from keiri_agent.sandbox.layers import LayerUnavailableError

__all__ = [
    "CONTROLLERS",
    "ActionCgroup",
    "host_cgroup_dirs",
    "remove_cgroup_dirs",
]

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids")
REMOVE_ATTEMPTS = 100  # rmdir fails with EBUSY until the last task has left
REMOVE_PAUSE_S = 0.01


def _own_cgroups() -> dict[str, str]:
    """controller (or '' for cgroup v2) -> this process's cgroup path."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


def _v1_parent(controller: str, own: dict[str, str]) -> Path | None:
    mount = CGROUP_ROOT / controller
    if controller not in own or not (mount / "cgroup.procs").exists():
        return None
    return mount / own[controller].lstrip("/")


def _v2_parent(own: dict[str, str]) -> Path | None:
    if "" not in own or not (CGROUP_ROOT / "cgroup.controllers").exists():
        return None
    parent = CGROUP_ROOT / own[""].lstrip("/")
    enabled = (parent / "cgroup.subtree_control").read_text().split()
    return parent if all(c in enabled for c in CONTROLLERS) else None


def host_cgroup_dirs(name: str | None = None) -> dict[str, Path]:
    """Create the jail's cgroup directories; controller -> directory (v2: one for both).

    Raises LayerUnavailableError when this machine (or this user) has no usable cgroup.
    """
    label = name or f"keiri-jail-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    own = _own_cgroups()
    parents = {c: _v1_parent(c, own) for c in CONTROLLERS}
    if all(parents.values()):
        made: dict[str, Path] = {}
        try:
            for controller, parent in parents.items():
                assert parent is not None
                directory = parent / label
                directory.mkdir()
                made[controller] = directory
        except OSError as exc:
            remove_cgroup_dirs(made)
            raise LayerUnavailableError(
                f"cgroup v1 の {', '.join(CONTROLLERS)} に書き込めません（{exc.strerror}）"
            ) from exc
        return made
    parent = _v2_parent(own)
    if parent is None:
        raise LayerUnavailableError(
            "memory・pids コントローラーを使える cgroup がありません"
            "（cgroup v1 のコントローラーか、委譲された cgroup v2 が必要です）"
        )
    directory = parent / label
    try:
        directory.mkdir()
        (directory / "cgroup.subtree_control").write_text("+memory +pids")
    except OSError as exc:
        with contextlib.suppress(OSError):
            directory.rmdir()
        raise LayerUnavailableError(f"cgroup v2 に書き込めません（{exc.strerror}）") from exc
    return {"unified": directory}


def remove_cgroup_dirs(dirs: dict[str, Path]) -> None:
    """Remove cgroup directories (children first); tasks still inside make it retry briefly."""
    for directory in dirs.values():
        _remove_tree(directory)


def _remove_tree(directory: Path) -> None:
    with contextlib.suppress(OSError):
        for child in directory.iterdir():
            if child.is_dir():
                _remove_tree(child)
    for _ in range(REMOVE_ATTEMPTS):
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return
            time.sleep(REMOVE_PAUSE_S)


@dataclass
class ActionCgroup:
    """One action's cgroup(s) below the jail's (inside the jail, under CGROUP_MOUNT)."""

    dirs: dict[str, Path]  # controller (or 'unified') -> directory

    @classmethod
    def make(cls, base: Path, name: str) -> ActionCgroup:
        """Make the cgroup (no limits yet: see ``limit``); OSError if the jail's is unusable."""
        dirs: dict[str, Path] = {}
        try:
            for controller in ("memory", "pids", "unified"):
                if (base / controller).is_dir():
                    directory = base / controller / name
                    directory.mkdir()
                    dirs[controller] = directory
        except OSError:
            remove_cgroup_dirs(dirs)
            raise
        if not dirs:
            raise OSError(errno.ENOENT, f"no cgroup controller below {base}")
        return cls(dirs)

    def limit(self, memory_bytes: int, max_tasks: int) -> None:
        """Set the action's limits, before any of its code runs; OSError if they cannot be set."""
        if "unified" in self.dirs:
            self._write("unified", "memory.max", str(memory_bytes))
            self._write("unified", "memory.swap.max", "0", optional=True)
            self._write("unified", "pids.max", str(max_tasks))
        else:
            self._write("memory", "memory.limit_in_bytes", str(memory_bytes))
            self._write("memory", "memory.memsw.limit_in_bytes", str(memory_bytes), True)
            self._write("pids", "pids.max", str(max_tasks))

    def _write(self, controller: str, name: str, value: str, optional: bool = False) -> None:
        try:
            (self.dirs[controller] / name).write_text(value)
        except OSError:
            if not optional:
                raise

    def _read(self, controller: str, name: str) -> str:
        try:
            return (self.dirs[controller] / name).read_text()
        except (OSError, KeyError):
            return ""

    def join_self(self) -> None:
        """Move the calling process into every controller's cgroup (its children follow)."""
        for directory in self.dirs.values():
            (directory / "cgroup.procs").write_text("0")

    def peak_memory(self) -> int:
        """The highest memory charge the action reached (bytes; 0 where unknown)."""
        key = "unified" if "unified" in self.dirs else "memory"
        name = "memory.peak" if key == "unified" else "memory.max_usage_in_bytes"
        text = self._read(key, name).strip()
        return int(text) if text.isdigit() else 0

    def oom_kills(self) -> int:
        """How many processes the kernel killed for exceeding the memory limit."""
        key = "unified" if "unified" in self.dirs else "memory"
        name = "memory.events" if key == "unified" else "memory.oom_control"
        for line in self._read(key, name).splitlines():
            field, _, value = line.partition(" ")
            if field == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def remove(self) -> None:
        remove_cgroup_dirs(self.dirs)
