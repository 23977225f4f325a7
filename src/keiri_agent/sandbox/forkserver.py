"""The warm fork server: imports the analysis libraries once, then forks one supervisor per
action, so an action costs a fork instead of a second of imports.

Run inside its jail (``jail``) as ``python -m keiri_agent.sandbox.forkserver RESULTS_DIR`` by
``SandboxExecutor`` with a scrubbed environment. Protocol (JSON lines): requests on stdin;
``ready``, ``started`` and ``done`` lines on stdout, each written with one ``os.write`` shorter
than PIPE_BUF. Outcomes travel as files in RESULTS_DIR (the jail's private directory, which the
host keeps outside every workdir) because they can be larger than a pipe write is atomic.

The server stays single-threaded (BLAS and OpenMP threads are pinned to 1 before the imports)
because forking a threaded process is unsafe. It is a child subreaper: whatever escapes a
supervisor lands here and is killed; when the parent goes away (stdin closes) it kills every
descendant and exits.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from keiri_agent.sandbox.isolation import THREAD_ENV_VARS

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


def _request(line: bytes, results_dir: Path) -> Any:
    from keiri_agent.sandbox.profiles import SandboxProfile
    from keiri_agent.sandbox.supervisor import ActionRequest

    received = time.monotonic()
    data = json.loads(line)
    profile = SandboxProfile(**{**data["profile"], "allowed_imports": frozenset()})
    return ActionRequest(
        id=int(data["id"]),
        code=str(data["code"]),
        workdir=Path(data["workdir"]),
        profile=profile,
        inputs={str(k): str(v) for k, v in data.get("inputs", {}).items()},
        result_path=results_dir / f"{int(data['id'])}.json",
        cgroup_note=str(data.get("cgroup_note", "")),
        marks=[("server", received)],
    )


def _start(line: bytes, results_dir: Path) -> int:
    """Fork a supervisor for one request line; returns its pid (or 0 for a bad request)."""
    from keiri_agent.sandbox.supervisor import supervise

    try:
        request = _request(line, results_dir)
    except (ValueError, KeyError, TypeError) as exc:
        _send({"type": "invalid", "message": str(exc)})
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            supervise(request, done_fd=1)
        finally:
            os._exit(0)
    _send({"type": "started", "id": request.id, "pid": pid})
    return pid


def main(argv: list[str] | None = None) -> int:
    from keiri_agent.sandbox import procs

    args = sys.argv[1:] if argv is None else argv
    results_dir = Path(args[0])
    procs.become_subreaper()
    missing = warm_up()
    threads = len(os.listdir("/proc/self/task"))
    _send({"type": "ready", "pid": os.getpid(), "threads": threads, "missing": missing})
    supervisors: set[int] = set()
    pending = b""
    while True:
        for pid, _status in procs.reap():
            supervisors.discard(pid)
        # A child that is not a supervisor was orphaned by one that died: kill it.
        for stray in procs.children() - supervisors:
            procs.kill_tree(stray)
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
                pid = _start(line, results_dir)
                if pid:
                    supervisors.add(pid)
    procs.kill_descendants()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
