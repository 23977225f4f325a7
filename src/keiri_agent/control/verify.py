"""Checking run logs for tampering: ``keiri-agent audit verify``.

A plan run's log is hash-chained line by line and, once the run ends, sealed by its run record
(``events.chain``, ``plan``'s run record). :func:`scan_log` reads a log once: it checks the
chain against the seal and keeps what an audit export needs (the ``plan_start``, the
``file_digest`` lines, the ``plan_complete``), parsing only those lines.

Each log is one of:

- ``intact``: the chain holds and the log ends where its record says;
- ``tampered``: a line was changed, removed or added (each finding names its line), the record
  is missing although the log says the run ended, or the record is for another run;
- ``open``: the run has not ended (no ``plan_complete``, no record): the lines so far are
  checked, but lines cut from the end cannot be told from a run that is still going;
- ``unchained``: a log written before logs were hash-chained (no line has a chain value and
  there is no record): nothing can be checked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from keiri_agent.errors import BlockError
from keiri_agent.events import FileDigest, PlanComplete, PlanStart, parse_event
from keiri_agent.events.chain import ChainFinding, split_line, verify_lines
from keiri_agent.events.logfile import open_log
from keiri_agent.plan import find_run, read_seal

__all__ = [
    "CHECK_LABELS",
    "CheckStatus",
    "LogScan",
    "RunCheck",
    "plan_run_logs",
    "scan_log",
    "verify_runs",
]

CheckStatus = Literal["intact", "tampered", "open", "unchained"]
CHECK_LABELS: dict[CheckStatus, str] = {
    "intact": "改ざんなし",
    "tampered": "改ざんあり",
    "open": "未終了（終わりの記録がないため末尾の削除は確かめられません）",
    "unchained": "ハッシュチェーン導入前のログ（確かめられません）",
}
_KEPT = (b'"event": "plan_start"', b'"event": "file_digest"', b'"event": "plan_complete"')


@dataclass
class RunCheck:
    """What :func:`scan_log` found in one log."""

    log_path: Path
    status: CheckStatus
    run_id: str | None = None
    plan_id: str | None = None
    lines: int = 0
    # The chain value of the log's last line: the whole log in one hash, for an auditor to
    # keep elsewhere (a log rewritten later, chain and record recomputed, no longer has it).
    digest: str | None = None
    findings: list[ChainFinding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # about the record, not a line

    def to_dict(self) -> dict[str, Any]:
        return {
            "log": str(self.log_path),
            "run_id": self.run_id,
            "plan_id": self.plan_id,
            "status": self.status,
            "lines": self.lines,
            "digest": self.digest,
            "findings": [f.to_dict() for f in self.findings],
            "problems": self.problems,
        }

    def describe(self) -> list[str]:
        return [*self.problems, *(f.describe() for f in self.findings)]


@dataclass
class LogScan:
    check: RunCheck
    start: PlanStart | None = None
    end: PlanComplete | None = None
    digests: list[FileDigest] = field(default_factory=list)


class _Keeper:
    """Passes a log's raw lines on to the chain check and keeps the few an audit needs."""

    def __init__(self) -> None:
        self.kept: list[bytes] = []
        self.chained = False
        self.first: bytes | None = None

    def lines(self, handle: Any) -> Iterator[bytes]:
        for raw in iter(handle.readline, b""):
            if self.first is None:
                self.first = raw
            if not self.chained and b'"chain": "' in raw:
                self.chained = True
            if any(marker in raw for marker in _KEPT):
                self.kept.append(raw)
            yield raw


def _events(kept: list[bytes]) -> Iterator[Any]:
    for raw in kept:
        try:
            text, _ = split_line(raw.rstrip(b"\n").decode("utf-8"))
            yield parse_event(json.loads(text))
        except (ValueError, BlockError):
            continue  # a changed line: the chain check names it


def scan_log(log_path: Path) -> LogScan:
    """Check one plan run log against its run record (see the module docstring)."""
    record = None
    problems: list[str] = []
    try:
        record = read_seal(log_path)
    except BlockError as exc:
        problems.append(exc.message)
    keeper = _Keeper()
    with open_log(log_path) as handle:
        report = verify_lines(keeper.lines(handle), record.seal if record else None)
    scan = LogScan(
        RunCheck(
            log_path, "intact", lines=report.lines, digest=report.last, findings=report.findings
        )
    )
    for event in _events(keeper.kept):
        if isinstance(event, PlanStart) and scan.start is None:
            scan.start = event
        elif isinstance(event, FileDigest):
            scan.digests.append(event)
        elif isinstance(event, PlanComplete):
            scan.end = event
    check = scan.check
    if scan.start is not None:
        check.run_id, check.plan_id = scan.start.run_id, scan.start.plan_id
    if record is not None and check.run_id is not None and record.run_id != check.run_id:
        problems.append(f"実行記録は別の実行（{record.run_id}）のものです。")
    if record is None and not problems and scan.end is not None and keeper.chained:
        problems.append(
            "実行は終わっていますが、実行記録（.files/record.json）がありません"
            "（削除された可能性があります。末尾の削除・追記は確かめられません）。"
        )
    check.problems = problems
    # A log from before the chain: no chain value, no record, and a plan_start without the
    # version field that came with the chain (one with it had its chain values removed).
    legacy = (
        not keeper.chained and record is None and (scan.start is None or not scan.start.plan_hash)
    )
    if legacy and not problems:
        check.status, check.findings = "unchained", []
    elif problems or not report.intact:
        check.status = "tampered"
    elif record is None:
        check.status = "open"
    return scan


def plan_run_logs(runs_dir: Path) -> list[Path]:
    """The plan run logs under ``runs_dir`` at any depth (a server's task folders included),
    oldest first by name: logs whose first line is a ``plan_start``."""
    if not runs_dir.is_dir():
        return []
    found = []
    for log in sorted(runs_dir.rglob("*.jsonl")):
        if not log.is_file():
            continue
        with log.open("rb") as handle:
            if b'"plan_start"' in handle.readline():
                found.append(log)
    return found


def verify_runs(runs_dir: Path, run: str | None = None) -> list[RunCheck]:
    """The check of run ``run`` (an id or a log path), or of every plan run under
    ``runs_dir``."""
    logs = [find_run(run, runs_dir)] if run is not None else plan_run_logs(runs_dir)
    return [scan_log(log).check for log in logs]
