"""The cgroup decisions, checked against directory trees laid out as the kernel lays out cgroupfs.

``CgroupTree`` takes where the hierarchies are mounted and where this process's membership is
read from; each test builds those as real files (``cgroup.controllers``, ``cgroup.subtree_control``,
``cgroup.procs``, ``/proc/self/cgroup`` lines) for one kind of machine: cgroup v1 as root, a pure
cgroup v2 host in its root cgroup, a systemd session scope, a partly delegated subtree, a hybrid
host (this project's CI) seen by an ordinary user, no cgroup at all. No kernel is involved: what
the kernel does with the files is the business of ``test_cgroup_v2``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from keiri_agent.sandbox.cgroups import ActionCgroup, CgroupTree

IS_ROOT = os.geteuid() == 0


def _files(directory: Path, **contents: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in contents.items():
        (directory / name.replace("_", ".", 1)).write_text(text)
    return directory


def _membership(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "proc-self-cgroup"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def _v2_tree(
    tmp_path: Path, own: str, *, present: str, delegated: str, enabled: str, hybrid: bool = False
) -> CgroupTree:
    """A cgroup v2 hierarchy (at root, or at root/unified beside v1) with this process in ``own``."""
    root = tmp_path / "cgroup"
    mount = root / "unified" if hybrid else root
    _files(mount, cgroup_controllers=present, cgroup_subtree_control="", cgroup_procs="")
    _files(
        mount / own.lstrip("/"),
        cgroup_controllers=delegated,
        cgroup_subtree_control=enabled,
        cgroup_procs="1234\n",
    )
    return CgroupTree(root=root, membership=_membership(tmp_path, f"0::{own}"))


def test_v1_as_root_puts_the_jail_below_this_process_in_each_hierarchy(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    _files(root / "memory" / "process_api" / "abc", cgroup_procs="")
    _files(root / "memory", cgroup_procs="")
    _files(root / "pids", cgroup_procs="")
    membership = _membership(tmp_path, "8:pids:/", "4:memory:/process_api/abc", "0::/")
    tree = CgroupTree(root=root, membership=membership)

    plan = tree.plan()
    jail = tree.make_jail_dirs("keiri-jail-test")

    assert plan.reasons == {}
    assert jail.unenforced == {}
    assert jail.dirs == {
        "memory": root / "memory" / "process_api" / "abc" / "keiri-jail-test",
        "pids": root / "pids" / "keiri-jail-test",
    }
    assert all(directory.is_dir() for directory in jail.dirs.values())


def test_v2_in_the_root_cgroup_enables_both_controllers_for_the_jail(tmp_path: Path) -> None:
    tree = _v2_tree(
        tmp_path, "/", present="cpu memory pids", delegated="cpu memory pids", enabled="memory pids"
    )

    jail = tree.make_jail_dirs("keiri-jail-test")

    directory = tmp_path / "cgroup" / "keiri-jail-test"
    assert jail.unenforced == {}
    assert jail.dirs == {"unified": directory}
    assert (directory / "cgroup.subtree_control").read_text() == "+memory +pids"


def test_v2_action_cgroup_sets_and_reads_the_v2_files(tmp_path: Path) -> None:
    # Inside the jail: CGROUP_MOUNT/unified is the jail's v2 cgroup, both controllers enabled.
    base = tmp_path / "keiri-cgroup"
    _files(base / "unified", cgroup_subtree_control="memory pids")

    action = ActionCgroup.make(base, "action-1")
    action.limit(300 * 1024 * 1024, 64)
    directory = base / "unified" / "action-1"
    (directory / "memory.peak").write_text("123456\n")
    (directory / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")

    assert action.controllers == ("memory", "pids")
    assert (directory / "memory.max").read_text() == str(300 * 1024 * 1024)
    assert (directory / "memory.swap.max").read_text() == "0"
    assert (directory / "pids.max").read_text() == "64"
    assert action.peak_memory() == 123456
    assert action.oom_kills() == 1


def test_a_systemd_session_scope_says_why_neither_limit_is_enforced(tmp_path: Path) -> None:
    # The default on current distributions: both controllers reach the scope this process runs
    # in, but a cgroup with processes (other than the root) cannot enable them for children.
    own = "/user.slice/user-1000.slice/session-3.scope"
    tree = _v2_tree(
        tmp_path, own, present="cpu io memory pids", delegated="memory pids", enabled=""
    )

    jail = tree.make_jail_dirs("keiri-jail-test")

    assert jail.dirs == {}
    assert set(jail.unenforced) == {"memory_cgroup", "pids_cgroup"}
    for controller, layer in (("memory", "memory_cgroup"), ("pids", "pids_cgroup")):
        reason = jail.unenforced[layer]
        assert f"{own}）では {controller} が子の cgroup に有効化されていません" in reason
        assert "cgroup.subtree_control" in reason
    assert not (tmp_path / "cgroup" / own.lstrip("/") / "keiri-jail-test").exists()


def test_a_subtree_delegating_only_pids_enforces_pids_and_names_memory(tmp_path: Path) -> None:
    tree = _v2_tree(tmp_path, "/", present="memory pids", delegated="memory pids", enabled="pids")

    jail = tree.make_jail_dirs("keiri-jail-test")
    base = tmp_path / "inside"  # the jail's view: its cgroup bound at CGROUP_MOUNT/unified
    base.mkdir()
    (base / "unified").symlink_to(jail.dirs["unified"])
    action = ActionCgroup.make(base, "action-1")
    action.limit(300 * 1024 * 1024, 64)

    assert (jail.dirs["unified"] / "cgroup.subtree_control").read_text() == "+pids"
    assert list(jail.unenforced) == ["memory_cgroup"]
    assert "memory が子の cgroup に有効化されていません" in jail.unenforced["memory_cgroup"]
    assert action.controllers == ("pids",)
    assert (jail.dirs["unified"] / "action-1" / "pids.max").read_text() == "64"
    assert not (jail.dirs["unified"] / "action-1" / "memory.max").exists()
    assert action.peak_memory() == 0


def test_a_hierarchy_without_the_controllers_names_what_it_has(tmp_path: Path) -> None:
    tree = _v2_tree(tmp_path, "/", present="hugetlb", delegated="hugetlb", enabled="")

    unenforced = tree.plan().unenforced()

    assert unenforced == {
        "memory_cgroup": f"cgroup v2（{tmp_path / 'cgroup'}）に memory コントローラーがありません"
        "（あるのは hugetlb）",
        "pids_cgroup": f"cgroup v2（{tmp_path / 'cgroup'}）に pids コントローラーがありません"
        "（あるのは hugetlb）",
    }


def test_a_cgroup_the_controllers_were_not_delegated_to_says_so(tmp_path: Path) -> None:
    tree = _v2_tree(tmp_path, "/app.slice/x.scope", present="memory pids", delegated="", enabled="")

    unenforced = tree.plan().unenforced()

    assert "x.scope）には memory コントローラーが委譲されていません" in unenforced["memory_cgroup"]
    assert "x.scope）には pids コントローラーが委譲されていません" in unenforced["pids_cgroup"]


@pytest.mark.skipif(IS_ROOT, reason="root may write to any directory, whatever its mode")
def test_an_ordinary_user_on_a_hybrid_host_learns_both_reasons(tmp_path: Path) -> None:
    # This project's CI machine as an ordinary user: memory and pids are cgroup v1 hierarchies
    # owned by root, the cgroup v2 beside them (at unified/) has only hugetlb.
    root = tmp_path / "cgroup"
    for controller in ("memory", "pids"):
        _files(root / controller, cgroup_procs="").chmod(0o555)
    _v2_tree(tmp_path, "/", present="hugetlb", delegated="hugetlb", enabled="", hybrid=True)
    tree = CgroupTree(root=root, membership=_membership(tmp_path, "8:pids:/", "4:memory:/", "0::/"))

    unenforced = tree.plan().unenforced()

    for controller, layer in (("memory", "memory_cgroup"), ("pids", "pids_cgroup")):
        assert unenforced[layer] == (
            f"cgroup v1 の {controller} コントローラー（{root / controller}）に、"
            f"このユーザー（uid {os.geteuid()}）は cgroup を作れません。"
            f"cgroup v2（{root / 'unified'}）に {controller} コントローラーがありません"
            "（あるのは hugetlb）"
        )


def test_no_cgroup_at_all_is_said_for_each_limit(tmp_path: Path) -> None:
    (tmp_path / "cgroup").mkdir()
    tree = CgroupTree(root=tmp_path / "cgroup", membership=_membership(tmp_path, "0::/"))

    jail = tree.make_jail_dirs()

    assert jail.dirs == {}
    assert jail.unenforced == {
        "memory_cgroup": "cgroup v2 もマウントされていません",
        "pids_cgroup": "cgroup v2 もマウントされていません",
    }


def test_a_jail_cgroup_that_cannot_be_made_is_reported_not_raised(tmp_path: Path) -> None:
    tree = _v2_tree(tmp_path, "/", present="memory pids", delegated="memory pids", enabled="pids")
    (tmp_path / "cgroup" / "keiri-jail-test").write_text("in the way")

    jail = tree.make_jail_dirs("keiri-jail-test")

    assert jail.dirs == {}
    exists = "cgroup を作れません（同じ名前のファイルまたはフォルダがすでにあります）"
    assert exists in jail.unenforced["pids_cgroup"]
    assert "memory が子の cgroup に有効化されていません" in jail.unenforced["memory_cgroup"]
