"""Run logs on disk: ``runs/{source_id}/{timestamp}.jsonl``, read back and listed."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from keiri_agent.config import load_settings
from keiri_agent.errors import BlockError, ErrorCode, cause_of, input_error, reason_of
from keiri_agent.events.logfile import first_event, open_log, read_lines
from keiri_agent.events.models import LLMUsage, RunEvent
from keiri_agent.events.sink import JsonlSink
from keiri_agent.events.stream import EventStream
from keiri_agent.workspace import confine

MAX_SAME_SECOND_RUNS = 10_000
RUN_FILE_FORMAT = "%Y%m%dT%H%M%SZ"
_RUN_FILE_RE = re.compile(r"^(?P<stamp>.+?)(?:-(?P<n>\d+))?$")


# --- run logs on disk ------------------------------------------------------------------------


def _make_dir(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError, PermissionError) as exc:
        raise BlockError(
            f"実行ログの保存先にディレクトリを作れません: {directory}（{reason_of(exc)}）",
            code=ErrorCode.PERMISSION_DENIED,
            hint="実行ログの保存先（--runs-dir または KEIRI_RUNS_DIR）には、書き込めるディレクトリ"
            "を指定してください（同じ名前のファイルがあると作れません）。",
            details={"directory": str(directory), "cause": cause_of(exc)},
        ) from exc


def _source_dir(source_id: str, runs_dir: Path | str | None) -> Path:
    base = Path(runs_dir) if runs_dir is not None else load_settings().keiri_runs_dir
    base = base.absolute()
    _make_dir(base)
    return confine(base, source_id)


def open_run(
    source_id: str,
    *,
    runs_dir: Path | str | None = None,
    run_id: str | None = None,
    now: datetime | None = None,
    fsync: bool | None = None,
) -> EventStream:
    """Start the log of one run at ``runs_dir/{source_id}/{timestamp}.jsonl``.

    ``source_id`` is a plan or agent id, possibly with ``/`` (``common/validation_flow``); it must
    stay inside ``runs_dir`` (PathEscapeError otherwise). Runs started in the same second get
    ``-2``, ``-3``, ... suffixes; files are created exclusively, so runs never share one.
    ``fsync`` (default: the ``KEIRI_RUN_LOG_FSYNC`` setting) makes the log durable: see
    :class:`JsonlSink` and ``DURABLE_EVENTS``. Every line carries its hash-chain value
    (``events.chain``); the stream's ``seal`` after closing is what the run's record keeps.
    """
    durable = load_settings().keiri_run_log_fsync if fsync is None else fsync
    when = (now or datetime.now(UTC)).astimezone(UTC)
    directory = _source_dir(source_id, runs_dir)
    _make_dir(directory)
    stamp = when.strftime(RUN_FILE_FORMAT)
    rid = run_id or f"run_{when.strftime('%Y%m%d%H%M%S')}_{secrets.token_hex(4)}"
    for n in range(1, MAX_SAME_SECOND_RUNS + 1):
        path = directory / (f"{stamp}.jsonl" if n == 1 else f"{stamp}-{n}.jsonl")
        try:
            sink = JsonlSink(path, exclusive=True, fsync=durable, chain=True)
        except FileExistsError:
            continue
        return EventStream(rid, source_id, sink=sink)
    raise BlockError(
        f"実行ログを作成できません: {directory} に {stamp} の連番ファイルが残っていません。",
        code=ErrorCode.PERMISSION_DENIED,
        hint="実行ログのディレクトリ（KEIRI_RUNS_DIR）の古いログを整理してください。",
        details={"directory": str(directory), "timestamp": stamp},
    )


def replay(path: Path | str, after_id: int = 0) -> Iterator[RunEvent]:
    """Yield the events of a run log with ``id > after_id``, in file order.

    A last line without its newline that does not parse is the tail a crash cut off while it
    was being written (every line is one write): it is left out, so the log reads as the
    events that were whole. A malformed line anywhere else is an error naming the line.
    """
    log = Path(path)
    with open_log(log) as handle:
        yield from read_lines(handle, log, after_id)


def read_events(path: Path | str) -> list[RunEvent]:
    """All events of a run log (raises BlockError naming the line of a malformed entry)."""
    return list(replay(path))


def _run_sort_key(path: Path) -> tuple[str, int]:
    match = _RUN_FILE_RE.match(path.stem)
    if match is None:  # pragma: no cover - the pattern matches any non-empty stem
        return (path.stem, 0)
    return (match["stamp"], int(match["n"] or 1))


def list_runs(source_id: str, *, runs_dir: Path | str | None = None) -> list[Path]:
    """The run logs of ``source_id``, newest first."""
    directory = _source_dir(source_id, runs_dir)
    if not directory.is_dir():
        return []
    files = [p for p in directory.glob("*.jsonl") if p.is_file()]
    return sorted(files, key=_run_sort_key, reverse=True)


def find_run_log(source_id: str, run_id: str, *, runs_dir: Path | str | None = None) -> Path:
    """The log of run ``run_id`` of ``source_id`` (its first line names the run)."""
    for path in list_runs(source_id, runs_dir=runs_dir):
        first = first_event(path)
        if first is not None and first.run_id == run_id:
            return path
    raise input_error(
        f"{source_id} の実行 {run_id} のログが見つかりません。",
        "実行ログの保存先（KEIRI_RUNS_DIR）が実行中に変わっていないか確認してください。",
        source_id=source_id,
        run_id=run_id,
    )


def summarize_llm_usage(calls: Iterable[RunEvent | LLMUsage]) -> dict[str, Any]:
    """Token and latency totals of LLM calls, overall and per ``provider:model``, and the
    personal data masked before them (``masked``: kind → values).

    ``calls`` is a run's events (only its ``llm_call`` events count) or a ``UsageLedger``'s
    records: the one summation behind both the run log's summary and the ledger's totals."""

    def empty() -> dict[str, Any]:
        keys = ("calls", "failed_calls", "input_tokens", "output_tokens", "total_tokens")
        return {**dict.fromkeys(keys, 0), "latency_ms": 0.0}

    total = empty()
    masked: dict[str, int] = {}  # personal data masked before the calls, per kind
    by_model: dict[str, dict[str, Any]] = {}
    for event in calls:
        if not isinstance(event, LLMUsage):
            continue
        model = by_model.setdefault(f"{event.provider}:{event.model}", empty())
        for bucket in (total, model):
            bucket["calls"] += 1
            bucket["failed_calls"] += 0 if event.ok else 1
            bucket["input_tokens"] += event.input_tokens
            bucket["output_tokens"] += event.output_tokens
            bucket["total_tokens"] += event.total_tokens
            bucket["latency_ms"] += event.latency_ms
        for kind, n in (event.masked or {}).items():
            masked[kind] = masked.get(kind, 0) + n
    return {**total, "masked": masked, "by_model": by_model}
