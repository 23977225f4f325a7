"""Memory and pids cgroups: one per jail (made by the host), one per action (made inside).

The host creates, below its own cgroup of each controller, a directory for the jail and binds it
into the jail (``jail.CGROUP_MOUNT``). There the supervisor of each action creates a child
cgroup ahead of the request (``spare``), the worker joins it while it waits, the supervisor sets
the action's limits when the request comes (before the worker reads it), reads the peak and the
OOM kills from it afterwards and removes it. Limits
are the kernel's: ``memory.limit_in_bytes``/``memory.max`` counts anonymous memory, memfd,
shared memory and tmpfs pages alike; ``pids.max`` counts the action's processes and threads
(not every process of the uid, as ``RLIMIT_NPROC`` would).

Each controller is decided on its own (``CgroupTree.plan``): cgroup v1 where the controller is
mounted at ``<root>/<controller>`` and the caller may create cgroups below its own there (root
usually may), else cgroup v2 (mounted at ``<root>``, or at ``<root>/unified`` on a hybrid
machine) where the caller's own cgroup has the controller enabled for its children
(``cgroup.subtree_control``) and is writable. The jail's cgroup must lie below the caller's own:
the jail's cgroup namespace is rooted there, and a process can only move between cgroups inside
its namespace. But the kernel lets a cgroup other than the hierarchy's root enable memory for
its children only while no process is in it, so on v2 these limits are had only by a process in
the root cgroup (a VM without an init system that moves it elsewhere); in a systemd session or
service they are not (it would take starting ``bwrap`` in a fresh leaf and moving the jail's
processes below it before enabling the controllers: not done). A controller that cannot be had
is reported per limit, with the reason in Japanese: in every outcome's layers and warnings, by
``keiri-agent sandbox doctor`` and by the server's ``/readyz``.

``CgroupTree`` takes where the hierarchies are mounted and where this process's membership is
read from, so its decisions can be checked against any directory tree.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from keiri_agent.errors import reason_of

__all__ = [
    "CONTROLLERS",
    "CONTROLLER_LAYERS",
    "ActionCgroup",
    "CgroupPlan",
    "CgroupTree",
    "JailCgroups",
    "remove_cgroup_dirs",
]

CGROUP_ROOT = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")
HYBRID_V2_DIR = "unified"  # where systemd mounts cgroup v2 beside the v1 hierarchies
CONTROLLERS = ("memory", "pids")
# The sandbox property (``layers.ACTION_LAYER_NAMES``) each controller provides.
CONTROLLER_LAYERS = {"memory": "memory_cgroup", "pids": "pids_cgroup"}
V2_KEY = "unified"  # the key of a cgroup v2 directory among a jail's or action's directories
REMOVE_ATTEMPTS = 100  # rmdir fails with EBUSY until the last task has left
REMOVE_PAUSE_S = 0.01


def _words(path: Path) -> list[str]:
    """The words of a cgroup interface file ('' when it cannot be read); '+x' counts as 'x'."""
    try:
        return [word.lstrip("+") for word in path.read_text().split()]
    except OSError:
        return []


@dataclass(frozen=True)
class CgroupPlan:
    """Where this machine can put each controller's jail cgroups, or why it cannot."""

    v1: dict[str, Path]  # controller -> the caller's own cgroup in its v1 hierarchy
    v2: Path | None  # the caller's own cgroup v2 directory, when it serves ``v2_controllers``
    v2_controllers: tuple[str, ...]
    reasons: dict[str, str]  # controller -> why no cgroup of it can be had (Japanese)

    def unenforced(self) -> dict[str, str]:
        """Sandbox property (``memory_cgroup``...) -> why it is not in force here."""
        return {CONTROLLER_LAYERS[c]: reason for c, reason in self.reasons.items()}


@dataclass(frozen=True)
class JailCgroups:
    """A jail's cgroup directories (controller, or ``unified`` for v2, -> host directory) and,
    for each property it cannot have, why (``CgroupPlan.unenforced``)."""

    dirs: dict[str, Path]
    unenforced: dict[str, str]


