"""The supervisor: PID 1 of one action's PID namespace, serving exactly one request.

It is forked by the warm fork server before its request arrives, together with a worker that
waits for it (``spare``). When the request comes, ``supervise`` builds the rest of the action's
world and watches it:

1. the action's cgroup gets the profile's memory and task limits (``cgroups``), where the jail
   has cgroups;
2. ``actionfs.mount_action_fs``: a size-limited tmpfs and an overlay on the workdir in the
   supervisor's own mount namespace (the kernel bounds every byte and entry the action writes);
3. the request goes on to the worker, which detaches the jail's plumbing, applies its isolation
   layers and runs the code (``spare``, ``worker``);
4. while it runs (``watch``): stdout and stderr are captured up to the profile's cap, the
   wall clock is watched; an overflow or the deadline kills every process of the action at once
   (as PID 1 of the namespace, ``kill(-1)`` reaches all of them and nothing else; nothing can
   outlive it, setsid or not);
5. when the worker has exited (its exit status and rusage come from ``wait4``) every other
   process of the action is killed and reaped, the cgroup's peak and OOM kills are read, the
   files the action wrote are copied out (``copyout``: relative to directory descriptors, no
   symlink followed, nothing pre-existing touched unless rewritten), and the outcome is built by
   ``outcome.outcome_from_report`` from what the supervisor observed. The worker's own report
   (result, error) is untrusted data; its layer list comes on a pipe the worker closes before
   any user code runs.

The outcome is written as ASCII JSON (so no file name can make it unwritable) and announced
with one short line on the server's stdout, whatever happened.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keiri_agent.sandbox.actionfs import ActionFs, mount_action_fs
from keiri_agent.sandbox.cgroups import CONTROLLER_LAYERS, ActionCgroup
from keiri_agent.sandbox.copyout import SANDBOX_DIR, copy_out
from keiri_agent.sandbox.jail import ACTION_MOUNT
from keiri_agent.sandbox.layers import LIMIT_NAMES, LayerStatus
from keiri_agent.sandbox.outcome import WORKER_EXIT_COMPLETED, outcome_from_report
from keiri_agent.sandbox.profiles import SandboxProfile
from keiri_agent.sandbox.timeline import Marks, mark, parse_marks
from keiri_agent.sandbox.watch import (
    POLL_S,
    Capture,
    Pipes,
    decode_status,
    kill_action,
    watch_worker,
)

__all__ = [
    "WORKER_PID",
    "WORKER_PIPES",
    "ActionRequest",
    "ActionSlot",
    "parse_request",
    "supervise",
]

MAX_REPORT_BYTES = 8 * 1024 * 1024
MAX_LAYERS_BYTES = 64 * 1024
DRAIN_AFTER_EXIT_S = 0.5
MiB = 1024 * 1024
# The action's cgroup holds its memory, the tmpfs pages of what it wrote (bounded by the
# profile's max_total_bytes) and some kernel memory (page tables, pipes) on top.
CGROUP_KERNEL_HEADROOM = 64 * MiB
SUPERVISOR_FAILED = "サンドボックスの監視プロセスでエラーが発生しました。"
# The worker is the supervisor's first child: pid 2 of the action's PID namespace.
WORKER_PID = 2
# The worker's pipes to the supervisor: its stdout and stderr, its (untrusted) report, and the
# layers it applied (trusted: closed before any user code runs).
WORKER_PIPES = ("stdout", "stderr", "report", "layers")


@dataclass
class ActionRequest:
    id: int
    code: str
    workdir: Path
    profile: SandboxProfile
    inputs: dict[str, str]
    result_path: Path
    # Properties of ``cgroups.CONTROLLER_LAYERS`` the jail cannot have -> why (Japanese).
    unenforced: dict[str, str] = field(default_factory=dict)
    marks: Marks = field(default_factory=list)  # see ``timeline``


@dataclass
class ActionSlot:
    """What a spare supervisor prepared before its request: the waiting worker and its pipes."""

    worker: int  # pid of the worker (a child of the supervisor)
    request_fd: int  # write end: the request line for the worker
    reads: dict[str, int]  # read ends of WORKER_PIPES
    cgroup: ActionCgroup | None  # made, joined by the worker, no limits yet


def parse_request(line: bytes, results_dir: Path) -> ActionRequest:
    """A request line of the server's protocol; ValueError/KeyError/TypeError when malformed."""
    data = json.loads(line)
    profile = SandboxProfile(**{**data["profile"], "allowed_imports": frozenset()})
    received = data.get("received")
    return ActionRequest(
        id=int(data["id"]),
        code=str(data["code"]),
        workdir=Path(data["workdir"]),
        profile=profile,
        inputs={str(k): str(v) for k, v in data.get("inputs", {}).items()},
        result_path=results_dir / f"{int(data['id'])}.json",
        unenforced={str(k): str(v) for k, v in data.get("unenforced", {}).items()},
        marks=[("server", float(received))] if isinstance(received, int | float) else [],
    )


