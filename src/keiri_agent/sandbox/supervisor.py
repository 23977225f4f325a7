"""The supervisor: one per action, between the fork server and the worker.

It prepares the workdir, forks the worker, and while the worker runs it reads its stdout and
stderr (capping each), watches the wall clock and the files written (count and bytes), and
kills the whole tree the moment a limit is crossed. As a child subreaper it also catches
anything that double-forked away. Afterwards it lists the files created (by real path: a
symlink leading outside the workdir is removed and reported), gives the workdir back to its
owner, and writes the outcome as JSON for the parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keiri_agent.sandbox import procs
from keiri_agent.sandbox.ownership import (
    prepare_workdir_for,
    resolve_sandbox_ids,
    restore_workdir_owner,
)
from keiri_agent.sandbox.profiles import SandboxProfile
from keiri_agent.sandbox.worker import run_worker

__all__ = ["SANDBOX_DIR", "ActionRequest", "remove_sandbox_dir", "reset_sandbox_dir", "supervise"]

SANDBOX_DIR = ".sandbox"  # per-action home, tmp and inputs inside the workdir; removed after
POLL_S = 0.05
FILE_CHECK_INTERVAL_S = 0.05  # files are counted as often as pipes are polled: writes are fast
READ_CHUNK = 65536
DRAIN_AFTER_EXIT_S = 0.5


@dataclass
class ActionRequest:
    id: int
    code: str
    workdir: Path
    profile: SandboxProfile
    inputs: dict[str, str]
    result_path: Path


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

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def remove_sandbox_dir(workdir: Path) -> None:
    """Remove ``workdir/.sandbox`` whatever code left there, never following a symlink."""
    path = workdir / SANDBOX_DIR
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def reset_sandbox_dir(workdir: Path) -> Path:
    """A fresh, empty ``workdir/.sandbox`` (a symlink planted there is removed, not followed)."""
    remove_sandbox_dir(workdir)
    path = workdir / SANDBOX_DIR
    path.mkdir()
    return path


def _snapshot(workdir: Path) -> dict[str, tuple[int, int]]:
    seen: dict[str, tuple[int, int]] = {}
    for root, dirs, files in os.walk(workdir):
        if Path(root) == workdir and SANDBOX_DIR in dirs:
            dirs.remove(SANDBOX_DIR)
        for name in files:
            path = Path(root, name)
            try:
                info = path.lstat()
            except OSError:
                continue
            seen[path.relative_to(workdir).as_posix()] = (info.st_size, info.st_mtime_ns)
    return seen


def _usage(workdir: Path) -> tuple[int, int]:
    """(number of entries, total bytes) in the workdir, directories and the sandbox dir included."""
    count = total = 0
    for root, dirs, files in os.walk(workdir):
        for name in [*dirs, *files]:
            count += 1
            with contextlib.suppress(OSError):
                total += Path(root, name).lstat().st_size
    return count, total


def _remove_escaping_links(workdir: Path, warnings: list[str]) -> None:
    """Unlink every symlink (to a file or a directory) whose target lies outside the workdir."""
    real_root = workdir.resolve()
    for root, dirs, files in os.walk(workdir):
        for name in [*dirs, *files]:
            path = Path(root, name)
            if not path.is_symlink():
                continue
            target = Path(os.path.realpath(path))
            if not target.is_relative_to(real_root):
                path.unlink(missing_ok=True)
                rel = path.relative_to(workdir).as_posix()
                warnings.append(
                    f"ワークディレクトリの外（{target}）を指すシンボリックリンク {rel} を削除しました。"
                )


def _created_files(
    workdir: Path, before: dict[str, tuple[int, int]], warnings: list[str]
) -> list[str]:
    _remove_escaping_links(workdir, warnings)
    created = []
    for rel, stamp in sorted(_snapshot(workdir).items()):
        if before.get(rel) != stamp:
            created.append(rel)
    return created


class _Worker:
    """The running worker and its pipes."""

    def __init__(self, request: ActionRequest) -> None:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        self.started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(out_r)
            os.close(err_r)
            os.close(res_r)
            run_worker(
                code=request.code,
                workdir=request.workdir,
                profile=request.profile,
                inputs=request.inputs,
                stdout_fd=out_w,
                stderr_fd=err_w,
                result_fd=res_w,
            )
        for fd in (out_w, err_w, res_w):
            os.close(fd)
        self.pid = pid
        limit = request.profile.output_bytes
        self.streams = {out_r: _Capture(limit), err_r: _Capture(limit)}
        self.result_fd = res_r
        self.result = bytearray()
        self.open_fds = {out_r, err_r, res_r}

    def read_ready(self, timeout: float) -> None:
        if not self.open_fds:
            time.sleep(timeout)
            return
        ready, _, _ = select.select(list(self.open_fds), [], [], timeout)
        for fd in ready:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                self.open_fds.discard(fd)
                os.close(fd)
            elif fd == self.result_fd:
                if len(self.result) < 4 * 1024 * 1024:
                    self.result += chunk
            else:
                self.streams[fd].add(chunk)

    @property
    def output_overflow(self) -> bool:
        return any(capture.overflow for capture in self.streams.values())

    def close(self) -> None:
        for fd in self.open_fds:
            os.close(fd)
        self.open_fds.clear()


def _run(request: ActionRequest) -> dict[str, Any]:
    profile = request.profile
    workdir = request.workdir
    before = _snapshot(workdir)
    owner = workdir.stat()
    sandbox_dir = workdir / SANDBOX_DIR
    if sandbox_dir.is_symlink() or not sandbox_dir.is_dir():
        # The executor made it a moment ago; anything else was planted by earlier code.
        raise RuntimeError(f"{sandbox_dir} is not the directory the executor prepared")
    for sub in ("home", "tmp", "mpl"):
        (sandbox_dir / sub).mkdir(exist_ok=True)
    ids = resolve_sandbox_ids() if os.geteuid() == 0 else None
    if ids is not None:
        prepare_workdir_for(ids[0], ids[1], workdir)
    base_count, base_bytes = _usage(workdir)
    worker = _Worker(request)
    killed_by: str | None = None
    status: int | None = None
    rusage: Any = None
    next_file_check = 0.0
    deadline = worker.started + profile.wall_seconds
    while status is None:
        worker.read_ready(POLL_S)
        now = time.monotonic()
        if worker.output_overflow:
            killed_by = "output"
        elif now >= deadline:
            killed_by = "wall"
        elif now >= next_file_check:
            next_file_check = now + FILE_CHECK_INTERVAL_S
            count, total = _usage(workdir)
            if (
                count - base_count > profile.max_files
                or total - base_bytes > profile.max_total_bytes
            ):
                killed_by = "fsize"
        if killed_by is not None:
            # Kill the worker's tree but reap the worker ourselves: its status and rusage
            # are part of the outcome. Orphans re-parented to us go in kill_descendants below.
            procs.kill_tree(worker.pid)
            _, status, rusage = os.wait4(worker.pid, 0)
            break
        pid, wait_status, usage = os.wait4(worker.pid, os.WNOHANG)
        if pid == worker.pid:
            status, rusage = wait_status, usage
    ended = time.monotonic()
    procs.kill_descendants()  # nothing the worker started may outlive it
    drain_until = time.monotonic() + DRAIN_AFTER_EXIT_S
    while worker.open_fds and time.monotonic() < drain_until:
        worker.read_ready(POLL_S)
    worker.close()
    warnings: list[str] = []
    created = _created_files(workdir, before, warnings)
    remove_sandbox_dir(workdir)
    if ids is not None:
        restore_workdir_owner(workdir, owner.st_uid, owner.st_gid)
    return _outcome(request, worker, status, rusage, killed_by, ended, created, warnings)


def _outcome(
    request: ActionRequest,
    worker: _Worker,
    status: int,
    rusage: Any,
    killed_by: str | None,
    ended: float,
    created: list[str],
    warnings: list[str],
) -> dict[str, Any]:
    profile = request.profile
    report: dict[str, Any] = {}
    # The worker writes one JSON object per line: its layers first, its result last.
    for line in worker.result.decode("utf-8", errors="replace").splitlines():
        try:
            part = json.loads(line)
        except json.JSONDecodeError:
            warnings.append("実行結果の報告の一部を読み取れませんでした。")
            continue
        if isinstance(part, dict):
            report.update(part)
    cpu_used = rusage.ru_utime + rusage.ru_stime
    if killed_by is None and os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        if signum == signal.SIGXCPU or (
            signum == signal.SIGKILL and cpu_used >= profile.cpu_seconds - 0.5
        ):
            killed_by = "cpu"
        elif signum == signal.SIGXFSZ:
            killed_by = "fsize"
        # Any other signal (including a SIGKILL that was neither ours nor the CPU limit's) is
        # reported as it is: RLIMIT_AS turns memory exhaustion into MemoryError long before
        # the kernel's OOM killer would act.
    error = report.get("error")
    if killed_by is None and report.get("memory_error"):
        killed_by = "memory"
    if killed_by is None and report.get("fsize_error"):
        killed_by = "fsize"
    if error is None and not report.get("ok"):
        error = _death_error(status, killed_by, profile)
    stdout, stderr = (capture for capture in worker.streams.values())
    return {
        "success": bool(report.get("ok")) and killed_by is None,
        "stdout": stdout.text(),
        "stderr": stderr.text(),
        "stdout_truncated": stdout.overflow,
        "stderr_truncated": stderr.overflow,
        "error": None if report.get("ok") and killed_by is None else error,
        "files_created": created,
        "duration_s": round(ended - worker.started, 4),
        "peak_memory_bytes": int(rusage.ru_maxrss) * 1024,
        "killed_by": killed_by,
        "profile": profile.name,
        "layers": report.get("layers", []),
        "warnings": warnings,
        "result": report.get("result"),
    }


def _death_error(status: int, killed_by: str | None, profile: SandboxProfile) -> dict[str, Any]:
    reasons = {
        "cpu": f"CPU 時間の上限（{profile.cpu_seconds} 秒）を超えたため停止しました。",
        "wall": f"実行時間の上限（{profile.wall_seconds:g} 秒）を超えたため停止しました。",
        "memory": f"メモリの上限（{profile.memory_bytes // (1024 * 1024)} MB）を超えたため停止しました。",
        "output": f"出力が上限（{profile.output_bytes} バイト）を超えたため停止しました。",
        "fsize": "ファイルの大きさ・数の上限を超えたため停止しました。",
    }
    if killed_by in reasons:
        return {"type": "SandboxLimitExceeded", "message": reasons[killed_by], "traceback": []}
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return {
            "type": "WorkerKilled",
            "message": f"シグナル {name} で終了しました。",
            "traceback": [],
        }
    return {"type": "WorkerFailed", "message": "実行結果が返りませんでした。", "traceback": []}


def supervise(request: ActionRequest, done_fd: int) -> None:
    """Run one action to completion and announce it on ``done_fd`` with one short line."""
    procs.become_subreaper()
    try:
        outcome = _run(request)
    except Exception as exc:  # the supervisor itself failed: report it, never hang the caller
        procs.kill_descendants()
        outcome = {
            "success": False,
            "error": {"type": type(exc).__name__, "message": str(exc), "traceback": []},
            "profile": request.profile.name,
            "warnings": ["サンドボックスの監視プロセスでエラーが発生しました。"],
        }
    tmp = request.result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(outcome, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, request.result_path)
    line = json.dumps({"type": "done", "id": request.id}) + "\n"
    os.write(done_fd, line.encode("utf-8"))
