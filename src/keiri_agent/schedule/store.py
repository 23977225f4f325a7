"""Schedules and triggers on disk: one SQLite file under the workspace, shared by processes.

``<KEIRI_WORKSPACE_ROOT>/schedules/schedules.sqlite3`` holds the schedules and triggers, and
the claims that make each start happen once:

- ``fires``: one row per (schedule id, fire time) that was handled (started, skipped after a
  downtime with the reason, failed); every fire time that passed has one, and a started one
  the versions its run runs (the plan's and each subflow's, as the task's door resolved them).
  Its primary key is the idempotency key: a process fires a time only after
  its ``INSERT`` of that key succeeded, so two servers on one workspace, or a server restarted
  in the middle, never start a fire time twice. The newest row of a schedule is where the next
  look for due fire times begins.
- ``files``: one row per (trigger, path, SHA-256) a folder trigger started a run for, with the
  versions its run runs, as a fire row keeps them.
- ``signatures``: webhook signatures seen within the replay window (a second use is a replay).

Every write is its own transaction (``BEGIN IMMEDIATE``) on a connection opened for it, in WAL
mode with a busy timeout, so the CLI, the app and any number of servers can use the file at
once.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.schedule.calendar import CalendarName
from keiri_agent.schedule.rules import Rule

__all__ = [
    "BUSY_TIMEOUT_S",
    "MAX_PLAN_ID_CHARS",
    "STORE_DIR",
    "STORE_FILE",
    "Fire",
    "FireOutcome",
    "Misfire",
    "PlanId",
    "RecordTable",
    "Schedule",
    "ScheduleStore",
    "Trigger",
    "new_id",
    "not_found",
]

STORE_DIR = "schedules"
STORE_FILE = "schedules.sqlite3"
BUSY_TIMEOUT_S = 30.0  # a writer waits this long for another process's transaction
MAX_PLAN_ID_CHARS = 300  # a plan id is a short path (``keiri/monthly_close``), never a text
Misfire = Literal["run_once", "skip"]
PlanId = Annotated[str, Field(min_length=1, max_length=MAX_PLAN_ID_CHARS)]
FireOutcome = Literal["started", "skipped", "failed"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schedules (id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS triggers (id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fires (
    schedule_id TEXT NOT NULL, fire_time TEXT NOT NULL, claimed_at TEXT NOT NULL,
    outcome TEXT NOT NULL, task_id TEXT, error TEXT, versions TEXT,
    PRIMARY KEY (schedule_id, fire_time));
CREATE TABLE IF NOT EXISTS files (
    trigger_id TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL, claimed_at TEXT NOT NULL,
    task_id TEXT, error TEXT, versions TEXT, PRIMARY KEY (trigger_id, path, sha256));
CREATE TABLE IF NOT EXISTS signatures (
    trigger_id TEXT NOT NULL, signature TEXT NOT NULL, seen_at TEXT NOT NULL,
    PRIMARY KEY (trigger_id, signature));
"""


def _iso(moment: datetime) -> str:
    """A stored time: UTC, ISO 8601 with seconds (sorts as text in time order)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


# A fire time claimed to start whose start was never recorded, neither as a task nor a failure.
_UNSETTLED = "outcome = 'started' AND task_id IS NULL AND error IS NULL"


class Schedule(BaseModel):
    """A plan that runs by a rule (``rules``) on a calendar, with vars and a version pin."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    plan_id: PlanId
    rule: Rule
    calendar: CalendarName = "jp"
    vars: dict[str, Any] = Field(default_factory=dict)
    # "latest-approved" (the newest approved version when it fires), "working" (the working
    # copy; only where approval is not required) or a version's full hash.
    version: str = "latest-approved"
    misfire: Misfire = "run_once"
    created_by: str
    created_at: datetime


