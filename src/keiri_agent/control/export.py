"""The runs of a period for an auditor: ``keiri-agent audit export``.

One row per plan run started in the period (dates in ``KEIRI_TIMEZONE``, both days included):
the plan and the version that ran (its hash and number), who approved that version and when
(or that it was not approved), who started the run and when, how it ended, the files it read
and wrote with their SHA-256, and whether its log is intact (``control.verify``) with its last
hash-chain value (kept elsewhere, it shows a log later rewritten whole, its chain recomputed).
Everything comes from the run's own log, which the hash chain protects, never from a copy
beside it.

CSV is written with a BOM (UTF-8), so Excel opens the Japanese columns as they are; its file
columns list one ``path sha256:<hex>`` per line in the cell. JSON Lines keeps the same fields
as lists.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

from keiri_agent.control.verify import CHECK_LABELS, CheckStatus, plan_run_logs, scan_log
from keiri_agent.events import RunStatus
from keiri_agent.localtime import shown_time, utc_text
from keiri_agent.versions import VersionStore

__all__ = ["CSV_COLUMNS", "EXPORT_FORMATS", "AuditRow", "audit_rows", "render_rows"]

EXPORT_FORMATS = ("csv", "jsonl")
CSV_COLUMNS = (
    ("run_id", "実行 ID"),
    ("plan_id", "Plan"),
    ("version", "版（ハッシュ）"),
    ("version_number", "版番号"),
    ("approved_by", "承認者"),
    ("approved_at", "承認日時"),
    ("self_approved", "自己承認"),
    ("started_by", "実行者"),
    ("started_at", "開始日時"),
    ("finished_at", "終了日時"),
    ("status", "結果"),
    ("inputs", "入力ファイル（SHA-256）"),
    ("outputs", "出力ファイル（SHA-256）"),
    ("log_check", "ログの検証"),
    ("log_digest", "ログの最終ハッシュ"),
    ("log", "実行ログ"),
)


@dataclass
class AuditRow:
    """One run as an audit lists it (times are UTC; the CSV shows them in the zone)."""

    run_id: str
    plan_id: str
    started_at: datetime
    version: str | None
    version_number: int | None
    approved_by: str | None
    approved_at: str | None
    self_approved: bool | None
    started_by: str | None
    finished_at: datetime | None
    status: RunStatus | Literal["incomplete"]  # incomplete: the log ends without plan_complete
    log_check: CheckStatus
    log_digest: str | None  # the log's last hash-chain value (None: a log without the chain)
    log: str
    inputs: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        def utc(value: datetime | None) -> str | None:
            return utc_text(value) if value else None

        return {
            "run_id": self.run_id,
            "plan_id": self.plan_id,
            "version": self.version,
            "version_number": self.version_number,
            "approved_by": self.approved_by,
            "approved_at": self.approved_at,
            "self_approved": self.self_approved,
            "started_by": self.started_by,
            "started_at": utc(self.started_at),
            "finished_at": utc(self.finished_at),
            "status": self.status,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "log_check": self.log_check,
            "log_digest": self.log_digest,
            "log": self.log,
        }


def _period(start: date, end: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The period from the start of ``start`` to the end of ``end``, in ``zone``."""
    return (
        datetime.combine(start, time.min, zone),
        datetime.combine(end + timedelta(days=1), time.min, zone),
    )


def audit_rows(
    runs_dir: Path, start: date, end: date, zone: ZoneInfo, versions: VersionStore
) -> list[AuditRow]:
    """The plan runs under ``runs_dir`` (at any depth) started from ``start`` to ``end``
    (both included, dates in ``zone``), oldest first; ``versions`` numbers their versions."""
    low, high = _period(start, end, zone)
    numbers: dict[str, dict[str, int]] = {}  # plan id -> version hash -> number
    rows: list[AuditRow] = []
    for log in plan_run_logs(runs_dir):
        scan = scan_log(log)
        begin = scan.start
        if begin is None or not low <= begin.timestamp < high:
            continue
        approval = begin.approval or {}
        if begin.plan_id not in numbers:
            numbers[begin.plan_id] = {v.id: v.number for v in versions.versions(begin.plan_id)}
        rows.append(
            AuditRow(
                run_id=begin.run_id,
                plan_id=begin.plan_id,
                started_at=begin.timestamp,
                version=begin.plan_hash,
                version_number=numbers[begin.plan_id].get(begin.plan_hash or ""),
                approved_by=approval.get("by"),
                approved_at=approval.get("at"),
                self_approved=approval.get("self_approved") if approval else None,
                started_by=begin.started_by,
                finished_at=scan.end.timestamp if scan.end else None,
                status=scan.end.status if scan.end else "incomplete",
                log_check=scan.check.status,
                log_digest=scan.check.digest,
                log=str(log),
                inputs=[_file(d) for d in scan.digests if d.role == "input"],
                outputs=[_file(d) for d in scan.digests if d.role == "output"],
            )
        )
    rows.sort(key=lambda row: (row.started_at, row.run_id))
    return rows


def _file(digest: Any) -> dict[str, Any]:
    found = {"path": digest.path, "sha256": digest.sha256, "size": digest.size}
    if digest.field:
        found["field"] = digest.field
    return found


def _files(files: Sequence[dict[str, Any]]) -> str:
    return "\n".join(f"{f['path']} sha256:{f['sha256'] or '（フォルダ）'}" for f in files)


def render_rows(rows: Sequence[AuditRow], fmt: str, zone: ZoneInfo) -> str:
    """``rows`` as CSV (a header of Japanese column names, times in ``zone``) or JSON Lines."""
    if fmt == "jsonl":
        return "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([label for _name, label in CSV_COLUMNS])
    for row in rows:
        values = row.to_dict()
        values["started_at"] = shown_time(row.started_at, zone)
        values["finished_at"] = shown_time(row.finished_at, zone) if row.finished_at else ""
        values["approved_at"] = shown_time(row.approved_at, zone) if row.approved_at else ""
        values["self_approved"] = {True: "はい", False: "いいえ", None: ""}[row.self_approved]
        values["inputs"], values["outputs"] = _files(row.inputs), _files(row.outputs)
        values["log_check"] = CHECK_LABELS[row.log_check]
        values["approved_by"] = row.approved_by or "（未承認）"
        writer.writerow(["" if values[name] is None else values[name] for name, _ in CSV_COLUMNS])
    return out.getvalue()
