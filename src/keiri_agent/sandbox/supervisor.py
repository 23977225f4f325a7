"""The supervisor: one per action, forked inside the jail by the warm fork server.

It builds the action's world and watches it:

1. ``actionfs.prepare_action_fs``: its own mount, IPC and UTS namespaces, a size-limited tmpfs
   and an overlay on the workdir (the kernel bounds every byte and entry the action writes);
2. a memory and pids cgroup for the action, where the jail has cgroups (``cgroups``);
3. a new PID namespace: the action's init (``_action_init``, trusted code) joins the cgroup,
   mounts its own ``/proc``, detaches the jail's plumbing and forks the worker, then reaps it
   and reports its exit status and rusage on a pipe of its own; killing the init kills every
   process of the action at once (nothing can outlive it, setsid or not);
4. while the worker runs: stdout and stderr are captured up to the profile's cap, the wall
   clock is watched; an overflow or the deadline kills the action;
5. afterwards, with every process of the action dead: the cgroup's peak and OOM kills are read,
   the files the action wrote are copied out (``copyout``: relative to directory descriptors,
   no symlink followed, nothing pre-existing touched unless rewritten), and the outcome is
   built by ``outcome.outcome_from_report`` from what the supervisor observed. The worker's
   own report (result, error) is untrusted data; its layer list comes on a pipe the worker
   closes before any user code runs.

The outcome is written as ASCII JSON (so no file name can make it unwritable) and announced
with one short line on the server's stdout, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from keiri_agent.sandbox import procs
from keiri_agent.sandbox.actionfs import (
    CLONE_NEWPID,
    ActionFs,
    isolate_action_init,
    prepare_action_fs,
    unshare,
)
from keiri_agent.sandbox.cgroups import ActionCgroup
from keiri_agent.sandbox.copyout import SANDBOX_DIR, copy_out
from keiri_agent.sandbox.isolation import set_not_dumpable
from keiri_agent.sandbox.jail import ACTION_MOUNT, CGROUP_MOUNT
from keiri_agent.sandbox.layers import LayerStatus
from keiri_agent.sandbox.outcome import WORKER_EXIT_COMPLETED, outcome_from_report
from keiri_agent.sandbox.profiles import SandboxProfile
from keiri_agent.sandbox.timeline import Marks, mark, parse_marks
from keiri_agent.sandbox.worker import run_worker

__all__ = ["ActionRequest", "supervise"]

POLL_S = 0.05
READ_CHUNK = 65536
MAX_REPORT_BYTES = 8 * 1024 * 1024
MAX_LAYERS_BYTES = 64 * 1024
DRAIN_AFTER_EXIT_S = 0.5
MiB = 1024 * 1024
# The action's cgroup holds its memory, the tmpfs pages of what it wrote (bounded by the
# profile's max_total_bytes) and some kernel memory (page tables, pipes) on top.
CGROUP_KERNEL_HEADROOM = 64 * MiB
SUPERVISOR_FAILED = "サンドボックスの監視プロセスでエラーが発生しました。"


@dataclass
class ActionRequest:
    id: int
    code: str
    workdir: Path
    profile: SandboxProfile
    inputs: dict[str, str]
    result_path: Path
    cgroup_note: str = ""  # why the jail has no cgroup (empty when it has one)
    marks: Marks = field(default_factory=list)  # see ``timeline``


@dataclass
class _Capture:
    limit: int
    data: bytearray = field(default_factory=bytearray)
    overflow: bool = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if len(chunk) > room:
            self.overflow = True
        self.data += chunk[: max(room, 0)]


@dataclass
class _Pipes:
    """Read ends the supervisor watches; ``targets`` maps each to its buffer."""

    targets: dict[int, _Capture]

    def read_ready(self, timeout: float) -> None:
        if not self.targets:
            time.sleep(timeout)
            return
        ready, _, _ = select.select(list(self.targets), [], [], timeout)
        for fd in ready:
            chunk = os.read(fd, READ_CHUNK)
            if chunk:
                self.targets[fd].add(chunk)
            else:
                del self.targets[fd]
                os.close(fd)

    def close(self) -> None:
        for fd in self.targets:
            os.close(fd)
        self.targets.clear()


def _action_init(
    request: ActionRequest,
    cgroup: ActionCgroup | None,
    fds: dict[str, int],
    input_fds: dict[str, int],
) -> NoReturn:
    """PID 1 of the action: confine the namespace, fork the worker, report how it ended."""
    status_fd = fds["status"]
    marks: Marks = []
    try:
        if cgroup is not None:
            cgroup.join_self()
        isolate_action_init()
        set_not_dumpable()  # the worker may see this process in /proc: it must not read it
        mark(marks, "init_isolated")
        worker_fds = {fds[name] for name in ("stdout", "stderr", "report", "layers")}
        worker_fds |= set(input_fds.values())
        pid = os.fork()
        if pid == 0:
            os.close(status_fd)
            run_worker(
                code=request.code,
                workdir=request.workdir,
                profile=request.profile,
                input_fds=input_fds,
                stdout_fd=fds["stdout"],
                stderr_fd=fds["stderr"],
                result_fd=fds["report"],
                layers_fd=fds["layers"],
            )
        mark(marks, "worker")
        for fd in worker_fds:
            os.close(fd)
        while True:  # orphans of the action are re-parented to us: reap them too
            done, status, usage = os.wait4(-1, 0)
            if done == pid:
                break
        mark(marks, "code")
        # As PID 1 of the namespace, -1 is every other process of the action; once they are
        # reaped, nothing of the action runs and the supervisor may copy out (it does not wait
        # for this process's own exit, whose namespace teardown takes a while).
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while True:
                os.wait4(-1, 0)
        mark(marks, "reaped")
        report = {
            "status": status,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "maxrss": usage.ru_maxrss * 1024,
            "marks": marks,
        }
        os.write(status_fd, json.dumps(report).encode())
        os.close(status_fd)
        os._exit(0)
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(status_fd, json.dumps({"init_error": repr(exc)[:500]}).encode())
        os._exit(1)


def _pipes() -> tuple[dict[str, int], dict[str, int]]:
    """(read ends, write ends) by name."""
    reads: dict[str, int] = {}
    writes: dict[str, int] = {}
    for name in ("stdout", "stderr", "report", "layers", "status"):
        reads[name], writes[name] = os.pipe()
    return reads, writes


def _cgroup(request: ActionRequest, layers: list[LayerStatus]) -> ActionCgroup | None:
    profile = request.profile
    if request.cgroup_note:
        layers.append(LayerStatus("memory_cgroup", False, request.cgroup_note))
        layers.append(LayerStatus("pids_cgroup", False, request.cgroup_note))
        return None
    limit = profile.memory_bytes + profile.max_total_bytes + CGROUP_KERNEL_HEADROOM
    group = ActionCgroup.create(
        Path(CGROUP_MOUNT), f"action-{request.id}", limit, profile.max_tasks
    )
    layers.append(
        LayerStatus(
            "memory_cgroup",
            True,
            f"アクションごとの cgroup: メモリ＋書き込み {limit // MiB} MiB"
            "（memfd・共有メモリ・tmpfs を含む、カーネルが強制）",
        )
    )
    layers.append(
        LayerStatus(
            "pids_cgroup",
            True,
            f"アクションごとの cgroup: プロセス・スレッド {profile.max_tasks} 個まで",
        )
    )
    return group


def _trusted_layers(raw: bytes, marks: Marks) -> list[LayerStatus]:
    """The worker's layer statuses, written before any user code ran (then the pipe closed)."""
    try:
        data = json.loads(raw.decode("utf-8"))
        marks.extend(parse_marks(data.get("marks")))
        items = data["layers"]
        return [LayerStatus(str(i["name"]), bool(i["active"]), str(i["detail"])) for i in items]
    except (ValueError, KeyError, TypeError, AttributeError):
        return []