class Trigger(BaseModel):
    """A plan started by a webhook call or by a new file in a watched folder."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    kind: Literal["webhook", "folder"]
    plan_id: PlanId
    vars: dict[str, Any] = Field(default_factory=dict)
    version: str = "latest-approved"
    folder: str | None = None  # relative to the workspace root (folder triggers)
    file_var: str = "file"  # the var a new file's path is given as (folder triggers)
    secret: str | None = None  # the HMAC key (webhook triggers)
    created_by: str
    created_at: datetime


_Kept = TypeVar("_Kept", Schedule, Trigger)


class Fire(BaseModel):
    """One handled fire time of a schedule."""

    model_config = ConfigDict(frozen=True)
    schedule_id: str
    fire_time: datetime
    claimed_at: datetime
    outcome: FireOutcome
    task_id: str | None = None
    error: str | None = None
    # What the started run runs, as its task's door resolved it: plan id -> version hash, the
    # plan first, then every subflow it calls (None: not started, or a run of the working copy).
    versions: dict[str, str] | None = None


_FIRE_COLUMNS = "schedule_id, fire_time, claimed_at, outcome, task_id, error, versions"


def _fire(row: Sequence[Any]) -> Fire:
    return Fire(
        schedule_id=row[0],
        fire_time=_time(row[1]),
        claimed_at=_time(row[2]),
        outcome=row[3],
        task_id=row[4],
        error=row[5],
        versions=json.loads(row[6]) if row[6] else None,
    )


def _add_versions_column(conn: sqlite3.Connection) -> None:
    """A store written before fire rows (or a folder trigger's file rows) said their versions
    gains the column (empty)."""
    for table in ("fires", "files"):
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if "versions" not in columns:
            with contextlib.suppress(sqlite3.OperationalError):  # another process just added it
                conn.execute(f"ALTER TABLE {table} ADD COLUMN versions TEXT")


def _versions_kept(versions: Mapping[str, str] | None) -> str | None:
    return json.dumps(dict(versions), ensure_ascii=False) if versions else None


def not_found(what: str, ident: str, command: str) -> BlockError:
    """``command``: the CLI group that lists such records (``schedule`` / ``trigger``)."""
    return BlockError(
        f"{what} {ident} はありません。",
        code=ErrorCode.DEPENDENCY_NOT_FOUND,
        hint=f"keiri-agent {command} list で ID を確かめてください。",
        details={"id": ident},
    )


def new_id(prefix: str) -> str:
    """A short id for a schedule (``s-``) or trigger (``t-``): 48 random bits."""
    return f"{prefix}-{secrets.token_hex(6)}"


class ScheduleStore:
    """The SQLite file of schedules, triggers and their claims; safe across threads and
    processes (a connection per operation)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.schedules = RecordTable(self, Schedule, "schedules", "予定")
        self.triggers = RecordTable(self, Trigger, "triggers", "トリガー")

    @classmethod
    def of(cls, settings: Any) -> ScheduleStore:
        return cls(Path(settings.keiri_workspace_root) / STORE_DIR / STORE_FILE)

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        fresh = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            if fresh:
                self.path.chmod(0o600)  # webhook secrets are in it
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_SCHEMA)
            _add_versions_column(conn)
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    # --- fire times: the idempotency key ------------------------------------------------------

    def claim(
        self,
        schedule_id: str,
        fire_time: datetime,
        outcome: FireOutcome,
        *,
        now: datetime,
        error: str | None = None,
        missed: Sequence[datetime] = (),
        missed_error: str | None = None,
    ) -> bool:
        """Take the fire time ``fire_time`` of a schedule for this process: True when no process
        took it before (the caller then starts it), False when one did. The older fire times
        ``missed`` with it are recorded as skipped (with ``missed_error``) in the same
        transaction, whichever process records them first: none is left without a record."""
        with self._tx() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO fires VALUES (?, ?, ?, 'skipped', NULL, ?, NULL)",
                [(schedule_id, _iso(f), _iso(now), missed_error) for f in missed],
            )
            cursor = conn.execute(
                "INSERT OR IGNORE INTO fires VALUES (?, ?, ?, ?, NULL, ?, NULL)",
                (schedule_id, _iso(fire_time), _iso(now), outcome, error),
            )
            return cursor.rowcount == 1

    def settle(
        self,
        schedule_id: str,
        fire_time: datetime,
        outcome: FireOutcome,
        *,
        task_id: str | None = None,
        error: str | None = None,
        versions: Mapping[str, str] | None = None,
    ) -> None:
        """Record what became of a claimed fire time (``versions``: what its run runs)."""
        kept = _versions_kept(versions)
        with self._tx() as conn:
            conn.execute(
                "UPDATE fires SET outcome = ?, task_id = ?, error = ?, versions = ? "
                "WHERE schedule_id = ? AND fire_time = ?",
                (outcome, task_id, error, kept, schedule_id, _iso(fire_time)),
            )

    def last_fire(self, schedule_id: str) -> datetime | None:
        """The newest fire time handled for a schedule (None: none yet)."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT MAX(fire_time) FROM fires WHERE schedule_id = ?", (schedule_id,)
            ).fetchone()
        return _time(row[0]) if row and row[0] else None

    def fires(self, schedule_id: str | None = None, limit: int = 50) -> list[Fire]:
        """The newest handled fire times, newest first."""
        query = f"SELECT {_FIRE_COLUMNS} FROM fires"
        args: tuple[Any, ...] = ()
        if schedule_id is not None:
            query += " WHERE schedule_id = ?"
            args = (schedule_id,)
        with self._tx() as conn:  # the fire times handled at once: the newest first
            order = " ORDER BY claimed_at DESC, fire_time DESC LIMIT ?"
            rows = conn.execute(query + order, (*args, limit))
            found = rows.fetchall()
        return [_fire(row) for row in found]

    def unsettled(self, before: datetime) -> list[Fire]:
        """Fire times claimed to start before ``before`` for which neither a task nor an error
        was recorded: the process that claimed them stopped between the claim and the start."""
        if not self.path.exists():  # nothing saved yet: a server does not make the file
            return []
        with self._tx() as conn:
            found = conn.execute(
                f"SELECT {_FIRE_COLUMNS} FROM fires WHERE {_UNSETTLED} AND claimed_at < ?",
                (_iso(before),),
            ).fetchall()
        return [_fire(row) for row in found]

    def take_over(self, fire: Fire, *, now: datetime) -> bool:
        """Take an unsettled fire time over from the process that stopped: True for the one
        process whose update finds it as :meth:`unsettled` read it."""
        with self._tx() as conn:
            cursor = conn.execute(
                f"UPDATE fires SET claimed_at = ? WHERE {_UNSETTLED} "
                "AND schedule_id = ? AND fire_time = ? AND claimed_at = ?",
                (_iso(now), fire.schedule_id, _iso(fire.fire_time), _iso(fire.claimed_at)),
            )
            return cursor.rowcount == 1

    # --- folder triggers' files ----------------------------------------------------------------

    def claim_file(self, trigger_id: str, path: str, sha256: str, *, now: datetime) -> bool:
        """Take a file (by path and content) for a run: True the first time only."""
        with self._tx() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO files (trigger_id, path, sha256, claimed_at) "
                "VALUES (?, ?, ?, ?)",
                (trigger_id, path, sha256, _iso(now)),
            )
            return cursor.rowcount == 1

    def settle_file(
        self,
        trigger_id: str,
        path: str,
        sha256: str,
        task_id: str | None,
        error: str | None,
        versions: Mapping[str, str] | None = None,
    ) -> None:
        """Record what became of a claimed file (``versions``: what its run runs, as a fire
        row keeps them)."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE files SET task_id = ?, error = ?, versions = ? "
                "WHERE trigger_id = ? AND path = ? AND sha256 = ?",
                (task_id, error, _versions_kept(versions), trigger_id, path, sha256),
            )

    def files(self, trigger_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """A folder trigger's file rows, oldest first (``limit``: only the newest so many)."""
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT path, sha256, claimed_at, task_id, error, versions FROM files "
                "WHERE trigger_id = ? ORDER BY claimed_at DESC, rowid DESC LIMIT ?",
                (trigger_id, -1 if limit is None else limit),
            ).fetchall()
        keys = ("path", "sha256", "claimed_at", "task_id", "error")
        return [
            {**dict(zip(keys, row[:5], strict=True)), "versions": json.loads(row[5] or "null")}
            for row in reversed(rows)
        ]

    def claim_signature(
        self, trigger_id: str, signature: str, *, now: datetime, forget_before: datetime
    ) -> bool:
        """Record a webhook signature: False when it was seen before (a replay). Signatures
        older than ``forget_before`` (outside the replay window) are dropped."""
        with self._tx() as conn:
            conn.execute("DELETE FROM signatures WHERE seen_at < ?", (_iso(forget_before),))
            cursor = conn.execute(
                "INSERT OR IGNORE INTO signatures VALUES (?, ?, ?)",
                (trigger_id, signature, _iso(now)),
            )
            return cursor.rowcount == 1


