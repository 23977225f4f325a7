"""Folder triggers: a new file in a watched folder starts a plan run, once.

Every tick of the scheduler, each folder trigger's folder (under ``KEIRI_WORKSPACE_ROOT``) is
listed (regular files at its top level; names starting with ``.`` or ``~`` are a copy in
progress by convention and wait). A file runs once its size and modification time have not
changed for ``KEIRI_TRIGGER_SETTLE_S`` -- a file still being copied, or rewritten in place,
keeps moving and waits. Its bytes are then read once, hashed (SHA-256), and claimed in the
workspace's SQLite file by trigger, path and hash: only the first claim starts a run (across
restarts and server processes), so a file runs once, and again only when its content changes.

The run is a plan task whose upload is exactly the bytes that were hashed, given to the plan
as the trigger's ``file_var``; its results are the task's files, beside its run. The file's row
keeps the versions the run runs (the plan's and each subflow's, as its task's door resolved
them), as a schedule's fire row does.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.plan import kept_versions
from keiri_agent.schedule import ScheduleStore, Trigger
from keiri_agent.server.errors import ApiError
from keiri_agent.server.notify import Notifier
from keiri_agent.server.tasks import Task, Upload
from keiri_agent.workspace import confine

__all__ = ["MAX_FILES_PER_SCAN", "FolderWatcher", "StartRun"]

MAX_FILES_PER_SCAN = 1000  # entries looked at per folder and tick: a flooded folder stays bounded
_IN_PROGRESS = (".", "~")
log = logging.getLogger(__name__)
# How a run is started (``Scheduler.start_run``): plan id, version pin, vars, owner, label,
# uploads.
StartRun = Callable[[str, str, Mapping[str, Any], str | None, str, Sequence[Upload]], Task]


@dataclass(frozen=True)
class _Seen:
    size: int
    mtime_ns: int
    since: float  # time.monotonic() when this size and time were first seen


class FolderWatcher:
    """Looks at the folder triggers' folders; thread-confined to the scheduler's loop."""

    def __init__(
        self,
        settings: Settings,
        store: ScheduleStore,
        start_run: StartRun,
        notifier: Notifier,
    ) -> None:
        self.settings = settings
        self.start_run = start_run
        self.store = store
        self.notifier = notifier
        self.scans = 0  # how many scans have finished (people and tests can watch it move)
        self._seen: dict[tuple[str, str], _Seen] = {}
        self._done: dict[tuple[str, str], tuple[int, int]] = {}  # handled (size, mtime)

    def scan(self) -> list[str]:
        """One look at every folder trigger; the ids of the tasks started."""
        started: list[str] = []
        for trigger in self.store.triggers.all():
            if trigger.kind == "folder" and trigger.folder is not None:
                started += self._scan(trigger)
        self.scans += 1
        return started

    def _scan(self, trigger: Trigger) -> list[str]:
        assert trigger.folder is not None
        root = Path(self.settings.keiri_workspace_root)
        try:
            folder = confine(root, trigger.folder)
            entries = sorted(os.scandir(folder), key=lambda e: e.name)[:MAX_FILES_PER_SCAN]
        except (BlockError, OSError) as exc:
            log.warning("トリガー %s のフォルダを読めません: %s", trigger.id, exc)
            return []
        started = []
        now = time.monotonic()
        present = {(trigger.id, entry.name) for entry in entries}
        for known in [k for k in (*self._seen, *self._done) if k[0] == trigger.id]:
            if known not in present:  # gone from the folder: forget it
                self._seen.pop(known, None)
                self._done.pop(known, None)
        for entry in entries:
            try:
                if entry.name.startswith(_IN_PROGRESS) or not entry.is_file(follow_symlinks=False):
                    continue
                stat = entry.stat(follow_symlinks=False)
            except OSError:  # removed since the listing
                continue
            key = (trigger.id, entry.name)
            state = (stat.st_size, stat.st_mtime_ns)
            if self._done.get(key) == state:
                continue
            seen = self._seen.get(key)
            if seen is None or (seen.size, seen.mtime_ns) != state:
                self._seen[key] = _Seen(stat.st_size, stat.st_mtime_ns, now)
                continue
            if now - seen.since < self.settings.keiri_trigger_settle_s:
                continue
            task_id = self._run(trigger, Path(entry.path), state)
            if task_id is not None:
                started.append(task_id)
        return started

    def _run(self, trigger: Trigger, path: Path, state: tuple[int, int]) -> str | None:
        key = (trigger.id, path.name)
        try:
            data = path.read_bytes()
            after = path.stat()
        except OSError:
            return None
        if (after.st_size, after.st_mtime_ns) != state or len(data) != state[0]:
            self._seen.pop(key, None)  # it moved while being read: wait again
            return None
        self._done[key] = state
        self._seen.pop(key, None)
        digest = hashlib.sha256(data).hexdigest()
        rel = f"{trigger.folder}/{path.name}"
        if not self.store.claim_file(trigger.id, rel, digest, now=_utc_now()):
            return None  # this content of this file ran already
        label = f"フォルダ {trigger.folder} のファイル {path.name}（トリガー {trigger.id}）"
        try:
            task = self.start_run(
                trigger.plan_id,
                trigger.version,
                {**trigger.vars, trigger.file_var: path.name},
                trigger.created_by,
                label,
                [(path.name, io.BytesIO(data))],
            )
        except (BlockError, ApiError) as exc:
            self.store.settle_file(trigger.id, rel, digest, None, exc.message)
            self.notifier.refused(label, trigger.plan_id, exc.message)
            return None
        ran = kept_versions(task.directory)  # what its door resolved, as a fire row keeps
        self.store.settle_file(trigger.id, rel, digest, task.id, None, ran)
        return task.id


def _utc_now() -> datetime:
    return datetime.now(UTC)