def _limit_cgroup(
    request: ActionRequest, cgroup: ActionCgroup | None, layers: list[LayerStatus]
) -> ActionCgroup | None:
    """Set the action's cgroup limits; a status for each controller's property, in force or not.

    A controller the jail was given but the action's cgroup lacks is an error: the action must
    not run believed to be limited."""
    profile = request.profile
    expected = [c for c, layer in CONTROLLER_LAYERS.items() if layer not in request.unenforced]
    missing = [c for c in expected if cgroup is None or c not in cgroup.controllers]
    if missing:
        raise OSError(f"the jail has {', '.join(missing)} cgroups but the action has none")
    limit = profile.memory_bytes + profile.max_total_bytes + CGROUP_KERNEL_HEADROOM
    if cgroup is not None:
        cgroup.limit(limit, profile.max_tasks)
    details = {
        "memory_cgroup": f"アクションごとの cgroup: メモリ＋書き込み {limit // MiB} MiB"
        "（memfd・共有メモリ・tmpfs を含む、カーネルが強制）",
        "pids_cgroup": f"アクションごとの cgroup: プロセス・スレッド {profile.max_tasks} 個まで",
    }
    for layer, detail in details.items():
        reason = request.unenforced.get(layer)
        layers.append(LayerStatus(layer, reason is None, detail if reason is None else reason))
    return cgroup


def _unenforced_warning(unenforced: dict[str, str]) -> str:
    """What a user reads when cgroup limits are not in force on this machine."""
    named = "、".join(
        f"{LIMIT_NAMES.get(layer, layer)}（{reason}）" for layer, reason in unenforced.items()
    )
    return (
        f"このマシンでは次の上限をアクション単位の cgroup で強制していません: {named}。"
        "メモリは rlimit、ディスクは tmpfs、memfd と共有メモリは seccomp で制限しています。"
    )


def _trusted_layers(raw: bytes, marks: Marks, warnings: list[str]) -> list[LayerStatus]:
    """The worker's layer statuses, written before any user code ran (then the pipe closed)."""
    try:
        data = json.loads(raw.decode("utf-8"))
        if "init_error" in data:
            warnings.append(f"アクションの初期化に失敗しました: {str(data['init_error'])[:500]}")
        marks.extend(parse_marks(data.get("marks")))
        items = data.get("layers", [])
        return [LayerStatus(str(i["name"]), bool(i["active"]), str(i["detail"])) for i in items]
    except (ValueError, KeyError, TypeError, AttributeError):
        return []


def _prepare_fs(request: ActionRequest, layers: list[LayerStatus]) -> ActionFs:
    profile = request.profile
    fs = mount_action_fs(request.workdir, profile.max_total_bytes, profile.max_files)
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
    layers.append(
        LayerStatus(
            "action_namespaces",
            True,
            "アクションごとの PID・マウント・IPC・UTS 名前空間（終了時にすべて消滅）",
        )
    )
    return fs