class RecordTable(Generic[_Kept]):
    """The schedules or the triggers of a store: one record a row, kept as JSON, in the order
    they were made; ``what`` is what a person calls one (in the error for an unknown id)."""

    def __init__(
        self,
        store: ScheduleStore,
        model: type[_Kept],
        table: Literal["schedules", "triggers"],
        what: str,
    ) -> None:
        self._store = store
        self._model: type[_Kept] = model
        self._table, self._what = table, what

    def add(self, record: _Kept) -> _Kept:
        with self._store._tx() as conn:
            conn.execute(
                f"INSERT INTO {self._table} VALUES (?, ?)", (record.id, record.model_dump_json())
            )
        return record

    def all(self) -> list[_Kept]:
        if not self._store.path.exists():  # nothing saved yet: a server does not make the file
            return []
        with self._store._tx() as conn:
            rows = conn.execute(f"SELECT data FROM {self._table} ORDER BY rowid").fetchall()
        return [self._model.model_validate_json(row[0]) for row in rows]  # in the order made

    def get(self, ident: str) -> _Kept:
        with self._store._tx() as conn:
            row = conn.execute(f"SELECT data FROM {self._table} WHERE id = ?", (ident,)).fetchone()
        if row is None:
            raise not_found(self._what, ident, self._table.removesuffix("s"))
        return self._model.model_validate_json(row[0])

    def remove(self, ident: str) -> _Kept:
        record = self.get(ident)
        with self._store._tx() as conn:
            conn.execute(f"DELETE FROM {self._table} WHERE id = ?", (ident,))
        return record