@dataclass(frozen=True)
class CgroupTree:
    """The cgroup hierarchies as this process sees them."""

    root: Path = CGROUP_ROOT  # where the hierarchies are mounted
    membership: Path = SELF_CGROUP  # this process's cgroup in each hierarchy

    def _own(self) -> dict[str, str]:
        """controller (or '' for cgroup v2) -> this process's cgroup path."""
        found: dict[str, str] = {}
        for line in self.membership.read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                found[name] = path
        return found

    def _v2_mount(self) -> Path | None:
        for mount in (self.root, self.root / HYBRID_V2_DIR):
            if (mount / "cgroup.controllers").exists():
                return mount
        return None

    def plan(self) -> CgroupPlan:
        """Decide each controller without creating anything (cheap: a few small files read)."""
        own = self._own()
        v1: dict[str, Path] = {}
        reasons: dict[str, str] = {}
        for controller in CONTROLLERS:
            mount = self.root / controller
            if controller not in own or not (mount / "cgroup.procs").exists():
                continue
            parent = mount / own[controller].lstrip("/")
            if os.access(parent, os.W_OK):
                v1[controller] = parent
            else:
                reasons[controller] = (
                    f"cgroup v1 の {controller} コントローラー（{parent}）に、"
                    f"このユーザー（uid {os.geteuid()}）は cgroup を作れません"
                )
        wanted = [c for c in CONTROLLERS if c not in v1]
        v2, served, v2_reasons = self._plan_v2(own, wanted)
        for controller, reason in v2_reasons.items():
            reasons[controller] = "。".join(filter(None, (reasons.get(controller), reason)))
        return CgroupPlan(v1=v1, v2=v2, v2_controllers=served, reasons=reasons)

    def _plan_v2(
        self, own: dict[str, str], wanted: list[str]
    ) -> tuple[Path | None, tuple[str, ...], dict[str, str]]:
        if not wanted:
            return None, (), {}
        mount = self._v2_mount()
        if mount is None or "" not in own:
            return None, (), dict.fromkeys(wanted, "cgroup v2 もマウントされていません")
        present = _words(mount / "cgroup.controllers")
        directory = mount / own[""].lstrip("/")
        delegated = _words(directory / "cgroup.controllers")
        enabled = _words(directory / "cgroup.subtree_control")
        writable = os.access(directory, os.W_OK)
        reasons: dict[str, str] = {}
        for controller in wanted:
            if controller not in present:
                reasons[controller] = (
                    f"cgroup v2（{mount}）に {controller} コントローラーがありません"
                    f"（あるのは {', '.join(present) or 'なし'}）"
                )
            elif controller not in delegated:
                reasons[controller] = (
                    f"このプロセスの cgroup v2（{directory}）には {controller} コントローラーが"
                    "委譲されていません"
                )
            elif controller not in enabled:
                reasons[controller] = (
                    f"このプロセスの cgroup v2（{directory}）では {controller} が子の cgroup に"
                    "有効化されていません（cgroup.subtree_control。プロセスのいる cgroup では、"
                    "階層のルート以外は有効化できません）"
                )
            elif not writable:
                reasons[controller] = (
                    f"このプロセスの cgroup v2（{directory}）にこのユーザーは書き込めません"
                    "（委譲されていません）"
                )
        served = tuple(c for c in wanted if c not in reasons)
        return (directory if served else None), served, reasons

    def make_jail_dirs(self, name: str | None = None) -> JailCgroups:
        """Create the jail's cgroup directories for every controller this machine offers."""
        label = name or f"keiri-jail-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        plan = self.plan()
        unenforced = plan.unenforced()
        made: dict[str, Path] = {}
        for controller, parent in plan.v1.items():
            try:
                (parent / label).mkdir()
            except OSError as exc:
                unenforced[CONTROLLER_LAYERS[controller]] = (
                    f"cgroup v1 の {controller} コントローラー（{parent}）に cgroup を作れません"
                    f"（{reason_of(exc)}）"
                )
            else:
                made[controller] = parent / label
        if plan.v2 is not None:
            directory = plan.v2 / label
            try:
                directory.mkdir()
                enable = " ".join(f"+{c}" for c in plan.v2_controllers)
                (directory / "cgroup.subtree_control").write_text(enable)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    directory.rmdir()
                for controller in plan.v2_controllers:
                    unenforced[CONTROLLER_LAYERS[controller]] = (
                        f"cgroup v2（{plan.v2}）に cgroup を作れません（{reason_of(exc)}）"
                    )
            else:
                made[V2_KEY] = directory
        return JailCgroups(dirs=made, unenforced=unenforced)


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
    v2_controllers: tuple[str, ...] = ()  # those the 'unified' one has

    @classmethod
    def make(cls, base: Path, name: str) -> ActionCgroup:
        """Make the cgroup (no limits yet: see ``limit``); OSError if the jail's is unusable."""
        dirs: dict[str, Path] = {}
        try:
            for key in (*CONTROLLERS, V2_KEY):
                if (base / key).is_dir():
                    directory = base / key / name
                    directory.mkdir()
                    dirs[key] = directory
        except OSError:
            remove_cgroup_dirs(dirs)
            raise
        if not dirs:
            raise OSError(errno.ENOENT, f"no cgroup controller below {base}")
        enabled = _words(base / V2_KEY / "cgroup.subtree_control") if V2_KEY in dirs else []
        served = tuple(c for c in CONTROLLERS if c in enabled and c not in dirs)
        return cls(dirs, served)

    @property
    def controllers(self) -> tuple[str, ...]:
        """The controllers this action's cgroups have (v1 or v2)."""
        return tuple(c for c in CONTROLLERS if c in self.dirs or c in self.v2_controllers)

    def _key(self, controller: str) -> str:
        return controller if controller in self.dirs else V2_KEY

    def limit(self, memory_bytes: int, max_tasks: int) -> None:
        """Set the action's limits, before any of its code runs; OSError if they cannot be set."""
        if "memory" in self.dirs:
            self._write("memory", "memory.limit_in_bytes", str(memory_bytes))
            self._write("memory", "memory.memsw.limit_in_bytes", str(memory_bytes), True)
        elif "memory" in self.v2_controllers:
            self._write(V2_KEY, "memory.max", str(memory_bytes))
            self._write(V2_KEY, "memory.swap.max", "0", optional=True)
        if "pids" in self.controllers:
            self._write(self._key("pids"), "pids.max", str(max_tasks))

    def _write(self, key: str, name: str, value: str, optional: bool = False) -> None:
        try:
            (self.dirs[key] / name).write_text(value)
        except OSError:
            if not optional:
                raise

    def _read(self, key: str, name: str) -> str:
        try:
            return (self.dirs[key] / name).read_text()
        except (OSError, KeyError):
            return ""

    def join_self(self) -> None:
        """Move the calling process into every controller's cgroup (its children follow)."""
        for directory in self.dirs.values():
            (directory / "cgroup.procs").write_text("0")

    def peak_memory(self) -> int:
        """The highest memory charge the action reached (bytes; 0 where unknown)."""
        if "memory" not in self.controllers:
            return 0
        key = self._key("memory")
        name = "memory.peak" if key == V2_KEY else "memory.max_usage_in_bytes"
        text = self._read(key, name).strip()
        return int(text) if text.isdigit() else 0

    def oom_kills(self) -> int:
        """How many processes the kernel killed for exceeding the memory limit."""
        if "memory" not in self.controllers:
            return 0
        key = self._key("memory")
        name = "memory.events" if key == V2_KEY else "memory.oom_control"
        for line in self._read(key, name).splitlines():
            field_name, _, value = line.partition(" ")
            if field_name == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def remove(self) -> None:
        remove_cgroup_dirs(self.dirs)
