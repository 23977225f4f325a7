"""The sandbox user and the workdir it is lent: who ``nobody`` is here, whether it can reach
the workdir, and handing the workdir to it (before a run) and back (after)."""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import stat
from pathlib import Path

from keiri_agent.sandbox.layers import IsolationError

__all__ = [
    "prepare_workdir_for",
    "resolve_sandbox_ids",
    "restore_workdir_owner",
    "unreachable_ancestor",
]

SANDBOX_USER = "nobody"
SANDBOX_GROUPS = ("nogroup", "nobody")
FALLBACK_SANDBOX_ID = 65534


def resolve_sandbox_ids() -> tuple[int, int]:
    """The uid and gid of ``nobody`` (group ``nogroup`` or ``nobody``), 65534 if unknown."""
    try:
        user = pwd.getpwnam(SANDBOX_USER)
    except KeyError:
        return FALLBACK_SANDBOX_ID, FALLBACK_SANDBOX_ID
    for name in SANDBOX_GROUPS:
        with contextlib.suppress(KeyError):
            return user.pw_uid, grp.getgrnam(name).gr_gid
    return user.pw_uid, user.pw_gid


def unreachable_ancestor(path: Path, uid: int, gid: int) -> Path | None:
    """The first ancestor of ``path`` that ``uid``/``gid`` may not traverse, if any."""
    for ancestor in reversed(path.parents):
        st = ancestor.stat()
        owner_bit = stat.S_IXUSR if st.st_uid == uid else 0
        bit = owner_bit or (stat.S_IXGRP if st.st_gid == gid else stat.S_IXOTH)
        if not st.st_mode & bit:
            return ancestor
    return None


def _chown_tree(workdir: Path, uid: int, gid: int) -> None:
    os.chown(workdir, uid, gid, follow_symlinks=False)
    for root, dirs, files in os.walk(workdir):  # symlinks are chowned, never followed
        for name in (*dirs, *files):
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def prepare_workdir_for(uid: int, gid: int, workdir: Path) -> None:
    """Supervisor, as root, before the run: hand ``workdir`` (recursively) to the sandbox ids."""
    workdir = workdir.resolve(strict=True)
    blocked = unreachable_ancestor(workdir, uid, gid)
    if blocked is not None:
        raise IsolationError(
            "uid",
            f"サンドボックス用ユーザー（uid {uid}）が {blocked} を通過できません",
            hint=f"作業ディレクトリは他ユーザーが通過できる場所に置いてください（例: chmod o+x {blocked}）。",
            details={"workdir": str(workdir), "blocked": str(blocked)},
        )
    _chown_tree(workdir, uid, gid)


def restore_workdir_owner(workdir: Path, uid: int, gid: int) -> None:
    """Supervisor, after the run: give the workdir (and what the code wrote) back to uid/gid."""
    _chown_tree(workdir.resolve(strict=True), uid, gid)
