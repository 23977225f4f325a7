"""The sandbox's cgroup v2 path on the real kernel, both ways it can go.

- Where a cgroup v2 hierarchy has the memory and pids controllers and the sandbox can run from a
  cgroup that enables them for its children (as root: the hierarchy's root cgroup, which this
  test moves its own process into and back out of; as another user: a delegated subtree it
  already runs in), an action gets both limits from cgroup v2 and a thread bomb stays bounded.
- Where the v2 hierarchy lacks them (a hybrid machine, as this project's CI: memory and pids are
  bound to cgroup v1, whose hierarchies cannot give a controller up while they hold cgroups),
  the sandbox still runs, and ``sandbox doctor`` (table and JSON) and every outcome name each
  limit not enforced and why. As root the test shows the sandbox only a cgroup2 mount (a private
  mount namespace with cgroup2 at /sys/fs/cgroup, v1 hidden); an ordinary user cannot write the
  v1 hierarchies anyway, so the v2 hierarchy is what decides.

Each test skips with the precise reason where the machine cannot offer its situation.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from keiri_agent.sandbox import SandboxExecutor
from keiri_agent.sandbox.cgroups import CONTROLLER_LAYERS, CONTROLLERS, CgroupTree
from keiri_agent.sandbox.layers import LIMIT_NAMES
from tests.sandbox.conftest import ATTACK, IS_ROOT, make_sandbox_dir, run_unchecked

CLI_TIMEOUT_S = 300
THREAD_BOMB = """
import threading, time
started = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        started += 1
except RuntimeError:
    result = started
"""


def _v2_mount() -> Path | None:
    """Where cgroup2 is mounted in this mount namespace (/proc/self/mountinfo)."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split(" - ", 1)
        if len(fields) == 2 and fields[1].split()[0] == "cgroup2":
            return Path(fields[0].split()[4])
    return None


def _words(path: Path) -> list[str]:
    return path.read_text().split()


def _v2_controllers() -> tuple[Path | None, list[str]]:
    mount = _v2_mount()
    return mount, (_words(mount / "cgroup.controllers") if mount else [])


@pytest.fixture
def v2_cgroup() -> Iterator[None]:
    """This process in a cgroup v2 cgroup that enables memory and pids for its children."""
    mount, present = _v2_controllers()
    if mount is None:
        pytest.skip("no cgroup2 hierarchy is mounted on this machine")
    missing = [c for c in CONTROLLERS if c not in present]
    if missing:
        bound = [c for c in missing if Path(f"/sys/fs/cgroup/{c}/cgroup.procs").exists()]
        pytest.skip(
            f"the cgroup2 hierarchy at {mount} has only {' '.join(present) or 'no controller'}: "
            f"{', '.join(missing)} are not in it"
            + (
                f" ({', '.join(bound)} bound to cgroup v1 hierarchies, which cannot give a "
                "controller up while they hold cgroups)"
                if bound
                else ""
            )
        )
    if not IS_ROOT:
        reasons = CgroupTree().plan().reasons
        if reasons:
            pytest.skip(f"uid {os.geteuid()} runs in no delegated cgroup v2 subtree: {reasons}")
        yield
        return
    enabled = _words(mount / "cgroup.subtree_control")
    if not all(c in enabled for c in CONTROLLERS):
        pytest.skip(f"{mount}/cgroup.subtree_control enables only {' '.join(enabled)}")
    own = next(
        line.split(":", 2)[2]
        for line in Path("/proc/self/cgroup").read_text().splitlines()
        if line.startswith("0::")
    )
    (mount / "cgroup.procs").write_text("0")  # the root cgroup may hold processes
    try:
        yield
    finally:
        (mount / own.lstrip("/") / "cgroup.procs").write_text("0")


@pytest.mark.usefixtures("v2_cgroup")
def test_cgroup_v2_limits_each_action() -> None:
    workdir = make_sandbox_dir("keiri-sbx-v2-")
    sandbox = SandboxExecutor(max_jails=1)
    try:
        outcome = run_unchecked(sandbox, THREAD_BOMB, workdir=workdir, profile=ATTACK)
    finally:
        sandbox.close()
        shutil.rmtree(workdir, ignore_errors=True)
    layers = {layer.name: layer for layer in outcome.layers}
    assert outcome.success, outcome.error
    assert layers["memory_cgroup"].active, layers["memory_cgroup"]
    assert layers["pids_cgroup"].active, layers["pids_cgroup"]
    assert not [w for w in outcome.warnings if "cgroup" in w], outcome.warnings
    assert 0 < outcome.result < ATTACK.max_tasks, outcome.result


def _in_v2_view(argv: list[str]) -> list[str]:
    """``argv`` run where the sandbox's host side sees cgroup v2 only."""
    if not IS_ROOT:
        return argv  # the v1 hierarchies are root's: v2 decides for this user
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed")
    hide_v1 = (
        "mount -t tmpfs keiri-test /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup"
        ' && exec "$@"'
    )
    return [unshare, "--mount", "--propagation", "private", "sh", "-c", hide_v1, "sh", *argv]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = "import sys; from keiri_agent.cli import app; sys.argv[0] = 'keiri-agent'; app()"
    return subprocess.run(
        _in_v2_view([sys.executable, "-c", script, *args]),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
        cwd=cwd,
    )


def test_without_v2_controllers_every_report_names_each_unenforced_limit() -> None:
    _, present = _v2_controllers()
    absent = [c for c in CONTROLLERS if c not in present]
    if IS_ROOT:
        expected = {CONTROLLER_LAYERS[c] for c in absent}
    else:
        expected = set(CgroupTree().plan().unenforced())
    if not expected:
        pytest.skip("cgroup v2 offers memory and pids here: test_cgroup_v2_limits_each_action")
    base = Path(tempfile.mkdtemp(prefix="keiri-sbx-v2-"))
    try:
        (base / "work").mkdir()
        (base / "code.py").write_text("result = sum(range(10))\n", encoding="utf-8")
        doctor_json = _cli("sandbox", "doctor", "--json", cwd=base)
        doctor_text = _cli("sandbox", "doctor", cwd=base)
        run = _cli("sandbox", "run", "code.py", "--workdir", "work", "--json", cwd=base)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    assert doctor_json.returncode == 0, doctor_json.stderr[-3000:]
    rows = {row["name"]: row for row in json.loads(doctor_json.stdout)}
    unenforced = {name for name, row in rows.items() if row["limit"] and not row["active"]}
    assert unenforced == expected, rows
    for name in expected:
        controller = name.removesuffix("_cgroup")
        assert rows[name]["limit"] == LIMIT_NAMES[name]
        assert "cgroup v2" in rows[name]["detail"]
        if controller in absent:
            assert f"{controller} コントローラーがありません" in rows[name]["detail"]
    # Only the cgroup limits are missing: the action ran with every other property in force.
    assert {name for name, row in rows.items() if not row["active"]} == expected
    text = "".join(doctor_text.stdout.split())  # as wrapped for the terminal, spaces aside
    for name in expected:
        assert f"このマシンでは強制されない上限:{LIMIT_NAMES[name]}。理由:" in text, text
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    outcome = json.loads(run.stdout)
    assert outcome["result"] == 45
    warning = next(w for w in outcome["warnings"] if "cgroup で強制していません" in w)
    for name in expected:
        assert LIMIT_NAMES[name] in warning
