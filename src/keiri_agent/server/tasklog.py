"""A task's event log (``events.jsonl``) and folder, made durable by the run log's rule.

The rule is the plan run log's (ARCHITECTURE.md, "The log is the truth, in order"), applied to
a task with the same sink (:class:`keiri_agent.events.JsonlSink`: one append-only file, group
commit) and the same setting, ``KEIRI_RUN_LOG_FSYNC`` (``false`` turns all of it off):

- the events that decide what happens next or what a client is told -- an ``error``, and the
  plan run's own durable events relayed into the task (``plan_start``, ``node_waiting``,
  ``file_write``, ``plan_complete``) -- are on disk before the task goes on and before an SSE
  client sees them (:data:`TASK_DURABLE_EVENTS`);
- a status change (``waiting_input``, ``interrupted``, the end) is saved only after every
  line logged before it is on disk, and the record (``task.json``) itself is written durably
  before the new status is shown (``execution.TaskRuntime``), so neither the record nor a
  client (GET, the SSE ``done``) is ever ahead of the log;
- every other line (``log``, ``stage``, ``llm_call``, ``code_gen``...) shares the next fsync,
  at most :data:`MAX_UNSYNCED_S` after it was written;
- the folders' entries are synced when they are made: the task's folder in ``tasks/``, its
  log and record in it, its uploads (:func:`sync_new`); the result files a task ends with are
  on disk before its record names them (:func:`sync_results`).

A crash can cut only the last line of the log; a restarted server drops that torn tail
(``store.complete_lines``) and the log goes on with the next id.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from keiri_agent.config import Settings
from keiri_agent.events import EventStream, JsonlSink
from keiri_agent.events.stream import DURABLE_EVENTS
from keiri_agent.server.store import TASKS_DIR, complete_lines
from keiri_agent.server.task_model import Task
from keiri_agent.workspace import fsync_path

__all__ = ["MAX_UNSYNCED_S", "TASK_DURABLE_EVENTS", "open_task_log", "sync_new", "sync_results"]

TASK_DURABLE_EVENTS = DURABLE_EVENTS | {"error"}
# Seconds a quick line may wait for a shared fsync: the plan run log's bound for its quick nodes.
MAX_UNSYNCED_S = 0.05


def open_task_log(task: Task, settings: Settings) -> EventStream:
    """The stream of ``task``, appending to its log (a resumed task's ids go on)."""
    first = complete_lines(task.events_path)  # a torn last line is cut off first
    durable = settings.keiri_run_log_fsync
    sink = JsonlSink(
        task.events_path, fsync=durable, max_delay_s=MAX_UNSYNCED_S if durable else None
    )
    return EventStream(
        task.id,
        f"{TASKS_DIR}/{task.id}",
        sink=sink,
        first_id=first,
        durable=TASK_DURABLE_EVENTS,
    )


def sync_new(folder: Path, names: Iterable[str] = (), *, up_to: Path, settings: Settings) -> None:
    """Put what was just made on disk: the files ``names`` in ``folder``, then the entries of
    ``folder`` and of every folder above it up to ``up_to`` (a no-op when
    ``KEIRI_RUN_LOG_FSYNC`` is off)."""
    if not settings.keiri_run_log_fsync:
        return
    for name in names:
        fsync_path(folder / name)
    fsync_path(folder, directory=True)
    while folder != up_to and folder != folder.parent:
        folder = folder.parent
        fsync_path(folder, directory=True)


def sync_results(directory: Path, files: Iterable[str], *, settings: Settings) -> None:
    """Put a task's result ``files`` (paths relative to its ``directory``) on disk, with the
    entries of every folder that holds them (a no-op when ``KEIRI_RUN_LOG_FSYNC`` is off)."""
    if not settings.keiri_run_log_fsync:
        return
    folders: set[Path] = set()
    for name in files:
        path = directory / name
        fsync_path(path)
        folders.update(p for p in path.parents if p.is_relative_to(directory))
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):  # deepest first
        fsync_path(folder, directory=True)
