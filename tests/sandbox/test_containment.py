"""A corpus of escape attempts (DESIGN.md §5) run through ``SandboxExecutor``, end to end.

Every attempt must end (a generous "did not hang" bound: its limit plus 30 seconds), with
``killed_by`` or ``error`` set, and
leave the world as it was: no new file outside the workdir, no marker file the attack tried to
create, no connection received by a listener this test opened, no secret in the output, no
process left behind, and the test process and the fork server unharmed.

Most attempts run with the ``attack`` profile (see ``conftest.ATTACK``) and with the AST policy
bypassed, so they show that the OS layers hold on their own; those the real ``analysis`` profile
must refuse are run through it as well, and must be refused with a message naming what was
refused. A few attempts slip through the real policy and go to the OS layers as they are.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.sandbox import ANALYSIS, ExecutionOutcome, SandboxExecutor, SandboxProfile
from tests.sandbox.conftest import (
    ATTACK,
    CANARY_ENV_VAR,
    CANARY_TOKEN,
    Listener,
    Outside,
    assert_no_survivors,
    run_unchecked,
)

MiB = 1024 * 1024
LIMIT_GRACE_S = 30.0  # only "did not hang": CI runs this with CPU hogs on every core
# Policy-checked runs of the real profile with small limits, in case a refusal is ever missed.
REAL = ANALYSIS.with_overrides(cpu_seconds=3, wall_seconds=5.0)
SUPERVISOR_FAILED = "サンドボックスの監視プロセスでエラーが発生しました。"
# EPERM/EACCES as Python words them; custom OSErrors built from ctypes.get_errno() included;
# ENOENT where the path does not exist inside the jail at all (outside dirs, host pids).
DENIED = (
    "Operation not permitted",
    "Permission denied",
    "No such file or directory",
    "[Errno 1]",
    "[Errno 13]",
    "[Errno 2]",
)
# resource.setrlimit turns EPERM into this ValueError.
LIMIT_DENIED = ("not allowed to raise maximum limit", *DENIED)
# Blocking attempts need no more than this to show that the wall clock ends them.
SHORT_WALL = (("wall_seconds", 3.0),)
# Entries a workdir may hold after a "many files" attempt: the action's tmpfs has max_files
# inodes (plus the few the sandbox itself uses), the kernel refuses the next one.
ENTRY_BOUND = ATTACK.max_files + 16
# The "many medium files" attempt: each file under fsize_bytes, together far over the total.
MANY_MEDIUM_COUNT, MANY_MEDIUM_SIZE = 1_000, 900_000
MANY_MEDIUM_BYTES = MANY_MEDIUM_COUNT * MANY_MEDIUM_SIZE
CLONE_SYSCALL = {"x86_64": 56, "aarch64": 220}.get(platform.machine(), -1)

Check = Callable[[ExecutionOutcome, "Context"], None]


@dataclass
class Context:
    """What one attempt may refer to (``@NAME@`` placeholders) and what it must not change."""

    workdir: Path
    outside: Outside
    listener: Listener
    executor: SandboxExecutor
    marker: Path
    values: dict[str, str] = field(default_factory=dict)

    def render(self, code: str) -> str:
        text = textwrap.dedent(code).strip() + "\n"
        for name, value in self.values.items():
            text = text.replace(f"@{name}@", value)
        assert "@" not in text.replace("@property", ""), f"unfilled placeholder in {text!r}"
        return text


@dataclass(frozen=True)
class Attempt:
    """One escape attempt.

    ``expect`` holds the acceptable ``killed_by`` values; ``None`` there means "stopped by an
    error, not by a limit", ``"ok"`` that the code may finish normally (its harm is checked by
    the containment assertions). ``limit`` names the profile limit the run must end within.
    ``refused`` lists what the real ``analysis`` policy's message must name; an empty tuple means
    the real policy lets this code through (``real=True`` then runs it through that profile).
    """

    id: str
    code: str
    expect: frozenset[str | None]
    limit: str = "wall"
    message: tuple[str, ...] = ()  # one of these must be in the error message
    refused: tuple[str, ...] = ()
    real: bool = False  # run through the real analysis profile with the policy active
    check: Check | None = None
    limits: tuple[tuple[str, Any], ...] = ()  # profile fields changed for this attempt only

    def profile(self) -> SandboxProfile:
        base = REAL if self.real else ATTACK
        return dataclasses.replace(base, **dict(self.limits)) if self.limits else base


def attempt(
    id: str,
    code: str,
    *expect: str | None,
    **options: Any,
) -> Attempt:
    return Attempt(id=id, code=code, expect=frozenset(expect or (None,)), **options)


# ---- per-attempt checks -------------------------------------------------------------------------


def _output_capped(stream: str) -> Check:
    def check(outcome: ExecutionOutcome, _ctx: Context) -> None:
        text = outcome.stdout if stream == "stdout" else outcome.stderr
        assert getattr(outcome, f"{stream}_truncated")
        assert 0 < len(text.encode("utf-8")) <= ATTACK.output_bytes

    return check


def _files_within_fsize(outcome: ExecutionOutcome, ctx: Context) -> None:
    sizes = [p.stat().st_size for p in ctx.workdir.rglob("*") if p.is_file()]
    assert sizes, "the attempt wrote nothing at all"
    assert max(sizes) <= ATTACK.fsize_bytes


def _file_count_bounded(outcome: ExecutionOutcome, ctx: Context) -> None:
    count = sum(1 for p in ctx.workdir.rglob("*") if not p.is_dir())
    assert 0 < count <= ENTRY_BOUND, count


def _entries_bounded(outcome: ExecutionOutcome, ctx: Context) -> None:
    # Directories are file system entries too (each one a disk block): max_files must bound them.
    count = sum(1 for _ in ctx.workdir.rglob("*"))
    assert count <= ENTRY_BOUND, f"{count} entries for max_files={ATTACK.max_files}"


def _total_bytes_bounded(outcome: ExecutionOutcome, ctx: Context) -> None:
    # The action's writes go to a tmpfs of max_total_bytes: the kernel refuses the byte after.
    total = sum(p.stat().st_size for p in ctx.workdir.rglob("*") if p.is_file())
    assert 0 < total <= ATTACK.max_total_bytes, total


def _no_link_left(name: str) -> Check:
    def check(outcome: ExecutionOutcome, ctx: Context) -> None:
        assert not (ctx.workdir / name).is_symlink()
        assert name not in outcome.files_created

    return check


def _stdout_has(text: str) -> Check:
    def check(outcome: ExecutionOutcome, _ctx: Context) -> None:
        assert text in outcome.stdout, outcome.stdout[-500:]

    return check


def _server_unharmed(outcome: ExecutionOutcome, ctx: Context) -> None:
    assert ctx.executor.server_pid == int(ctx.values["SERVER_PID"])


def _quick(seconds: float) -> Check:
    def check(outcome: ExecutionOutcome, _ctx: Context) -> None:
        assert outcome.duration_s < seconds, outcome.duration_s

    return check


# ---- the corpus ---------------------------------------------------------------------------------

CORPUS: list[Attempt] = [
    # -- time: busy loops, sleeps, blocking reads
    # On a loaded machine the wall clock may run out before the CPU seconds do: either stops it.
    attempt("busy-loop", "while True:\n    pass", "cpu", "wall", limit="cpu"),
    attempt(
        "busy-loop-ignoring-sigxcpu",
        """
        import signal
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        while True:
            pass
        """,
        "wall",
        "cpu",
        refused=("signal",),
    ),
    attempt("sleep", "import time\ntime.sleep(60)", "wall", limits=SHORT_WALL),
    attempt(
        "blocking-pipe-read",
        "import os\nr, w = os.pipe()\nos.read(r, 1)",
        "wall",
        limits=SHORT_WALL,
        refused=("'os'",),
    ),
    attempt(
        "deadlock",
        "import threading\nlock = threading.Lock()\nlock.acquire()\nlock.acquire()",
        "wall",
        limits=SHORT_WALL,
        refused=("threading",),
    ),
    attempt(
        "blocking-accept",
        """
        import socket
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.accept()
        """,
        message=DENIED,
        refused=("socket",),
    ),
    # -- processes
    attempt(
        "fork-bomb",
        "import os\nwhile True:\n    os.fork()",
        message=DENIED,
        refused=("'os'", "fork"),
    ),
    attempt(
        "libc-fork",
        """
        import ctypes
        import time
        libc = ctypes.CDLL(None, use_errno=True)
        pid = libc.fork()
        if pid == 0:
            time.sleep(600)
        if pid < 0:
            raise OSError(ctypes.get_errno(), "fork failed")
        """,
        message=DENIED,
        refused=("ctypes",),
    ),
    attempt(
        "raw-clone-syscall",
        f"""
        import ctypes
        import time
        libc = ctypes.CDLL(None, use_errno=True)
        pid = libc.syscall({CLONE_SYSCALL}, 17, 0, 0, 0, 0)  # clone(SIGCHLD)
        if pid == 0:
            time.sleep(600)
        if pid < 0:
            raise OSError(ctypes.get_errno(), "clone failed")
        """,
        message=DENIED,
        refused=("ctypes",),
    ),
    attempt(
        "multiprocessing-process",
        """
        import multiprocessing
        child = multiprocessing.Process(target=print, args=("child",))
        child.start()
        child.join()
        """,
        # Where the stdlib is unreadable by the sandbox uid (a Python under /root), the fork
        # start method's module cannot even be imported; elsewhere fork() itself is denied.
        message=(*DENIED, "No module named 'multiprocessing.popen_fork'"),
        refused=("multiprocessing",),
    ),
    attempt(
        "multiprocessing-pool",
        """
        from multiprocessing import Pool
        with Pool(2) as pool:
            print(pool.map(abs, [-1, -2]))
        """,
        message=DENIED,
        refused=("multiprocessing",),
    ),
    attempt(
        "process-pool-executor",
        """
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(2) as pool:
            print(list(pool.map(abs, [-1, -2])))
        """,
        refused=("concurrent.futures",),
    ),
    attempt(
        "subprocess-run",
        'import subprocess\nsubprocess.run(["touch", "@MARKER@"])',
        message=DENIED,
        refused=("subprocess",),
    ),
    attempt(
        "os-system",
        """
        import os
        status = os.system("touch @MARKER@")
        if status != 0:
            raise OSError(status, "os.system failed")
        """,
        refused=("'os'", "system"),
    ),
    attempt(
        "os-posix-spawn",
        'import os\nos.posix_spawn("/usr/bin/touch", ["touch", "@MARKER@"], {})',
        message=DENIED,
        refused=("posix_spawn",),
    ),
    attempt(
        "os-execv",
        'import os\nos.execv("/usr/bin/touch", ["touch", "@MARKER@"])',
        message=DENIED,
        refused=("execv",),
    ),
    attempt(
        "setsid-double-fork",
        """
        import os
        import time
        if os.fork() == 0:
            os.setsid()
            if os.fork() > 0:
                os._exit(0)
            time.sleep(600)
        """,
        message=DENIED,
        refused=("fork",),
    ),
    attempt(
        "libc-system",
        """
        import ctypes
        status = ctypes.CDLL(None).system(b"touch @MARKER@")
        if status != 0:
            raise OSError(status, "system() failed")
        """,
        refused=("ctypes",),
    ),
    attempt(
        "thread-bomb",
        """
        import threading
        import time
        threads = []
        while True:
            thread = threading.Thread(target=time.sleep, args=(600,), daemon=True)
            thread.start()
            threads.append(thread)
        """,
        None,
        "memory",
        message=("can't start new thread",),
    ),
    attempt(
        "non-daemon-thread-outlives-main",
        """
        import threading
        import time
        threading.Thread(target=time.sleep, args=(600,)).start()
        print("main done")
        """,
        "ok",
        None,
        check=_quick(2.0),
    ),
    # -- memory
    attempt("bytearray-bomb", "x = bytearray(10**10)", "memory", real=True),
    attempt(
        "gradual-growth",
        "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 2**20))",
        "memory",
        "wall",  # on a loaded machine the wall clock may end it before the memory is reached
    ),
    attempt("string-doubling", 's = "x"\nwhile True:\n    s += s', "memory"),
    attempt("numpy-huge", "import numpy as np\na = np.ones(10**10)", "memory", real=True),
    attempt(
        "mmap-huge-anonymous",
        "import mmap\nm = mmap.mmap(-1, 64 * 2**30)\nm[-1] = 1",
        None,
        "memory",
        refused=("mmap",),
    ),
    # -- output
    attempt(
        "stdout-flood",
        'while True:\n    print("A" * 1000)',
        "output",
        check=_output_capped("stdout"),
    ),
    attempt(
        "stderr-flood",
        'import sys\nwhile True:\n    sys.stderr.write("E" * 1000)',
        "output",
        check=_output_capped("stderr"),
    ),
    attempt(
        "one-giant-print",
        'print("x" * (50 * 2**20))',
        "output",
        check=_output_capped("stdout"),
    ),
    # -- files in the workdir
    attempt(
        "one-huge-file",
        """
        with open("big.bin", "wb") as f:
            while True:
                f.write(b"0" * 2**20)
        """,
        "fsize",
        check=_files_within_fsize,
    ),
    attempt(
        "sparse-huge-file",
        'with open("sparse.bin", "wb") as f:\n    f.seek(10 * 2**30)\n    f.write(b"x")',
        "fsize",
    ),
    attempt(
        "many-files",
        """
        for i in range(1_000_000):
            with open(f"f{i}.txt", "w") as f:
                f.write("x")
        """,
        "fsize",
        check=_file_count_bounded,
    ),
    attempt(
        "many-medium-files",
        """
        for i in range(@MANY_MEDIUM_COUNT@):
            with open(f"c{i}.bin", "wb") as f:
                f.write(b"0" * @MANY_MEDIUM_SIZE@)
        """,
        "fsize",
        check=_total_bytes_bounded,
    ),
    attempt(
        "many-directories",
        "import os\nfor i in range(10_000_000):\n    os.mkdir(f'd{i}')",
        "fsize",
        refused=("'os'",),
        check=_entries_bounded,
        limits=(("cpu_seconds", 1),),  # deleting what it made is slow: keep it small
    ),
    # -- files outside the workdir
    attempt(
        "write-absolute-tmp",
        'open("@MARKER@", "w").write("x")',
        message=DENIED,
        real=True,
    ),
    attempt(
        "write-dotdot",
        'open("../@MARKER_NAME@", "w").write("x")',
        message=DENIED,
        real=True,
    ),
    attempt(
        "write-into-outside",
        'open("@OUTSIDE@/new.txt", "w").write("x")',
        message=DENIED,
        real=True,
    ),
    attempt(
        "write-dev-shm",
        'open("/dev/shm/@MARKER_NAME@", "w").write("x")',
        message=DENIED,
        refused=("/dev/shm",),
    ),
    attempt(
        "symlink-dir-then-write",
        """
        import os
        os.symlink("@OUTSIDE@", "link")
        open("link/new.txt", "w").write("x")
        """,
        message=DENIED,
        check=_no_link_left("link"),
    ),
    attempt(
        "symlink-file-then-read",
        """
        import os
        os.symlink("@SECRET@", "stolen.txt")
        print(open("stolen.txt").read())
        """,
        message=DENIED,
        check=_no_link_left("stolen.txt"),
    ),
    attempt(
        "symlink-etc-passwd-then-read",
        """
        import os
        os.symlink("/etc/passwd", "passwd.txt")
        print(open("passwd.txt").read())
        """,
        message=DENIED,
        check=_no_link_left("passwd.txt"),
    ),
    attempt(
        "hard-link-canary",
        'import os\nos.link("@SECRET@", "linked.txt")\nprint(open("linked.txt").read())',
        message=DENIED,
    ),
    attempt(
        "rename-canary-in",
        'import os\nos.rename("@SECRET@", "moved.txt")',
        message=(*DENIED, "Invalid cross-device link"),
    ),
    attempt(
        "chmod-canary",
        'import os\nos.chmod("@SECRET@", 0o777)',
        message=DENIED,
        refused=("'os'",),
    ),
    attempt("read-etc-passwd", 'print(open("/etc/passwd").read())', refused=("/etc/passwd",)),
    attempt(
        "read-etc-passwd-built-path",
        'print(open("/e" + "tc/passwd").read())',
        message=DENIED,
        real=True,
    ),
    attempt("read-etc-shadow", 'print(open("/etc/shadow").read())', refused=("/etc/shadow",)),
    attempt(
        "read-outside-canary",
        'print(open("@SECRET@").read())',
        message=DENIED,
        real=True,
    ),
    attempt(
        "list-outside-and-root",
        'import os\nprint(os.listdir("@OUTSIDE@"), os.listdir("/root"))',
        message=DENIED,
    ),
    attempt(
        "read-server-results",
        """
        print(open("@RESULTS_DIR@/server.log").read())
        """,
        message=DENIED,
        real=True,
    ),
    attempt(
        "forge-next-result",
        'open("@RESULTS_DIR@/999999.json", "w").write("{}")',
        message=DENIED,
        real=True,
    ),
    # -- the parent's /proc entries and secrets
    attempt(
        "proc-ppid-environ",
        'import os\nprint(open(f"/proc/{os.getppid()}/environ", "rb").read())',
        message=DENIED,
        refused=("/proc/",),
    ),
    attempt(
        "proc-1-environ",
        'print(open("/proc/1/environ", "rb").read())',
        message=DENIED,
        refused=("/proc/1/environ",),
    ),
    attempt(
        "proc-pytest-environ",
        'print(open("/proc/@PYTEST_PID@/environ", "rb").read())',
        message=DENIED,
        refused=("/proc/",),
    ),
    attempt(
        "proc-server-environ",
        'print(open("/proc/@SERVER_PID@/environ", "rb").read())',
        message=DENIED,
        refused=("/proc/",),
    ),
    attempt(
        "proc-ppid-fds",
        'import os\nprint(os.listdir(f"/proc/{os.getppid()}/fd"))',
        message=DENIED,
        refused=("/proc/",),
    ),
    attempt(
        "proc-ppid-mem",
        'import os\nprint(open(f"/proc/{os.getppid()}/mem", "rb").read(16))',
        message=DENIED,
        refused=("/proc/",),
    ),
    attempt(
        "environment-has-no-secret",
        """
        import os
        print(dict(os.environ))
        print(open("/proc/self/environ", "rb").read())
        """,
        "ok",
        None,  # /proc/self/environ is root's once the worker is not dumpable
        refused=("/proc/self/environ",),
        check=_stdout_has("PATH"),
    ),
    # -- network
    attempt(
        "tcp-connect-loopback",
        'import socket\nsocket.create_connection(("127.0.0.1", @TCP_PORT@), timeout=2)',
        message=DENIED,
        refused=("socket",),
    ),
    attempt(
        "udp-sendto-loopback",
        """
        import socket
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"hello", ("127.0.0.1", @UDP_PORT@))
        """,
        message=DENIED,
        refused=("socket",),
    ),
    attempt(
        "unix-socket-connect",
        """
        import socket
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("@UNIX_PATH@")
        """,
        message=DENIED,
        refused=("socket",),
    ),
    attempt(
        "urllib-urlopen",
        'import urllib.request\nurllib.request.urlopen("http://127.0.0.1:@TCP_PORT@/", timeout=2)',
        refused=("urllib.request", "urlopen"),
    ),
    attempt(
        "pandas-read-csv-built-url",
        """
        import pandas as pd
        host = "127.0.0.1:@TCP_PORT@"
        print(pd.read_csv("http://" + host + "/x.csv"))
        """,
        real=True,
    ),
    # -- the parent and the server
    attempt(
        "kill-parent",
        "import os\nimport signal\nos.kill(os.getppid(), signal.SIGKILL)",
        message=DENIED,
        refused=("'os'",),
    ),
    attempt(
        "sigterm-pytest",
        "import os\nimport signal\nos.kill(@PYTEST_PID@, signal.SIGTERM)",
        message=DENIED,
        refused=("'os'",),
    ),
    attempt(
        "kill-server",
        "import os\nimport signal\nos.kill(@SERVER_PID@, signal.SIGKILL)",
        message=DENIED,
        refused=("'os'",),
        check=_server_unharmed,
    ),
    attempt(
        "kill-everything",
        "import os\nimport signal\nos.kill(-1, signal.SIGKILL)",
        message=DENIED,
        refused=("'os'",),
        check=_server_unharmed,
    ),
    attempt(
        "kill-parent-group",
        "import os\nimport signal\nos.killpg(os.getpgid(os.getppid()), signal.SIGKILL)",
        # The parent (the action's init) has no process group inside the action's PID
        # namespace: getpgid gives 0, and killpg(0) hits the worker's own group only.
        message=(*DENIED, "SIGKILL"),
        refused=("'os'",),
    ),
    attempt(
        # Allowed (a process may signal itself), but it is no memory limit: the outcome must
        # not send the agent off to save memory.
        "self-sigkill",
        "import os\nimport signal\nos.kill(os.getpid(), signal.SIGKILL)",
        message=("SIGKILL",),
        refused=("'os'",),
    ),
    attempt(
        "ptrace-parent",
        """
        import ctypes
        import os
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.ptrace(16, os.getppid(), 0, 0) == -1:  # PTRACE_ATTACH
            raise OSError(ctypes.get_errno(), "ptrace refused")
        """,
        message=DENIED,
        refused=("ctypes",),
    ),
    # -- raising one's own limits, exhausting descriptors
    attempt(
        "raise-cpu-limit",
        """
        import resource
        inf = resource.RLIM_INFINITY
        resource.setrlimit(resource.RLIMIT_CPU, (inf, inf))
        while True:
            pass
        """,
        message=LIMIT_DENIED,
        refused=("resource",),
    ),
    attempt(
        "raise-memory-limit",
        """
        import resource
        inf = resource.RLIM_INFINITY
        resource.setrlimit(resource.RLIMIT_AS, (inf, inf))
        x = bytearray(10**10)
        """,
        message=LIMIT_DENIED,
        refused=("resource",),
    ),
    attempt(
        "raise-nofile-to-hard",
        """
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        """,
        message=LIMIT_DENIED,
        refused=("resource",),
    ),
    attempt(
        "fd-exhaustion",
        'files = []\nwhile True:\n    files.append(open("/dev/null"))',
        message=("Too many open files",),
        refused=("/dev/null",),
    ),
    # -- subprocesses started by libraries
    attempt(
        "matplotlib-usetex",
        """
        from pathlib import Path
        import matplotlib.pyplot as plt
        from matplotlib import texmanager
        # The warm server computed its cache dir under root's home; point it at the workdir
        # so that matplotlib really gets as far as starting latex.
        texmanager.TexManager._cache_dir = Path("tex.cache").resolve()
        plt.rcParams.update({"text.usetex": True})
        plt.plot([1, 2], [3, 4])
        plt.title("$x^2$")
        plt.savefig("tex.png")
        """,
        message=(*DENIED, "latex could not be found"),
        refused=("text.usetex", "pathlib", "texmanager", "_cache_dir"),
    ),
    attempt(
        "matplotlib-usetex-built-key",
        """
        import matplotlib.pyplot as plt
        plt.rcParams.update({"text." + "usetex": True})
        plt.plot([1, 2], [3, 4])
        plt.title("$x^2$")
        plt.savefig("tex.png")
        """,
        real=True,
    ),
    attempt(
        "matplotlib-ffmpeg-writer",
        """
        import matplotlib
        import matplotlib.pyplot as plt
        from matplotlib import animation
        # A stand-in ffmpeg that would create the marker if it ever ran.
        matplotlib.rcParams["animation.ffmpeg_path"] = "@FAKE_TOOL@"
        fig, ax = plt.subplots()
        (line,) = ax.plot([], [])
        def update(i):
            line.set_data(range(i), range(i))
            return (line,)
        anim = animation.FuncAnimation(fig, update, frames=3)
        anim.save("movie.mp4", writer=animation.FFMpegWriter(fps=1))
        """,
        message=DENIED,
        refused=("animation",),
    ),
    attempt(
        "matplotlib-executable-probe",
        'import matplotlib\nprint(matplotlib._get_executable_info("gs"))',
        refused=("_get_executable_info",),
    ),
    attempt(
        "pandas-locale-probe",
        """
        import pandas as pd
        locales = pd._config.localization.get_locales()
        if locales is None:
            raise OSError("locale -a could not run")
        print(locales)
        """,
        refused=("_config",),
    ),
    attempt(
        "numpy-lscpu-probe",
        "import numpy as np\nprint(np.testing.check_support_sve())",
        "ok",
        None,
        refused=("numpy.testing",),
    ),
    attempt(
        "pandas-clipboard",
        "import pandas as pd\nprint(pd.read_clipboard())",
        refused=("read_clipboard",),
    ),
]

# Refused by the real policy before anything runs (each names the refused construct).
POLICY_ONLY: list[tuple[str, str, tuple[str, ...]]] = [
    ("import-ctypes", "import ctypes", ("ctypes",)),
    ("import-os", "import os", ("'os'",)),
    ("import-subprocess", "import subprocess", ("subprocess",)),
    ("import-pickle", "import pickle", ("pickle",)),
    ("import-socket", "import socket", ("socket",)),
    ("subclasses-walk", "print(().__class__.__bases__[0].__subclasses__())", ("__class__",)),
    ("format-string-dunder", "print('{0.__class__}'.format(1))", ("{0.__class__}",)),
    (
        "np-load-allow-pickle",
        'import numpy as np\nnp.load("x.npy", allow_pickle=True)',
        ("allow_pickle",),
    ),
    ("pd-read-pickle", 'import pandas as pd\npd.read_pickle("x.pkl")', ("read_pickle",)),
    ("dunder-import", '__import__("os").system("id")', ("__import__",)),
    ("computed-getattr", 'import numpy as np\ngetattr(np, "o" + "s")', ("getattr",)),
    ("numpy-os-pivot", 'import numpy as np\nnp.os.system("id")', ("'os'",)),
    (
        "read-csv-url-literal",
        'import pandas as pd\npd.read_csv("http://127.0.0.1:9/x.csv")',
        ("http://127.0.0.1:9/x.csv",),
    ),
    ("exec-built-string", 'exec("imp" + "ort os")', ("exec",)),
]


def _ids(attempts: list[Attempt]) -> list[str]:
    return [a.id for a in attempts]


@pytest.fixture
def context(
    workdir: Path, outside: Outside, listener: Listener, executor: SandboxExecutor
) -> Iterator[Context]:
    marker = Path(f"/tmp/keiri-sbx-marker-{os.urandom(8).hex()}")
    # An executable outside the workdir that leaves the marker behind if it is ever run.
    tool = marker.with_name(marker.name + "-tool.sh")
    tool.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    tool.chmod(0o755)
    executor.run("x = 1", workdir=workdir, profile=ATTACK)  # the workdir's jail is up
    server = executor._last  # the jail's private directory has no public accessor
    assert server is not None
    ctx = Context(
        workdir=workdir,
        outside=outside,
        listener=listener,
        executor=executor,
        marker=marker,
        values={
            "MARKER": str(marker),
            "MARKER_NAME": marker.name,
            "OUTSIDE": str(outside.path),
            "SECRET": str(outside.secret),
            "TCP_PORT": str(listener.tcp_port),
            "UDP_PORT": str(listener.udp_port),
            "UNIX_PATH": str(listener.unix_path),
            "PYTEST_PID": str(os.getpid()),
            "SERVER_PID": str(executor.server_pid),
            "RESULTS_DIR": str(server.host_dir),
            "FAKE_TOOL": str(tool),
            "MANY_MEDIUM_COUNT": str(MANY_MEDIUM_COUNT),
            "MANY_MEDIUM_SIZE": str(MANY_MEDIUM_SIZE),
        },
    )
    yield ctx
    for path in (marker, tool, Path("/dev/shm", marker.name)):
        if path.exists():
            path.unlink()


def _assert_contained(
    outcome: ExecutionOutcome,
    ctx: Context,
    before: dict[str, tuple[int, int, int]],
    sigterm_hits: list[int],
) -> None:
    """The world is as it was: nothing outside, no marker, no connection, no secret, no process."""
    assert_no_survivors(ctx.executor)
    assert ctx.outside.entries() == before, "something changed outside the workdir"
    assert ctx.outside.secret.read_text(encoding="utf-8") == f"{ctx.outside.token}\n"
    assert not ctx.marker.exists(), "the attempt created its marker outside the workdir"
    assert not Path("/dev/shm", ctx.marker.name).exists()
    assert ctx.listener.counts == {"tcp": 0, "udp": 0, "unix": 0}
    assert sigterm_hits == []
    assert ctx.executor.server_pid == int(ctx.values["SERVER_PID"]), "the fork server died"
    shown = outcome.model_dump_json()
    for secret in (ctx.outside.token, CANARY_TOKEN, "root:x:0:0"):
        assert secret not in shown, f"{secret!r} leaked into the outcome"
    for path in ctx.workdir.rglob("*"):  # no way out is left behind for the next reader
        if path.is_symlink():
            assert Path(os.path.realpath(path)).is_relative_to(ctx.workdir.resolve()), path
    assert not (ctx.workdir / ".sandbox").exists(), "the per-action sandbox dir was left behind"
    # Only the supervisor's copy-out writes the workdir: everything there is the caller's.
    owners = {p.lstat().st_uid for p in [ctx.workdir, *ctx.workdir.rglob("*")]}
    assert owners == {os.geteuid()}, f"workdir left owned by uids {owners}"


def _assert_stopped(outcome: ExecutionOutcome, case: Attempt) -> None:
    assert SUPERVISOR_FAILED not in outcome.warnings, outcome
    if "ok" in case.expect and outcome.success:
        return
    assert not outcome.success, f"the attempt succeeded: {outcome.stdout[-500:]}"
    assert outcome.error is not None
    assert outcome.killed_by in case.expect, (outcome.killed_by, outcome.error)
    if outcome.killed_by is None and case.message:
        assert any(m in outcome.error.message for m in case.message), outcome.error


def _time_limit(profile: SandboxProfile, case: Attempt) -> float:
    base = profile.cpu_seconds if case.limit == "cpu" else profile.wall_seconds
    return base + LIMIT_GRACE_S


@pytest.mark.parametrize("case", CORPUS, ids=_ids(CORPUS))
def test_attempt_is_contained(case: Attempt, context: Context, sigterm_hits: list[int]) -> None:
    code = context.render(case.code)
    before = context.outside.entries()
    profile = case.profile()
    started = time.monotonic()
    if case.real:  # the real policy lets this through: the OS layers must hold
        outcome = context.executor.run(code, workdir=context.workdir, profile=profile)
    else:
        outcome = run_unchecked(context.executor, code, workdir=context.workdir, profile=profile)
    elapsed = time.monotonic() - started
    assert outcome.profile == profile.name
    _assert_stopped(outcome, case)
    assert elapsed <= _time_limit(profile, case), f"took {elapsed:.2f} s"
    if case.check is not None:
        case.check(outcome, context)
    _assert_contained(outcome, context, before, sigterm_hits)


REFUSED = [a for a in CORPUS if a.refused]


@pytest.mark.parametrize("case", REFUSED, ids=_ids(REFUSED))
def test_attempt_is_refused_by_the_real_policy(case: Attempt, context: Context) -> None:
    started = time.monotonic()
    outcome = context.executor.run(context.render(case.code), workdir=context.workdir, profile=REAL)
    assert time.monotonic() - started < 30  # refused by the policy, not stopped by a limit
    assert outcome.killed_by == "policy"
    assert outcome.error is not None
    assert outcome.error.type == "PolicyViolation"
    assert "許可されていません" in outcome.error.message or "使えません" in outcome.error.message
    named = [name for name in case.refused if name in outcome.error.message]
    assert named, f"none of {case.refused} named in: {outcome.error.message}"
    assert outcome.error.line is not None
    assert outcome.error.traceback
    assert not any(context.workdir.iterdir()), "a refused action touched the workdir"


@pytest.mark.parametrize(
    ("code", "names"), [(c, n) for _, c, n in POLICY_ONLY], ids=[i for i, _, _ in POLICY_ONLY]
)
def test_policy_refusals_name_the_construct(
    code: str, names: tuple[str, ...], context: Context
) -> None:
    outcome = context.executor.run(code, workdir=context.workdir, profile="analysis")
    assert not outcome.success
    assert outcome.killed_by == "policy"
    assert outcome.error is not None
    assert all(name in outcome.error.message for name in names), outcome.error.message
    assert outcome.error.traceback[0].startswith(f"{outcome.error.line} 行目: ")
    assert outcome.duration_s == 0.0
    assert outcome.layers == []


def test_canaries_reach_the_fork_server(executor: SandboxExecutor) -> None:
    """The secret checks are not vacuous: the server's environment block holds the canary."""
    server = executor.server_pid
    assert server is not None
    environ = Path(f"/proc/{server}/environ").read_bytes().decode()
    assert CANARY_TOKEN in environ  # through PYTHONPATH, which the executor passes on
    assert f"{CANARY_ENV_VAR}=" not in environ  # everything else stays behind


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) + len(POLICY_ONLY) >= 40
    assert len({a.id for a in CORPUS}) == len(CORPUS)


