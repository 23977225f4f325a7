"""How long the server's files are kept (``KEIRI_RETENTION_DAYS``; seed 002 §12).

Seed 002 §12 asks that uploads not be kept needlessly. What is removed, once older than the
retention period (``keiri-agent gc`` and the server, every hour, do the same):

- ``tasks/<id>/`` of a finished task (success, unverified, failed, cancelled) by the time it
  finished. A task that waits for answers or was interrupted is kept: it still has work to do.
  The uploads of a task are removed as soon as it finishes, whatever the period;
- ``runs/<plan>/<run>.jsonl`` and its ``<run>.files/`` by the log's last change, unless a kept
  task continues that run, or a kept run reuses outputs stored in it (resume and rerun read
  them from the earlier run's files);
- analysis workspaces ``<KEIRI_WORKSPACE_ROOT>/<yyyymmddhhmmss>/`` by their newest file.

Other files in the workspace (data users put there) are never touched. ``0`` days keeps
everything.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from keiri_agent.config import Settings
from keiri_agent.localtime import utc_text
from keiri_agent.server.store import TASKS_DIR, TaskStore

__all__ = ["RETENTION_INTERVAL_S", "Removal", "Retention", "collect", "remove"]

RETENTION_INTERVAL_S = 3600.0
DAY_S = 86_400.0
_SESSION_DIR_RE = re.compile(r"^\d{14}(-\d+)?$")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Removal:
    """One thing past its retention period."""

    kind: Literal["task", "run", "workspace"]
    path: Path
    age_days: float
    size_bytes: int
    # When its age counts from (POSIX seconds): a task's finish, a log's or a workspace's
    # last change.
    since: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": str(self.path),
            "age_days": round(self.age_days, 1),
            "since": utc_text(self.since),
            "size_bytes": self.size_bytes,
        }


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _newest(path: Path) -> float:
    times = [path.stat().st_mtime]
    times += [p.lstat().st_mtime for p in path.rglob("*")]
    return max(times)


def _timestamp(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _run_refs(log_path: Path) -> tuple[str | None, set[str]]:
    """A run log's run id and the stems of the runs whose stored outputs it reuses."""
    run_id: str | None = None
    stems: set[str] = set()
    try:
        with log_path.open(encoding="utf-8") as lines:
            for line in lines:
                # Only the lines that can name a run or a stored output are parsed: a long
                # run's log has hundreds of thousands of others, read every hour.
                if run_id is not None and '"outputs_file"' not in line:
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                run_id = run_id or event.get("run_id")
                ref = event.get("outputs_file")
                if isinstance(ref, str) and ".files/" in ref:
                    stems.add(ref.split(".files/", 1)[0])
    except OSError:
        pass
    return run_id, stems


def _runs(runs_dir: Path) -> Iterator[Path]:
    if runs_dir.is_dir():
        yield from (p for p in runs_dir.rglob("*.jsonl") if p.is_file())


def collect(settings: Settings, older_than_days: float, now: float | None = None) -> list[Removal]:
    """Everything older than ``older_than_days`` that nothing kept still needs."""
    now = time.time() if now is None else now
    cutoff = now - older_than_days * DAY_S
    workspace = Path(settings.keiri_workspace_root).absolute()
    removals: list[Removal] = []
    kept_run_ids: set[str] = set()
    for task in TaskStore(workspace / TASKS_DIR).records():
        finished = _timestamp(task.finished_at) if task.finished else None
        if finished is not None and finished < cutoff:
            age = (now - finished) / DAY_S
            size = _size(task.directory)
            removals.append(Removal("task", task.directory, age, size, finished))
        elif task.details.get("run_id"):
            kept_run_ids.add(str(task.details["run_id"]))
    removals += _old_runs(Path(settings.keiri_runs_dir).absolute(), cutoff, now, kept_run_ids)
    if workspace.is_dir():
        for session in sorted(workspace.iterdir()):
            if session.is_dir() and _SESSION_DIR_RE.match(session.name):
                newest = _newest(session)
                if newest < cutoff:
                    age = (now - newest) / DAY_S
                    removals.append(Removal("workspace", session, age, _size(session), newest))
    return removals


def _old_runs(runs_dir: Path, cutoff: float, now: float, kept_ids: set[str]) -> list[Removal]:
    logs = {path: _run_refs(path) for path in _runs(runs_dir)}
    kept = {p for p, (rid, _r) in logs.items() if p.stat().st_mtime >= cutoff or rid in kept_ids}
    pending = list(kept)
    while pending:  # a kept run keeps every run whose stored outputs it reuses
        path = pending.pop()
        for stem in logs[path][1]:
            needed = path.parent / f"{stem}.jsonl"
            if needed in logs and needed not in kept:
                kept.add(needed)
                pending.append(needed)
    removals = []
    for path in sorted(set(logs) - kept):
        files = path.parent / f"{path.stem}.files"
        size = _size(path) + (_size(files) if files.is_dir() else 0)
        changed = path.stat().st_mtime
        removals.append(Removal("run", path, (now - changed) / DAY_S, size, changed))
    return removals


def remove(removals: Iterable[Removal]) -> list[Removal]:
    """Delete what ``collect`` found; returns what was removed."""
    done = []
    for item in removals:
        if item.kind == "run":
            shutil.rmtree(item.path.parent / f"{item.path.stem}.files", ignore_errors=True)
            item.path.unlink(missing_ok=True)
        else:
            shutil.rmtree(item.path, ignore_errors=True)
        if not item.path.exists():
            done.append(item)
    return done


class Retention:
    """Applies the retention period in the server: now, then every ``interval_s`` seconds."""

    def __init__(self, settings: Settings, interval_s: float = RETENTION_INTERVAL_S) -> None:
        self.settings = settings
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.settings.keiri_retention_days <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="keiri-retention", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                removed = remove(collect(self.settings, self.settings.keiri_retention_days))
                if removed:
                    log.info(
                        "保持期間（%s 日）を過ぎたものを %d 件削除しました",
                        self.settings.keiri_retention_days,
                        len(removed),
                    )
            except Exception:  # the next round tries again; the server keeps serving
                log.exception("保持期間の適用に失敗しました")
            self._stop.wait(self.interval_s)
