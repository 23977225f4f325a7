"""What a plan run leaves for an audit: its version, the files it read and wrote, with their
hashes, and the run record that seals its log (:class:`RunTrail` does all three for a run).

- Before the run starts, the version of its plan text and of each subflow is looked up
  (``keiri_agent.versions.check_run``, which refuses an unapproved one when approval is
  required); ``plan_start`` names them, their approval and who started the run.
- :class:`FileLedger` watches a run: every file a block is let read (``FileAccess.read``) is
  logged once as a ``file_digest`` event (``role: input``) with its SHA-256 when it is first
  opened; every file the run wrote (its ``file_write`` events) is logged the same way
  (``role: output``) when the run ends, before its ``plan_complete``. Being events, they are
  part of the log's hash chain.
- The run record, ``<log stem>.files/record.json``, is written once the log is closed: the run,
  the log's number of lines and its last hash-chain value (``events.chain.Seal``). ``keiri-agent
  audit verify`` checks the log against it, so lines cut from the end or added after it show.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of
from keiri_agent.events.chain import Seal
from keiri_agent.events.models import FileWrite, RunEvent
from keiri_agent.events.stream import EventStream
from keiri_agent.localtime import utc_text
from keiri_agent.plan._dsl.loader import PlanSource
from keiri_agent.plan._dsl.models import Plan
from keiri_agent.plan._graph.subflows import SubflowLoader
from keiri_agent.plan._run.output_store import OutputStore
from keiri_agent.versions import RunVersion, check_run
from keiri_agent.workspace import atomic_path

__all__ = [
    "RECORD_FILE",
    "FileLedger",
    "RunSeal",
    "RunTrail",
    "file_sha256",
    "read_seal",
    "write_seal",
]

RECORD_FILE = "record.json"
_CHUNK = 1 << 20  # bytes hashed per read


def file_sha256(path: Path) -> tuple[str | None, int | None]:
    """``(hex digest, size)`` of a regular file; ``(None, None)`` for a folder or a file that
    cannot be read (it is named without a hash rather than guessed at)."""
    try:
        if not path.is_file():
            return None, None
        digest = hashlib.sha256()
        size = 0
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
        return digest.hexdigest(), size
    except OSError:
        return None, None


class FileLedger:
    """Logs the files one run reads and writes, each once, with its SHA-256."""

    def __init__(self, events: EventStream) -> None:
        self.events = events
        self._lock = threading.Lock()
        self._read: set[str] = set()
        self._written: dict[str, None] = {}  # in the order they were claimed

    def read(self, path: Path, field: str) -> None:
        """A ``FileAccess`` observer: a block was let read ``path`` for input ``field``."""
        key = str(path.absolute())
        with self._lock:
            if key in self._read:
                return
            self._read.add(key)
        digest, size = file_sha256(path)
        self.events.emit(
            "file_digest", role="input", path=key, sha256=digest, size=size, field=field
        )

    def see(self, event: RunEvent) -> None:
        """A stream listener: remember each file the run claims to write."""
        if isinstance(event, FileWrite):
            with self._lock:
                self._written[event.path] = None

    def finish(self) -> None:
        """Log the files the run wrote, as they are now (call before ``plan_complete``)."""
        with self._lock:
            written = list(self._written)
        for path in written:
            digest, size = file_sha256(Path(path))
            if digest is not None:
                self.events.emit("file_digest", role="output", path=path, sha256=digest, size=size)


@dataclass(frozen=True)
class RunSeal:
    """A run record: which run, and the seal of its log."""

    run_id: str
    plan_id: str
    seal: Seal
    sealed_at: datetime


def _record_path(log_path: Path) -> Path:
    return OutputStore(log_path).dir / RECORD_FILE


def write_seal(log_path: Path, run_id: str, plan_id: str, seal: Seal, *, durable: bool) -> Path:
    """Write the run record of a closed log (on disk before it returns when ``durable``)."""
    path = _record_path(log_path)
    data = {
        "run_id": run_id,
        "plan_id": plan_id,
        "log": log_path.name,
        "lines": seal.lines,
        "digest": seal.digest,
        "sealed_at": utc_text(datetime.now(UTC)),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path, durable=durable) as tmp:
            tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    except OSError as exc:
        raise BlockError(
            f"実行 {run_id} の実行記録を書けません（{reason_of(exc)}）。",
            code=ErrorCode.PERMISSION_DENIED,
            hint="実行ログの保存先（KEIRI_RUNS_DIR）の空き容量と書き込み権限を確認してください"
            "（ログ自体は書き終えています）。",
            details={"run_id": run_id, "file": str(path), "cause": cause_of(exc)},
        ) from exc
    return path


def read_seal(log_path: Path) -> RunSeal | None:
    """The run record of a log (None: the run has none: it has not ended, or the record was
    removed); BlockError when it is there but unreadable."""
    path = _record_path(log_path)
    if not path.is_file():
        return None
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        return RunSeal(
            run_id=str(data["run_id"]),
            plan_id=str(data["plan_id"]),
            seal=Seal(int(data["lines"]), str(data["digest"])),
            sealed_at=datetime.fromisoformat(str(data["sealed_at"])),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BlockError(
            f"実行記録 {path} を読み取れません（{reason_of(exc)}）。",
            code=ErrorCode.INTEGRITY_FAILED,
            hint="実行記録が書き換えられていないか確認してください。",
            details={"file": str(path), "cause": cause_of(exc)},
        ) from None


class RunTrail:
    """One run's audit trail: its versions (checked at once), its files, its record."""

    def __init__(self, versions: list[RunVersion], started_by: str) -> None:
        self.versions = versions
        self.started_by = started_by
        self._ledger: FileLedger | None = None
        self._plan_id = versions[0].plan_id

    @classmethod
    def check(
        cls,
        settings: Settings,
        model: Plan,
        source: PlanSource,
        subflows: SubflowLoader,
        started_by: str,
    ) -> RunTrail:
        """The versions of ``source`` and of the subflows its validation read; the refusal of
        an unapproved one when approval is required (before the run has a log). A run of the
        saved version its door resolved (``subflows.saved``) runs those versions, with their
        approvals as they stood at the door (``plan._graph.saved``), checked no second time."""
        loaded = [s for s in subflows.loaded() if s.plan and s.source]
        if subflows.saved is not None:
            found = subflows.saved.run_versions(
                source.text, [(s.plan_id, s.source.text) for s in loaded if s.source]
            )
            if found is not None:
                return cls(found, started_by)
        called = [(s.plan.id, s.source.text) for s in loaded if s.plan and s.source]
        return cls(check_run(settings, [(model.id, source.text), *called]), started_by)

    def start_fields(self) -> dict[str, Any]:
        """What ``plan_start`` says of the run's version, its approval and who started it."""
        plan, *called = self.versions
        return {
            "plan_hash": plan.version,
            "approval": plan.approval,
            "started_by": self.started_by,
            "subflow_versions": {v.plan_id: v.version for v in called} or None,
        }

    def watch(self, stream: EventStream) -> None:
        self._ledger = FileLedger(stream)
        stream.add_listener(self._ledger.see)

    def read(self, path: Path, field: str) -> None:
        """The run's ``FileAccess`` observer."""
        if self._ledger is not None:
            self._ledger.read(path, field)

    def finish(self) -> None:
        if self._ledger is not None:
            self._ledger.finish()

    def seal(self, stream: EventStream, *, durable: bool) -> None:
        """Write the run record of the run's closed log."""
        seal, log_path = stream.seal, stream.log_path
        assert seal is not None
        assert log_path is not None
        write_seal(log_path, stream.run_id, self._plan_id, seal, durable=durable)