def test_state_does_not_carry_between_actions(context: Context, sigterm_hits: list[int]) -> None:
    """A second action in the same workdir sees fresh modules and no leftover sandbox dir."""
    first = run_unchecked(  # tempfile is not on the allowlist: skip the policy for this step
        context.executor,
        textwrap.dedent(
            """
            import tempfile
            import pandas as pd
            pd.some_state = 42
            with tempfile.NamedTemporaryFile("w", delete=False, suffix=".txt") as f:
                f.write("left behind")
            print(f.name)
            """
        ),
        workdir=context.workdir,
        profile=ATTACK,
    )
    assert first.success, first.error
    temp_file = Path(first.stdout.strip())
    assert temp_file.is_relative_to(context.workdir / ".sandbox" / "tmp")
    assert not temp_file.exists()
    assert not (context.workdir / ".sandbox").exists()
    second = context.executor.run(
        'import pandas as pd\nprint(hasattr(pd, "some_state"))',
        workdir=context.workdir,
        profile=REAL,
    )
    assert second.success, second.error
    assert second.stdout == "False\n"
    _assert_contained(second, context, context.outside.entries(), sigterm_hits)


def test_planted_sandbox_symlink_cannot_redirect_the_next_action(
    context: Context, sigterm_hits: list[int]
) -> None:
    """An action replaces ``.sandbox`` by a symlink to outside; the next one must not follow it.

    The supervisor and the executor (root) create ``.sandbox/{home,tmp,mpl,inputs}`` and write
    the input DataFrames there before the worker runs.
    """
    import pandas as pd

    before = context.outside.entries()
    plant = run_unchecked(
        context.executor,
        context.render(
            """
            import os
            import shutil
            shutil.rmtree(".sandbox")
            os.symlink("@OUTSIDE@", ".sandbox")
            """
        ),
        workdir=context.workdir,
        profile=ATTACK,
    )
    assert plant.success, plant.error
    second = context.executor.run(
        "print(len(df))",
        workdir=context.workdir,
        profile=REAL,
        inputs={"df": pd.DataFrame({"a": [1, 2, 3]})},
    )
    assert context.outside.entries() == before, "root wrote through the planted symlink"
    assert second.success, second.error
    assert second.stdout.strip() == "3"
    _assert_contained(second, context, before, sigterm_hits)


def test_a_normal_action_still_runs_after_the_corpus(
    executor: SandboxExecutor, workdir: Path
) -> None:
    outcome = executor.run("print(1)", workdir=workdir, profile="analysis")
    assert outcome.success, outcome.error
    assert outcome.stdout == "1\n"
    assert_no_survivors(executor)
