"""The warm fork server: imports the analysis libraries once, then serves each action from a
fork of itself, so an action costs no import and no fork of its own.

Run inside its jail (``jail``) as ``python -m keiri_agent.sandbox.forkserver RESULTS_DIR`` by
``SandboxExecutor`` with a scrubbed environment. Protocol (JSON lines): requests on stdin;
``ready``, ``spare``, ``started``, ``invalid`` and ``done`` lines on stdout, each written with
one ``os.write`` shorter than PIPE_BUF. Outcomes travel as files in RESULTS_DIR (the jail's
private directory, which the host keeps outside every workdir) because they can be larger than
a pipe write is atomic.

After its imports the server freezes its objects out of the garbage collector (``gc.freeze``:
forks neither scan nor copy them) and keeps one spare action ready (``spare``: a supervisor and
a worker forked ahead of the request); a request goes to the spare and the next spare is forked
at once, while the action runs. ``spare`` and ``started`` carry the supervisors' pids.

The server stays single-threaded (BLAS and OpenMP threads are pinned to 1 before the imports)
because forking a threaded process is unsafe. It is a child subreaper: a child that is neither
the spare nor a supervisor is killed; when the parent goes away (stdin closes) it kills every
descendant and exits.
"""

from __future__ import annotations

import gc
import json
import os
import select
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from keiri_agent.sandbox import procs
from keiri_agent.sandbox.hugepages import collapse_heap
from keiri_agent.sandbox.isolation import THREAD_ENV_VARS, prepare_isolation
from keiri_agent.sandbox.spare import Spare, fork_spare
from keiri_agent.sandbox.supervisor import (
    SUPERVISOR_FAILED,
    WORKER_PID,
    ActionRequest,
    parse_request,
)

for _var in THREAD_ENV_VARS:
    os.environ[_var] = "1"
# pyarrow's jemalloc starts a background thread when it loads (pandas imports pyarrow);
# forking a threaded process is unsafe, so the server keeps jemalloc single-threaded.
os.environ["JE_ARROW_MALLOC_CONF"] = "background_thread:false"
# jemalloc also reserves address space in large extents, which trips RLIMIT_AS in the worker;
# Arrow buffers use the system allocator instead.
os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"

__all__ = ["WARM_MODULES", "main", "warm_up"]

# Modules the libraries import lazily (file formats, codecs, backends): imported here, once, so
# that an action costs a fork and never an import from disk.
WARM_MODULES = (
    "numpy",
    "pandas",
    "pyarrow",
    "pyarrow.feather",
    "pyarrow.parquet",
    "seaborn",
    "sklearn",
    "openpyxl",
    "matplotlib.backends.backend_agg",
    "matplotlib.backends.backend_svg",
    "matplotlib.backends.backend_pdf",
    "PIL.PngImagePlugin",
    "PIL.JpegImagePlugin",
    "zipfile",
    "gzip",
    "bz2",
    "lzma",
    "tarfile",
    "tempfile",
    "shutil",
    "mimetypes",
    "locale",
    "xml.etree.ElementTree",
    "xml.dom.minidom",
    "html",
    "email.utils",
)
IDLE_POLL_S = 0.5
SPARE_ATTEMPTS = 2
READ_CHUNK = 1 << 20


def warm_up() -> list[str]:
    """Import everything an action may use and set up Japanese charts; returns what failed."""
    import encodings
    import importlib
    import pkgutil

    import matplotlib

    from keiri_agent.sandbox.profiles import PROFILES

    matplotlib.use("Agg")
    import matplotlib.pyplot
    import matplotlib_fontja  # noqa: F401  (registers IPAexGothic and makes it the default)

    allowed = {name for profile in PROFILES.values() for name in profile.allowed_imports}
    codecs = [f"encodings.{info.name}" for info in pkgutil.iter_modules(encodings.__path__)]
    missing = []
    for name in [*WARM_MODULES, *sorted(allowed), *codecs]:
        try:
            importlib.import_module(name)
        except ImportError:  # optional (e.g. Windows-only codecs); the worker cannot do better
            missing.append(name)
    warnings.simplefilter("default")
    return missing


def _send(message: dict[str, Any]) -> None:
    os.write(1, (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))


