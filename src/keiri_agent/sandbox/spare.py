"""Spare actions: a supervisor and its worker, forked before the request they will serve.

A fork of the warm server (a few hundred MB of imported libraries) costs milliseconds of page
table copying, so the server keeps one *spare* ready and forks the next one as soon as a request
takes it: the forks happen while the previous action runs or while the jail is idle, not
between a request and its code.

``fork_spare`` (in the server) forks the spare's supervisor as PID 1 of a new PID namespace:
``unshare(CLONE_NEWPID)`` before the fork and ``setns`` back into the server's own namespace
after it, so the server's next fork can do the same. The supervisor (``_spare_main``) enters the
action's mount, IPC and UTS namespaces with their own ``/proc``
(``actionfs.enter_action_namespaces``), makes the action's cgroup and the worker's pipes, and
forks the worker, which joins the cgroup (``_worker_main``). Both then wait on a pipe: the
supervisor for the server's request line, the worker for the supervisor's. When the request
comes, the supervisor sets the limits, mounts the action's file system and hands the line on
(``supervisor.supervise``); the worker opens its input files, detaches the jail's plumbing
(``actionfs.isolate_worker_fs``) and confines itself (``worker.run_worker``).

Each spare has its own namespaces, cgroup and pipes and serves exactly one request; when the
server goes away, its spare goes with it (PID 1 of a namespace takes every process in it).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from keiri_agent.sandbox.actionfs import (
    CLONE_NEWPID,
    enter_action_namespaces,
    isolate_worker_fs,
    setns,
    unshare,
)
from keiri_agent.sandbox.cgroups import ActionCgroup
from keiri_agent.sandbox.isolation import set_not_dumpable
from keiri_agent.sandbox.jail import CGROUP_MOUNT, JAIL_DIR
from keiri_agent.sandbox.supervisor import WORKER_PIPES, ActionSlot, parse_request, supervise
from keiri_agent.sandbox.timeline import Marks, mark
from keiri_agent.sandbox.watch import kill_action
from keiri_agent.sandbox.worker import WORKER_EXIT_FAILED, run_worker

__all__ = ["Spare", "fork_spare"]

MAX_REQUEST_BYTES = 64 * 1024 * 1024  # the code and the input paths of one action
READ_CHUNK = 1 << 20
CGROUP_CONTROLLERS = ("memory", "pids", "unified")


@dataclass
class Spare:
    """A supervisor waiting for its request, as the server sees it."""

    pid: int  # in the server's PID namespace
    request_fd: int  # write end: one request line, then closed


def fork_spare(number: int, results_dir: Path, pidns_fd: int) -> Spare:
    """Fork the next spare; ``pidns_fd`` is the server's own PID namespace (``/proc/self/ns/pid``)."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    unshare(CLONE_NEWPID)  # the next child is PID 1 of a new namespace
    try:
        pid = os.fork()
    except BaseException:
        setns(pidns_fd, CLONE_NEWPID)
        os.close(read_fd)
        os.close(write_fd)
        raise
    if pid == 0:
        try:
            os.close(write_fd)
            os.close(pidns_fd)
            _spare_main(number, read_fd, results_dir)
        finally:
            os._exit(0)
    setns(pidns_fd, CLONE_NEWPID)  # later children are the server's own again
    os.close(read_fd)
    return Spare(pid=pid, request_fd=write_fd)


def read_line(fd: int) -> bytes:
    """Bytes up to the first newline (or EOF), at most MAX_REQUEST_BYTES."""
    data = bytearray()
    while b"\n" not in data and len(data) < MAX_REQUEST_BYTES:
        chunk = os.read(fd, READ_CHUNK)
        if not chunk:
            break
        data += chunk
    return bytes(data).split(b"\n", 1)[0]


def _prepare(number: int, server_fd: int) -> ActionSlot:
    """Supervisor, ahead of its request: namespaces, cgroup, pipes and the waiting worker."""
    enter_action_namespaces()
    cgroup = None
    if any((Path(CGROUP_MOUNT) / name).is_dir() for name in CGROUP_CONTROLLERS):
        cgroup = ActionCgroup.make(Path(CGROUP_MOUNT), f"action-{number}")
    reads: dict[str, int] = {}
    writes: dict[str, int] = {}
    for name in WORKER_PIPES:
        reads[name], writes[name] = os.pipe()
    request_read, request_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in [*reads.values(), request_write, server_fd]:  # the server's pipe: not ours
            os.close(fd)
        _worker_main(cgroup, writes, request_read)
    for fd in [*writes.values(), request_read]:
        os.close(fd)
    # The worker sees this process as PID 1 of its namespace: it must not be able to read it.
    # (Set after the fork: the worker needs its own /proc/self until its caps layer.)
    set_not_dumpable()
    return ActionSlot(worker=pid, request_fd=request_write, reads=reads, cgroup=cgroup)


def _spare_main(number: int, request_fd: int, results_dir: Path) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the host's request pipe is the server's alone
    os.close(devnull)
    slot: ActionSlot | None = None
    problem: BaseException | None = None
    try:
        slot = _prepare(number, request_fd)
    except Exception as exc:  # reported as the outcome of the request this spare gets
        problem = exc
    line = read_line(request_fd)
    os.close(request_fd)
    if not line:  # the server went away before handing a request
        kill_action()
        return
    supervise(line, parse_request(line, results_dir), slot, problem, done_fd=1)


def _worker_main(cgroup: ActionCgroup | None, writes: dict[str, int], request_fd: int) -> NoReturn:
    """The worker, from its fork until ``run_worker`` takes over (trusted code, no user code)."""
    marks: Marks = []
    try:
        if cgroup is not None:
            cgroup.join_self()
        line = read_line(request_fd)
        os.close(request_fd)
        if not line:
            os._exit(WORKER_EXIT_FAILED)
        mark(marks, "worker")
        request = parse_request(line, Path(JAIL_DIR))
        # Opened while the jail's private directory is visible; gone from view right after.
        input_fds = {
            name: os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            for name, path in request.inputs.items()
        }
        isolate_worker_fs()
        mark(marks, "worker_fs")
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            report = json.dumps({"init_error": repr(exc)[:500]}, ensure_ascii=True)
            os.write(writes["layers"], report.encode("ascii"))
        os._exit(WORKER_EXIT_FAILED)
    run_worker(
        code=request.code,
        workdir=request.workdir,
        profile=request.profile,
        input_fds=input_fds,
        stdout_fd=writes["stdout"],
        stderr_fd=writes["stderr"],
        result_fd=writes["report"],
        layers_fd=writes["layers"],
        marks=marks,
    )
