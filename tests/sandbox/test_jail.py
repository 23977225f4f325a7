"""The jail's properties (issue 17), each class attacked three ways, end to end through the executor.

Classes: root acting on paths outside the sandbox; kernel objects outliving the action; reaching
other processes; inexact limits; two actions in one workdir; where Python is installed. Every
attempt runs with the AST policy bypassed (``run_unchecked``): the jail must hold on its own.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from keiri_agent.errors import BlockError
from keiri_agent.sandbox import ExecutionOutcome, SandboxExecutor
from keiri_agent.sandbox.workdir_lock import workdir_lock
from tests.sandbox.conftest import ATTACK, MiB, Outside, assert_no_survivors, run_unchecked


def _run(executor: SandboxExecutor, code: str, workdir: Path, **limits: object) -> ExecutionOutcome:
    profile = dataclasses.replace(ATTACK, **limits) if limits else ATTACK
    outcome = run_unchecked(executor, textwrap.dedent(code), workdir=workdir, profile=profile)
    assert_no_survivors(executor)
    return outcome


# ---- root acting on paths outside the sandbox -------------------------------------------------


def test_a_symlink_to_outside_is_never_followed_by_the_copy_out(
    executor: SandboxExecutor, workdir: Path, outside: Outside
) -> None:
    before = outside.entries()
    outcome = _run(
        executor,
        f"""
        import os
        os.symlink({str(outside.path)!r}, "link")
        os.symlink({str(outside.secret)!r}, "secret-link.txt")
        os.mkdir("sub")
        os.symlink("/etc", "sub/etc")
        """,
        workdir,
    )
    assert outcome.success, outcome.error
    assert outside.entries() == before
    assert not any(p.is_symlink() for p in workdir.rglob("*"))
    assert outcome.files_created == []
    assert sum("シンボリックリンク" in w for w in outcome.warnings) == 3, outcome.warnings


def test_pre_existing_files_keep_their_owner_mode_and_content(
    executor: SandboxExecutor, workdir: Path
) -> None:
    kept = workdir / "kept.txt"
    kept.write_text("original")
    kept.chmod(0o4750)  # setuid bit and a mode the old recursive chown used to clear
    rewritten = workdir / "rewritten.txt"
    rewritten.write_text("old")
    outcome = _run(
        executor,
        """
        open("rewritten.txt", "w").write("new")
        print(open("kept.txt").read())
        import os
        os.remove("kept.txt")  # a deletion inside the action's overlay only
        """,
        workdir,
    )
    assert outcome.success, outcome.error
    assert outcome.stdout == "original\n"
    assert kept.read_text() == "original"
    assert kept.stat().st_mode & 0o7777 == 0o4750
    assert kept.stat().st_uid == os.geteuid()
    assert rewritten.read_text() == "new"
    assert outcome.files_created == ["rewritten.txt"]
    assert any("削除は反映しません" in w for w in outcome.warnings)


def test_fifos_and_undecodable_names_are_never_copied(
    executor: SandboxExecutor, workdir: Path
) -> None:
    outcome = _run(
        executor,
        """
        import os
        try:
            os.mkfifo("pipe")  # seccomp denies mknod; were it allowed, copy-out skips it
        except PermissionError:
            pass
        open(b"bad-\\xff.txt", "w").write("x")
        open("good.txt", "w").write("ok")
        """,
        workdir,
    )
    assert outcome.success, outcome.error
    assert outcome.files_created == ["good.txt"]
    assert sorted(os.listdir(workdir)) == ["good.txt"]
    assert any("UTF-8" in w and "\\xff" in w for w in outcome.warnings), outcome.warnings


# ---- kernel objects that outlive the action ----------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.shmget(0x4B45, 64 * 2**20, 0o1666)\n"
        "assert r != -1, ctypes.get_errno()",
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.msgget(0x4B46, 0o1666)\nassert r != -1, ctypes.get_errno()",
        "import os\nfd = os.memfd_create('keep')\nos.ftruncate(fd, 2**30)",
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "fd = libc.inotify_init1(0)\nassert fd != -1, ctypes.get_errno()\n"
        "assert libc.inotify_add_watch(fd, b'/usr', 0xFFF) != -1, ctypes.get_errno()",
    ],
    ids=["sysv-shm", "sysv-msg", "memfd", "inotify"],
)
def test_shared_kernel_objects_cannot_be_created(
    executor: SandboxExecutor, workdir: Path, code: str
) -> None:
    outcome = _run(executor, code, workdir)
    assert not outcome.success
    assert outcome.error is not None
    message = outcome.error.message
    assert message == str(errno.EPERM) or "[Errno 1]" in message, outcome.error  # seccomp


def test_nothing_of_one_action_is_visible_to_the_next(
    executor: SandboxExecutor, workdir: Path
) -> None:
    first = _run(
        executor,
        """
        import os
        print(os.getppid(), os.getpid())
        """,
        workdir,
    )
    assert first.success, first.error
    # Its own PID namespace, made afresh: the action's init is 1, the worker 2.
    assert first.stdout == "1 2\n"


# ---- reaching other processes ------------------------------------------------------------------


def test_other_processes_cannot_be_reniced_or_signalled(
    executor: SandboxExecutor, workdir: Path
) -> None:
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        outcome = _run(
            executor,
            f"""
            import os, signal
            results = []
            for action in (
                lambda: os.setpriority(os.PRIO_PROCESS, {victim.pid}, 19),
                lambda: os.sched_setaffinity({victim.pid}, {{0}}),
                lambda: os.kill({victim.pid}, signal.SIGKILL),
            ):
                try:
                    action()
                    results.append("ok")
                except OSError as exc:
                    results.append(exc.errno)
            result = results
            """,
            workdir,
        )
        assert outcome.success, outcome.error
        assert "ok" not in outcome.result, outcome.result  # the host pid does not exist there
        assert victim.poll() is None
        assert os.getpriority(os.PRIO_PROCESS, victim.pid) == 0
        assert len(os.sched_getaffinity(victim.pid)) == len(os.sched_getaffinity(0))
    finally:
        victim.kill()
        victim.wait()


def test_a_thread_bomb_is_bounded_per_action(executor: SandboxExecutor, workdir: Path) -> None:
    outcome = _run(
        executor,
        """
        import threading, time
        started = 0
        try:
            while True:
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
                started += 1
        except RuntimeError:
            result = started
        """,
        workdir,
    )
    assert outcome.success, outcome.error
    assert 0 < outcome.result < ATTACK.max_tasks, outcome.result  # the pids cgroup, not the uid
    # The next action is not starved of threads by the first one's.
    again = _run(
        executor, "import threading\nt = threading.Thread(target=print)\nt.start()", workdir
    )
    assert again.success, again.error


# ---- inexact limits ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "import ctypes, os\nfd = os.open('k.bin', os.O_CREAT | os.O_WRONLY)\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(2**30))\n"  # KEEP_SIZE
        "assert r == 0, os.strerror(ctypes.get_errno())",
        "import os\nfd = os.open('p.bin', os.O_CREAT | os.O_WRONLY)\n"
        "os.posix_fallocate(fd, 0, 2**30)",
        "import os\nfor i in range(100):\n"
        "    fd = os.open(f'f{i}.bin', os.O_CREAT | os.O_WRONLY)\n"
        "    os.posix_fallocate(fd, 0, 900_000)\n    os.close(fd)",
    ],
    ids=["fallocate-keep-size", "posix-fallocate", "many-preallocations"],
)
def test_preallocation_is_bounded_by_the_disk_limit(
    executor: SandboxExecutor, workdir: Path, code: str
) -> None:
    outcome = _run(executor, code, workdir, fsize_bytes=2**31)  # the disk limit, not RLIMIT_FSIZE
    assert not outcome.success
    assert outcome.killed_by == "fsize" or "No space left" in str(outcome.error), outcome.error
    assert sum(p.stat().st_blocks * 512 for p in workdir.rglob("*")) <= ATTACK.max_total_bytes


def test_a_tree_deeper_than_path_max_is_bounded_and_copied_safely(
    executor: SandboxExecutor, workdir: Path
) -> None:
    outcome = _run(
        executor,
        """
        import os
        for i in range(5000):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        """,
        workdir,
    )
    assert not outcome.success
    assert outcome.killed_by == "fsize", outcome.error  # the tmpfs ran out of inodes
    depth = 0
    fd = os.open(workdir, os.O_RDONLY)
    while "d" * 200 in os.listdir(fd):
        child = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd, depth = child, depth + 1
    os.close(fd)
    assert 0 < depth <= ATTACK.max_files + 16


# ---- two actions in one workdir -----------------------------------------------------------------


def test_a_second_action_in_the_same_workdir_is_refused_with_a_clear_error(
    executor: SandboxExecutor, workdir: Path
) -> None:
    # As if another action (another executor, another process) ran there.
    with workdir_lock(workdir), pytest.raises(BlockError) as caught:
        executor.run("print(1)", workdir=workdir, profile=ATTACK)
    assert caught.value.code == "SANDBOX_BUSY"
    assert "別のコードを実行中" in caught.value.message
    assert "終わってから再実行" in caught.value.hint
    assert caught.value.recoverable
    assert executor.run("print(1)", workdir=workdir, profile=ATTACK).success


def test_two_threads_on_one_workdir_get_one_run_and_one_refusal(
    executor: SandboxExecutor, workdir: Path
) -> None:
    outcomes: list[object] = []
    barrier = threading.Barrier(2)
    marker = workdir / "started"

    def act() -> None:
        barrier.wait()
        try:
            outcomes.append(
                executor.run(
                    "import time\nopen('started', 'w').write('x')\ntime.sleep(3)\n",
                    workdir=workdir,
                    profile=ATTACK,
                )
            )
        except BlockError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=act) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=ATTACK.wall_seconds + 30)
    refused = [o for o in outcomes if isinstance(o, BlockError)]
    ran = [o for o in outcomes if isinstance(o, ExecutionOutcome)]
    # Either the second was refused while the first ran, or they did not overlap at all.
    assert len(outcomes) == 2
    assert all(o.success for o in ran), ran
    assert all("別のコードを実行中" in e.message for e in refused)
    assert all(e.code == "SANDBOX_BUSY" for e in refused)
    assert marker.exists()


def test_an_action_cannot_touch_the_sandbox_dir_of_a_later_one(
    executor: SandboxExecutor, workdir: Path
) -> None:
    planted = _run(
        executor,
        "import os\nos.makedirs('.sandbox/evil', exist_ok=True)\nopen('.sandbox/x', 'w')",
        workdir,
    )
    assert planted.success, planted.error
    assert not (workdir / ".sandbox").exists()
    second = _run(executor, "import os\nprint(sorted(os.listdir('.sandbox')))", workdir)
    assert second.stdout == "['home', 'mpl', 'tmp']\n", second


# ---- where Python is installed ------------------------------------------------------------------


@pytest.fixture
def private_tree() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="keiri-sbx-0700-"))  # 0700, like a home directory
    yield base
    shutil.rmtree(base, ignore_errors=True)


CHART = """
import pandas as pd
frame = pd.DataFrame({"部門": ["営業", "経理"], "売上": [3, 5]})
print(frame.describe().loc["mean", "売上"])
frame.to_csv("集計.csv", index=False)
ax = frame.plot.bar(x="部門", y="売上")
ax.figure.savefig("chart.png")
"""


def test_cli_runs_a_chart_in_a_workdir_inside_a_0700_directory(private_tree: Path) -> None:
    script = private_tree / "chart.py"
    script.write_text(CHART, encoding="utf-8")
    workdir = private_tree / "deep" / "work"
    cli = Path(sys.executable).parent / "keiri-agent"  # the console script of this install
    command = [str(cli), "sandbox", "run", str(script)]
    done = subprocess.run(
        [*command, "--workdir", str(workdir), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (workdir / "chart.png").read_bytes()[:4] == b"\x89PNG"
    assert (workdir / "集計.csv").read_text(encoding="utf-8").startswith("部門,売上")


@pytest.mark.skipif(
    not sys.base_prefix.startswith("/root") or os.geteuid() != 0,
    reason="needs an interpreter under /root (pyenv as root), as on the issue's machine",
)
def test_lazy_imports_work_with_the_interpreter_under_an_unreadable_directory(
    executor: SandboxExecutor, workdir: Path
) -> None:
    assert os.stat("/root").st_mode & 0o077 == 0  # only root may enter it
    outcome = _run(
        executor,
        """
        import pandas as pd
        frame = pd.DataFrame({"a": [1, 2, 3]})
        frame.describe().to_csv("d.csv")
        frame["a"].plot()
        import email.mime.text, xml.dom.pulldom, pydoc_data  # never imported by the server
        """,
        workdir,
        cpu_seconds=30,
        wall_seconds=60.0,
        memory_bytes=512 * MiB,
    )
    assert outcome.success, outcome.error
    assert outcome.files_created == ["d.csv"]


def test_a_jail_started_from_a_short_lived_thread_outlives_it(private_tree: Path) -> None:
    """bwrap's --die-with-parent follows the starting *thread*: a CodeAct action thread ends."""
    sandbox = SandboxExecutor()
    workdir = private_tree / "work"
    try:
        first: list[ExecutionOutcome] = []
        thread = threading.Thread(
            target=lambda: first.append(sandbox.run("x = 1", workdir=workdir, profile=ATTACK))
        )
        thread.start()
        thread.join(timeout=ATTACK.wall_seconds + 120)
        assert first
        assert first[0].success, first[0].error
        jails = sandbox.jail_pids()
        again = sandbox.run("print(2)", workdir=workdir, profile=ATTACK)
        assert again.success, again.error
        assert again.stdout == "2\n"
        assert sandbox.jail_pids() == jails  # the same warm jail, not a fresh one
    finally:
        sandbox.close()


def test_an_interpreter_that_lives_under_tmp_runs_in_the_jail(tmp_path: Path) -> None:
    # A CI checkout or a venv under /tmp: the jail's private /tmp must not hide it.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    here = [entry for entry in sys.path if entry.endswith("site-packages") or entry.endswith("src")]
    (site / "keiri_host.pth").write_text("\n".join(here) + "\n", encoding="utf-8")
    script = tmp_path / "chart.py"
    script.write_text(
        "import pandas as pd\n"
        "df = pd.DataFrame({'金額': [1, 2, 3]})\n"
        "print(df.describe().loc['mean', '金額'])\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    cli = "import sys; from keiri_agent.cli import app; sys.argv[0] = 'keiri-agent'; app()"
    command = [str(venv / "bin" / "python"), "-c", cli, "sandbox", "run", str(script)]
    result = subprocess.run(
        [*command, "--workdir", str(tmp_path / "work"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    document = json.loads(result.stdout)
    assert result.returncode == 0, document
    assert document["success"] is True
    assert document["stdout"].strip() == "2.0"