class _Spares:
    """The server's one spare action (``spare``) and the supervisors of the running ones."""

    def __init__(self, results_dir: Path) -> None:
        self.results_dir = results_dir
        self.pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        self.spare: Spare | None = None
        self.supervisors: set[int] = set()
        self.count = 0
        self.problem: BaseException | None = None  # why the last spare could not be forked
        self.handed: dict[int, ActionRequest] = {}  # supervisor pid -> the request it serves

    def pids(self) -> set[int]:
        return self.supervisors | ({self.spare.pid} if self.spare else set())

    def reaped(self, pid: int, status: int) -> None:
        self.supervisors.discard(pid)
        if self.spare is not None and self.spare.pid == pid:  # died before its request
            os.close(self.spare.request_fd)
            self.spare = None
        request = self.handed.pop(pid, None)
        if request is None or (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            return
        # Killed before it announced an outcome: the caller gets a failure now, not a timeout.
        if request.result_path.exists():
            _send({"type": "done", "id": request.id})
            return
        how = f"シグナル {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "異常終了"
        died = ChildProcessError(
            f"サンドボックスの監視プロセスが結果を返す前に終了しました（{how}）。"
        )
        _fail(request.result_path, request.id, request.profile.name, died)

    def ensure(self) -> None:
        """Fork the next spare if there is none; a failure is reported with the next request."""
        if self.spare is not None:
            return
        self.count += 1
        try:
            self.spare = fork_spare(self.count, self.results_dir, self.pidns_fd)
        except OSError as exc:
            self.problem = exc
            print(f"spare {self.count}: {exc!r}", file=sys.stderr, flush=True)
            return
        self.problem = None
        _send({"type": "spare", "pid": self.spare.pid})

    def start(self, line: bytes) -> None:
        """Hand one request line to the spare (forking one if needed)."""
        received = time.monotonic()
        try:
            data = json.loads(line)
            request = parse_request(line, self.results_dir)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            _send({"type": "invalid", "message": str(exc)[:500]})
            return
        payload = (json.dumps({**data, "received": received}) + "\n").encode("utf-8")
        problem = None
        for _attempt in range(SPARE_ATTEMPTS):  # a spare that died unseen is replaced once
            self.ensure()
            spare, self.spare = self.spare, None
            if spare is None:
                problem = self.problem
                break
            try:
                _write_all(spare.request_fd, payload)
            except OSError as exc:
                problem = exc
                procs.kill_tree(spare.pid)
                continue
            finally:
                os.close(spare.request_fd)
            self.supervisors.add(spare.pid)
            self.handed[spare.pid] = request
            _send({"type": "started", "id": request.id, "pid": spare.pid})
            return
        _fail(request.result_path, request.id, request.profile.name, problem)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fail(result_path: Path, action_id: int, profile: str, exc: BaseException | None) -> None:
    outcome = {
        "success": False,
        "error": {"type": type(exc).__name__, "message": str(exc)[:2000], "traceback": []},
        "profile": profile,
        "warnings": [SUPERVISOR_FAILED],
    }
    result_path.write_text(json.dumps(outcome, ensure_ascii=True), encoding="ascii")
    _send({"type": "done", "id": action_id})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    results_dir = Path(args[0])
    procs.become_subreaper()
    missing = warm_up()
    prepare_isolation(WORKER_PID)
    # Everything imported so far is never collected: forks neither scan nor copy it.
    gc.collect()
    gc.freeze()
    huge = collapse_heap()
    spares = _Spares(results_dir)
    spares.ensure()
    threads = len(os.listdir("/proc/self/task"))
    _send(
        {
            "type": "ready",
            "pid": os.getpid(),
            "threads": threads,
            "missing": missing,
            "huge_pages_bytes": huge,
        }
    )
    pending = b""
    while True:
        for pid, status in procs.reap():
            spares.reaped(pid, status)
        # A child that is neither a supervisor nor the spare was orphaned by one that died.
        for stray in procs.children() - spares.pids():
            procs.kill_tree(stray)
        spares.ensure()
        ready, _, _ = select.select([0], [], [], IDLE_POLL_S)
        if not ready:
            continue
        # Raw reads: a buffered readline could hold a second request select() never sees.
        chunk = os.read(0, READ_CHUNK)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line.strip():
                spares.start(line)
    procs.kill_descendants()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