def _run(request: ActionRequest) -> tuple[dict[str, Any], Callable[[], None]]:
    profile = request.profile
    layers: list[LayerStatus] = []
    fs: ActionFs = prepare_action_fs(request.workdir, profile.max_total_bytes, profile.max_files)
    layers.append(
        LayerStatus(
            "disk",
            True,
            f"書き込みはアクション専用の tmpfs（{profile.max_total_bytes // MiB} MiB、"
            f"{profile.max_files} 項目）に。既存のファイルは読み取り専用の下層",
        )
    )
    base = request.workdir / SANDBOX_DIR
    for path in (base, base / "home", base / "tmp", base / "mpl"):
        path.mkdir(mode=0o700)
    mark(request.marks, "action_fs")
    cgroup = _cgroup(request, layers)
    mark(request.marks, "cgroup")
    unshare(CLONE_NEWPID)  # the next child is PID 1 of the action's own PID namespace
    layers.append(
        LayerStatus(
            "action_namespaces",
            True,
            "アクションごとの PID・マウント・IPC・UTS 名前空間（終了時にすべて消滅）",
        )
    )
    # Opened here: the worker's view of the jail's private directory is gone before it starts.
    input_fds = {
        name: os.open(path, os.O_RDONLY | os.O_NOFOLLOW) for name, path in request.inputs.items()
    }
    reads, writes = _pipes()
    started = time.monotonic()
    init_pid = os.fork()
    if init_pid == 0:
        for fd in reads.values():
            os.close(fd)
        _action_init(request, cgroup, writes, input_fds)
    mark(request.marks, "init")
    for fd in [*writes.values(), *input_fds.values()]:
        os.close(fd)
    out, err = _Capture(profile.output_bytes), _Capture(profile.output_bytes)
    report, trusted, status = (
        _Capture(MAX_REPORT_BYTES),
        _Capture(MAX_LAYERS_BYTES),
        _Capture(MAX_LAYERS_BYTES),
    )
    pipes = _Pipes(
        {
            reads["stdout"]: out,
            reads["stderr"]: err,
            reads["report"]: report,
            reads["layers"]: trusted,
            reads["status"]: status,
        }
    )
    killed_by: str | None = None
    deadline = started + profile.wall_seconds
    status_fd = reads["status"]
    # Done when the init closes its status pipe (the worker and every other process of the
    # action reaped) or is gone itself.
    while status_fd in pipes.targets:
        pipes.read_ready(POLL_S)
        if out.overflow or err.overflow:
            killed_by = "output"
        elif time.monotonic() >= deadline:
            killed_by = "wall"
        if killed_by is not None:
            _kill_action(init_pid)
            init_pid = 0
            break
        if os.waitpid(init_pid, os.WNOHANG)[0] == init_pid:
            init_pid = 0
            break
    ended = time.monotonic()
    mark(request.marks, "status")
    drain_until = time.monotonic() + DRAIN_AFTER_EXIT_S
    while pipes.targets and time.monotonic() < drain_until:
        pipes.read_ready(POLL_S)
    pipes.close()
    warnings: list[str] = []
    if request.cgroup_note:
        warnings.append(
            f"cgroup がないため、メモリ・プロセス数はアクション単位の cgroup で制限していません"
            f"（{request.cgroup_note}）。メモリは rlimit、ディスクは tmpfs、memfd と共有メモリは"
            "seccomp で制限しています。"
        )
    worker = _worker_status(bytes(status.data), warnings)
    request.marks.extend(parse_marks(worker.get("marks")))
    peak = int(worker.get("maxrss", 0))
    if cgroup is not None:
        peak = max(peak, cgroup.peak_memory())
        if killed_by is None and cgroup.oom_kills():
            killed_by = "memory"
    layers.extend(_trusted_layers(bytes(trusted.data), request.marks))
    upper_fd = os.open(fs.upper, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        copied = copy_out(
            upper_fd, fs.workdir_fd, max_files=profile.max_files, max_bytes=profile.max_total_bytes
        )
    finally:
        os.close(upper_fd)
    warnings.extend(copied.warnings)
    mark(request.marks, "copy_out")
    exit_code, signal_number = _decode(worker.get("status"))
    if killed_by is None and exit_code != WORKER_EXIT_COMPLETED and _disk_full():
        killed_by = "fsize"  # the action failed with its tmpfs full: the disk limit stopped it
    cpu_used = float(worker.get("cpu_s", 0.0))
    if killed_by is None and signal_number == signal.SIGKILL and cpu_used >= profile.cpu_seconds:
        killed_by = "cpu"  # the kernel's hard RLIMIT_CPU kill after an ignored SIGXCPU
    outcome = outcome_from_report(
        bytes(report.data),
        profile=profile,
        exit_code=exit_code,
        signal_number=signal_number,
        killed_by=killed_by,  # type: ignore[arg-type]
        duration_s=round(ended - started, 4),
        peak_memory_bytes=peak,
        files_created=copied.files,
        layers=layers,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_truncated=out.overflow,
        stderr_truncated=err.overflow,
        warnings=warnings,
    )
    mark(request.marks, "outcome")
    document = {**outcome.model_dump(mode="json"), "marks": request.marks}
    return document, lambda: _finish(init_pid, cgroup)


def _disk_full() -> bool:
    """Whether the action's tmpfs has no block or no inode left (ENOSPC for the next write)."""
    info = os.statvfs(ACTION_MOUNT)
    return info.f_bfree == 0 or info.f_ffree == 0


def _kill_action(init_pid: int) -> None:
    """SIGKILL the action's init (the kernel then kills every process of its namespace)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(init_pid, signal.SIGKILL)
    os.waitpid(init_pid, 0)


def _finish(init_pid: int, cgroup: ActionCgroup | None) -> None:
    """After the answer is out: wait for the init's exit and remove the action's cgroup."""
    if init_pid:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(init_pid, 0)
    procs.kill_descendants()
    if cgroup is not None:
        cgroup.remove()


def _worker_status(raw: bytes, warnings: list[str]) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    if "init_error" in data:
        warnings.append(f"アクションの初期化に失敗しました: {data['init_error']}")
    return data


def _decode(status: object) -> tuple[int | None, int | None]:
    """(exit code, signal) of a wait status; (None, None) when it is unknown."""
    if not isinstance(status, int):
        return None, None
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status), None
    return None, None


def _failure(request: ActionRequest, exc: BaseException) -> dict[str, Any]:
    return {
        "success": False,
        "error": {"type": type(exc).__name__, "message": str(exc)[:2000], "traceback": []},
        "profile": request.profile.name,
        "warnings": [SUPERVISOR_FAILED],
    }


def supervise(request: ActionRequest, done_fd: int) -> None:
    """Run one action to completion and announce it on ``done_fd`` with one short line."""
    mark(request.marks, "supervisor")
    procs.become_subreaper()
    finish: Callable[[], None] = procs.kill_descendants
    try:
        outcome, finish = _run(request)
    except Exception as exc:  # the supervisor itself failed: report it, never hang the caller
        procs.kill_descendants()
        outcome = _failure(request, exc)
    try:
        tmp = request.result_path.with_suffix(".tmp")
        # ASCII JSON: a lone surrogate (a name that is not UTF-8) is escaped, never unwritable.
        tmp.write_text(json.dumps(outcome, ensure_ascii=True), encoding="ascii")
        os.replace(tmp, request.result_path)
    finally:
        line = json.dumps({"type": "done", "id": request.id}) + "\n"
        os.write(done_fd, line.encode("ascii"))
        finish()