def _run(
    line: bytes, request: ActionRequest, slot: ActionSlot
) -> tuple[dict[str, Any], Callable[[], None]]:
    profile = request.profile
    layers: list[LayerStatus] = []
    cgroup = _limit_cgroup(request, slot.cgroup, layers)
    mark(request.marks, "cgroup")
    fs = _prepare_fs(request, layers)
    mark(request.marks, "action_fs")
    out, err = Capture(profile.output_bytes), Capture(profile.output_bytes)
    report, trusted = Capture(MAX_REPORT_BYTES), Capture(MAX_LAYERS_BYTES)
    captures = {"stdout": out, "stderr": err, "report": report, "layers": trusted}
    pipes = Pipes({slot.reads[name]: captures[name] for name in WORKER_PIPES})
    started = time.monotonic()
    _write_all(slot.request_fd, line if line.endswith(b"\n") else line + b"\n")
    os.close(slot.request_fd)
    status, usage, killed_by = watch_worker(slot.worker, profile.wall_seconds, pipes, out, err)
    ended = time.monotonic()
    mark(request.marks, "code")
    kill_action()  # whatever else of the action still runs: nothing may outlive the worker
    mark(request.marks, "reaped")
    drain_until = time.monotonic() + DRAIN_AFTER_EXIT_S
    while pipes.targets and time.monotonic() < drain_until:
        pipes.read_ready(POLL_S)
    pipes.close()
    warnings: list[str] = []
    if request.unenforced:
        warnings.append(_unenforced_warning(request.unenforced))
    peak = usage.ru_maxrss * 1024
    if cgroup is not None:
        peak = max(peak, cgroup.peak_memory())
        if killed_by is None and cgroup.oom_kills():
            killed_by = "memory"
    layers.extend(_trusted_layers(bytes(trusted.data), request.marks, warnings))
    upper_fd = os.open(fs.upper, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        copied = copy_out(
            upper_fd, fs.workdir_fd, max_files=profile.max_files, max_bytes=profile.max_total_bytes
        )
    finally:
        os.close(upper_fd)
    warnings.extend(copied.warnings)
    mark(request.marks, "copy_out")
    exit_code, signal_number = decode_status(status)
    if killed_by is None and exit_code != WORKER_EXIT_COMPLETED and _disk_full():
        killed_by = "fsize"  # the action failed with its tmpfs full: the disk limit stopped it
    cpu_used = usage.ru_utime + usage.ru_stime
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
    return document, (cgroup.remove if cgroup is not None else lambda: None)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _disk_full() -> bool:
    """Whether the action's tmpfs has no block or no inode left (ENOSPC for the next write)."""
    info = os.statvfs(ACTION_MOUNT)
    return info.f_bfree == 0 or info.f_ffree == 0


def _failure(request: ActionRequest, exc: BaseException) -> dict[str, Any]:
    return {
        "success": False,
        "error": {"type": type(exc).__name__, "message": str(exc)[:2000], "traceback": []},
        "profile": request.profile.name,
        "warnings": [SUPERVISOR_FAILED],
    }


def supervise(
    line: bytes,
    request: ActionRequest,
    slot: ActionSlot | None,
    problem: BaseException | None,
    done_fd: int,
) -> None:
    """Run one action to completion and announce it on ``done_fd`` with one short line.

    ``slot`` is what the spare prepared; ``problem`` why it could not (reported as a failure).
    """
    mark(request.marks, "supervisor")
    finish: Callable[[], None] = lambda: None  # noqa: E731
    try:
        if problem is not None:
            raise problem
        assert slot is not None
        outcome, finish = _run(line, request, slot)
    except Exception as exc:  # the supervisor itself failed: report it, never hang the caller
        kill_action()
        outcome = _failure(request, exc)
    try:
        tmp = request.result_path.with_suffix(".tmp")
        # ASCII JSON: a lone surrogate (a name that is not UTF-8) is escaped, never unwritable.
        tmp.write_text(json.dumps(outcome, ensure_ascii=True), encoding="ascii")
        os.replace(tmp, request.result_path)
    finally:
        line_out = json.dumps({"type": "done", "id": request.id}) + "\n"
        os.write(done_fd, line_out.encode("ascii"))
        finish()
