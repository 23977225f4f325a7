"""Typed run events: one stream that the CLI, Streamlit and the SSE server all consume.

A run (a plan run, an agent session, a conversion task) emits events into an
:class:`EventStream`. The stream numbers them (``id`` 1, 2, 3, ... in order), appends each as one
JSON line to ``runs/{source_id}/{timestamp}.jsonl`` (seed 002 §8.4), keeps them in memory and
wakes every subscriber. Readers subscribe live (:meth:`EventStream.subscribe`,
:meth:`EventStream.asubscribe`, replaying from any id first) or read a run back from its log
(:func:`read_events`, :func:`replay`); an SSE client reconnecting with ``Last-Event-ID: k`` gets
exactly the events after ``k``.

Event kinds: plan/node events (seed 002 §8.4), progress events (seed 003 §3) and ``llm_call`` for
token accounting. Each line is one flat JSON object (keys whose value is null are left out)::

    {"id": 3, "event": "node_start", "run_id": "run_...", "timestamp": "2025-01-01T10:00:01Z",
     "node_id": "collect_inputs", "block": "ui.interactive_input"}

Logs carry summaries, not data (seed 002 §12): non-JSON values (DataFrames, bytes, paths, ...)
and oversized strings or lists in ``inputs``/``outputs``/``item``/``error`` are replaced by short
descriptions such as ``"<DataFrame 100x3>"`` or ``"<bytes 2048>"``. The summary is applied when
the event is built, so the live event and the one read back from the log are equal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import secrets
import threading
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from datetime import UTC, date, datetime
from enum import Enum, StrEnum
from functools import partial
from pathlib import Path, PurePath
from types import TracebackType
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from keiri_agent.config import load_settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.workspace import confine

__all__ = [
    "MAX_LOG_ITEMS",
    "MAX_LOG_STRING_CHARS",
    "AnyEvent",
    "CodeExec",
    "CodeGen",
    "ErrorEvent",
    "EventEmitter",
    "EventStream",
    "EventType",
    "JsonlSink",
    "LLMCall",
    "Log",
    "LoopIteration",
    "NodeComplete",
    "NodeError",
    "NodeSkipped",
    "NodeStart",
    "NullEmitter",
    "PlanComplete",
    "PlanStart",
    "RunEvent",
    "Stage",
    "list_runs",
    "open_run",
    "parse_event",
    "read_events",
    "replay",
    "summarize_llm_usage",
    "summarize_value",
]

MAX_LOG_STRING_CHARS = 4000  # longer strings in payloads are cut to exactly this length
MAX_LOG_ITEMS = 200  # longer lists/dicts in payloads keep this many entries
MAX_LOG_DEPTH = 8  # deeper containers are replaced by a one-line summary
MAX_SAME_SECOND_RUNS = 10_000
RUN_FILE_FORMAT = "%Y%m%dT%H%M%SZ"
_RUN_FILE_RE = re.compile(r"^(?P<stamp>.+?)(?:-(?P<n>\d+))?$")


class EventType(StrEnum):
    """Every event kind: seed 002 §8.4, seed 003 §3, and LLM usage."""

    PLAN_START = "plan_start"
    NODE_START = "node_start"
    NODE_COMPLETE = "node_complete"
    NODE_SKIPPED = "node_skipped"
    NODE_ERROR = "node_error"
    LOOP_ITERATION = "loop_iteration"
    PLAN_COMPLETE = "plan_complete"
    STAGE = "stage"
    LOG = "log"
    CODE_GEN = "code_gen"
    CODE_EXEC = "code_exec"
    ERROR = "error"
    LLM_CALL = "llm_call"


# --- summaries of payload values -------------------------------------------------------------


def _cut(text: str) -> str:
    if len(text) <= MAX_LOG_STRING_CHARS:
        return text
    # The result is exactly MAX_LOG_STRING_CHARS long, so summarizing again changes nothing.
    suffix = f"…(全{len(text)}文字)"
    return text[: MAX_LOG_STRING_CHARS - len(suffix)] + suffix


def _describe(value: object) -> str:
    name = type(value).__name__
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return f"<{name} {'x'.join(str(n) for n in shape)}>"
    if isinstance(value, Mapping):
        return f"<{name} {len(value)} keys>"
    if isinstance(value, list | tuple | set | frozenset):
        return f"<{name} {len(value)} items>"
    return f"<{name}>"


def summarize_value(value: Any, *, _depth: int = 0) -> Any:
    """A JSON-serializable summary of ``value`` for logs (idempotent on its own output)."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, Enum):
        return summarize_value(value.value, _depth=_depth)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{type(value).__name__} {len(value)}>"
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, BlockError):
        return summarize_value(value.to_dict(), _depth=_depth)
    if isinstance(value, BaseException):
        return _cut(f"<{type(value).__name__}: {value}>")
    if isinstance(value, BaseModel):
        return summarize_value(value.model_dump(mode="json"), _depth=_depth)
    if type(value).__module__.split(".")[0] == "numpy" and getattr(value, "shape", None) == ():
        return summarize_value(value.item(), _depth=_depth)  # numpy scalar
    if _depth >= MAX_LOG_DEPTH and isinstance(value, Mapping | list | tuple | set | frozenset):
        return _describe(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for i, (key, item) in enumerate(value.items()):
            if i == MAX_LOG_ITEMS - 1 and len(value) > MAX_LOG_ITEMS:
                out["…"] = f"(全{len(value)}件)"
                break
            out[str(key)] = summarize_value(item, _depth=_depth + 1)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        if len(items) > MAX_LOG_ITEMS:
            head = [summarize_value(v, _depth=_depth + 1) for v in items[: MAX_LOG_ITEMS - 1]]
            return [*head, f"…(全{len(items)}件)"]
        return [summarize_value(v, _depth=_depth + 1) for v in items]
    return _describe(value)


def _summarize_dict(value: Any) -> Any:
    return summarize_value(value) if isinstance(value, Mapping) else value


JsonValue = Annotated[Any, BeforeValidator(summarize_value)]
JsonDict = Annotated[dict[str, Any], BeforeValidator(_summarize_dict)]


# --- event models ----------------------------------------------------------------------------


class RunEvent(BaseModel):
    """Fields every event has. ``id`` increases by one per event within a run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int = Field(ge=0)
    event: str
    run_id: str
    timestamp: datetime
    node_id: str | None = None

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    @field_serializer("timestamp")
    def _iso_z(self, value: datetime) -> str:
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")

    def to_dict(self) -> dict[str, Any]:
        """The flat JSON object of a log line; keys whose value is None are left out."""
        return {k: v for k, v in self.model_dump(mode="json").items() if v is not None}

    def to_json(self) -> str:
        """One log line (without the newline); non-ASCII text is kept readable."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


class PlanStart(RunEvent):
    event: Literal["plan_start"] = "plan_start"
    plan_id: str
    inputs: JsonDict = Field(default_factory=dict)


class NodeStart(RunEvent):
    event: Literal["node_start"] = "node_start"
    block: str | None = None


class NodeComplete(RunEvent):
    event: Literal["node_complete"] = "node_complete"
    outputs: JsonDict = Field(default_factory=dict)
    duration_ms: float = 0.0


class NodeSkipped(RunEvent):
    event: Literal["node_skipped"] = "node_skipped"
    reason: str
    condition: str | None = None


class NodeError(RunEvent):
    event: Literal["node_error"] = "node_error"
    error: JsonDict  # BlockError.to_dict()
    retry: int = 0


class LoopIteration(RunEvent):
    event: Literal["loop_iteration"] = "loop_iteration"
    iteration: int
    item: JsonValue = None


class PlanComplete(RunEvent):
    event: Literal["plan_complete"] = "plan_complete"
    status: Literal["success", "failed", "cancelled", "partial"]
    total_duration_ms: float = 0.0
    error: JsonDict | None = None


class Stage(RunEvent):
    event: Literal["stage"] = "stage"
    step: str
    status: str
    progress: float | None = None


class Log(RunEvent):
    event: Literal["log"] = "log"
    msg: str
    level: str = "info"


class CodeGen(RunEvent):
    event: Literal["code_gen"] = "code_gen"
    code: str


class CodeExec(RunEvent):
    event: Literal["code_exec"] = "code_exec"
    stdout: str = ""
    stderr: str = ""
    success: bool | None = None


class ErrorEvent(RunEvent):
    event: Literal["error"] = "error"
    step: str | None = None
    message: str
    error: JsonDict | None = None


class LLMCall(RunEvent):
    event: Literal["llm_call"] = "llm_call"
    role: str
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    latency_ms: float = 0.0
    attempts: int = 1
    ok: bool = True
    error_code: str | None = None
    structured: bool = False
    streamed: bool = False

    @model_validator(mode="before")
    @classmethod
    def _default_total(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("total_tokens") is None:
            total = int(data.get("input_tokens") or 0) + int(data.get("output_tokens") or 0)
            return {**data, "total_tokens": total}
        return data


AnyEvent = Annotated[
    PlanStart
    | NodeStart
    | NodeComplete
    | NodeSkipped
    | NodeError
    | LoopIteration
    | PlanComplete
    | Stage
    | Log
    | CodeGen
    | CodeExec
    | ErrorEvent
    | LLMCall,
    Field(discriminator="event"),
]
_ADAPTER: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)


def _invalid_event(exc: ValidationError, data: Mapping[str, Any]) -> BlockError:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '(全体)'}: {err['msg']}" for err in exc.errors()
    )
    return BlockError(
        f"イベント '{data.get('event')}' の内容が不正です: {problems}",
        code=ErrorCode.INPUT_VALIDATION_FAILED,
        hint=f"event は {', '.join(EventType)} のいずれかで、必須項目がそろっている必要があります。"
        " 項目名の綴りも確認してください。",
        details={"event": data.get("event"), "errors": exc.errors(include_url=False)},
    )


def parse_event(data: Mapping[str, Any]) -> RunEvent:
    """Validate one event object (a decoded log line) into its typed model."""
    try:
        return _ADAPTER.validate_python(dict(data))
    except ValidationError as exc:
        raise _invalid_event(exc, data) from exc


# --- emitters, sink, stream ------------------------------------------------------------------


@runtime_checkable
class EventEmitter(Protocol):
    """Anything that accepts events: an :class:`EventStream`, or :class:`NullEmitter`."""

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent | None: ...


class NullEmitter:
    """Drops every event; the default where no one is listening."""

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent | None:
        return None


class JsonlSink:
    """Appends one JSON line per event to ``path``.

    Each line is written by one ``os.write`` on an ``O_APPEND`` descriptor, so writers in other
    threads or processes appending to the same file never interleave inside a line.
    ``exclusive=True`` fails with FileExistsError if the file already exists.
    """

    def __init__(self, path: Path | str, *, exclusive: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        if exclusive:
            flags |= os.O_EXCL
        self._fd: int | None = os.open(self.path, flags, 0o644)
        self._lock = threading.Lock()

    def write(self, event: RunEvent) -> None:
        self.write_line(event.to_json())

    def write_line(self, line: str) -> None:
        data = (line.rstrip("\n") + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                raise BlockError(
                    f"実行ログ {self.path} は既に閉じられています。",
                    code=ErrorCode.INTERNAL_ERROR,
                    hint="実行が終了した後にイベントを書き込もうとしていないか確認してください。",
                )
            written = os.write(self._fd, data)
            # Regular files only write short on errors such as a full disk; finish the line.
            while written < len(data):
                written += os.write(self._fd, data[written:])

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    @property
    def closed(self) -> bool:
        return self._fd is None


class _AsyncWaiter:
    __slots__ = ("event", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.event = asyncio.Event()

    def wake(self) -> None:
        with contextlib.suppress(RuntimeError):  # the subscriber's loop is already closed
            self.loop.call_soon_threadsafe(self.event.set)


class EventStream:
    """The events of one run: numbered, logged, buffered and delivered to subscribers."""

    def __init__(self, run_id: str, source_id: str, *, sink: JsonlSink | None = None) -> None:
        self.run_id = run_id
        self.source_id = source_id
        self._sink = sink
        self._events: list[RunEvent] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._waiters: set[_AsyncWaiter] = set()
        self._closed = False

    @property
    def log_path(self) -> Path | None:
        return self._sink.path if self._sink is not None else None

    @property
    def closed(self) -> bool:
        return self._closed

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent:
        """Build, number, log and publish one event; returns the typed event."""
        reserved = {"id", "event", "run_id", "timestamp"} & fields.keys()
        if reserved:
            raise TypeError(f"emit() sets {sorted(reserved)} itself")
        data = {"id": 0, "event": str(kind), "run_id": self.run_id, "timestamp": _now(), **fields}
        draft = parse_event(data)  # validate outside the lock; numbering happens inside
        with self._cond:
            if self._closed:
                raise BlockError(
                    f"実行 {self.run_id} のイベントストリームは既に閉じられています"
                    f"（イベント '{kind}' は記録されません）。",
                    code=ErrorCode.INTERNAL_ERROR,
                    hint="実行の終了（close）後にイベントを送っていないか確認してください。",
                    details={"run_id": self.run_id, "event": str(kind)},
                )
            event = draft.model_copy(update={"id": len(self._events) + 1, "timestamp": _now()})
            if self._sink is not None:
                self._sink.write(event)  # under the lock: file order == id order
            self._events.append(event)
            self._notify()
        return event

    def _notify(self) -> None:
        self._cond.notify_all()
        for waiter in self._waiters:
            waiter.wake()

    def _has_news(self, pos: int) -> bool:
        return len(self._events) > pos or self._closed

    def events(self, after_id: int = 0) -> list[RunEvent]:
        """A snapshot of the events with ``id > after_id``."""
        with self._lock:
            return self._events[max(after_id, 0) :]

    def subscribe(self, after_id: int = 0, *, timeout: float | None = None) -> Iterator[RunEvent]:
        """Yield every event with ``id > after_id``: the buffer first, then live ones.

        Returns once the stream is closed and drained, or when no new event arrived within
        ``timeout`` seconds (``None``: wait until closed).
        """
        pos = max(after_id, 0)
        while True:
            with self._cond:
                self._cond.wait_for(partial(self._has_news, pos), timeout=timeout)
                batch = self._events[pos:]
            if not batch:  # woken with nothing new: closed and drained, or timed out
                return
            pos += len(batch)
            yield from batch

    async def asubscribe(self, after_id: int = 0) -> AsyncIterator[RunEvent]:
        """Like :meth:`subscribe` for asyncio (SSE); never blocks the event loop."""
        waiter = _AsyncWaiter(asyncio.get_running_loop())
        with self._lock:
            self._waiters.add(waiter)
        try:
            pos = max(after_id, 0)
            while True:
                waiter.event.clear()  # before the check, so a wake-up in between is kept
                with self._lock:
                    batch = self._events[pos:]
                    closed = self._closed
                if batch:
                    pos += len(batch)
                    for event in batch:
                        yield event
                elif closed:
                    return
                else:
                    await waiter.event.wait()
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    def close(self) -> None:
        """Finish the stream: close the log and release subscribers (idempotent)."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            if self._sink is not None:
                self._sink.close()
            self._notify()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EventStream(run_id={self.run_id!r}, source_id={self.source_id!r})"


def _now() -> datetime:
    return datetime.now(UTC)


# --- run logs on disk ------------------------------------------------------------------------


def _source_dir(source_id: str, runs_dir: Path | str | None) -> Path:
    base = Path(runs_dir) if runs_dir is not None else load_settings().keiri_runs_dir
    base = base.absolute()
    base.mkdir(parents=True, exist_ok=True)
    return confine(base, source_id)


def open_run(
    source_id: str,
    *,
    runs_dir: Path | str | None = None,
    run_id: str | None = None,
    now: datetime | None = None,
) -> EventStream:
    """Start the log of one run at ``runs_dir/{source_id}/{timestamp}.jsonl``.

    ``source_id`` is a plan or agent id, possibly with ``/`` (``common/validation_flow``); it must
    stay inside ``runs_dir`` (PathEscapeError otherwise). Runs started in the same second get
    ``-2``, ``-3``, ... suffixes; files are created exclusively, so runs never share one.
    """
    when = (now or _now()).astimezone(UTC)
    directory = _source_dir(source_id, runs_dir)
    directory.mkdir(parents=True, exist_ok=True)
    stamp = when.strftime(RUN_FILE_FORMAT)
    rid = run_id or f"run_{when.strftime('%Y%m%d%H%M%S')}_{secrets.token_hex(4)}"
    for n in range(1, MAX_SAME_SECOND_RUNS + 1):
        path = directory / (f"{stamp}.jsonl" if n == 1 else f"{stamp}-{n}.jsonl")
        try:
            sink = JsonlSink(path, exclusive=True)
        except FileExistsError:
            continue
        return EventStream(rid, source_id, sink=sink)
    raise BlockError(
        f"実行ログを作成できません: {directory} に {stamp} の連番ファイルが残っていません。",
        code=ErrorCode.PERMISSION_DENIED,
        hint="実行ログのディレクトリ（KEIRI_RUNS_DIR）の古いログを整理してください。",
        details={"directory": str(directory), "timestamp": stamp},
    )


def _bad_line(path: Path, lineno: int, reason: str) -> BlockError:
    return BlockError(
        f"実行ログ {path} の {lineno} 行目を読み取れません: {reason}",
        code=ErrorCode.INPUT_VALIDATION_FAILED,
        hint="ログが途中で切れているか、手で編集された可能性があります。該当行を確認してください。",
        details={"path": str(path), "line": lineno},
    )


def replay(path: Path | str, after_id: int = 0) -> Iterator[RunEvent]:
    """Yield the events of a run log with ``id > after_id``, in file order."""
    log = Path(path)
    try:
        handle = log.open("r", encoding="utf-8")
    except FileNotFoundError:
        raise BlockError(
            f"実行ログ {log} が見つかりません。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="パスを確認してください。過去の実行は `list_runs` で一覧できます。",
            details={"path": str(log)},
        ) from None
    with handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _bad_line(log, lineno, f"JSON として解釈できません（{exc.msg}）") from exc
            if not isinstance(data, dict):
                raise _bad_line(log, lineno, "JSON オブジェクトではありません")
            try:
                event = parse_event(data)
            except BlockError as exc:
                raise _bad_line(log, lineno, exc.message) from exc
            if event.id > after_id:
                yield event


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


def summarize_llm_usage(events: Iterable[RunEvent]) -> dict[str, Any]:
    """Token and latency totals of the ``llm_call`` events, overall and per ``provider:model``."""

    def empty() -> dict[str, Any]:
        keys = ("calls", "failed_calls", "input_tokens", "output_tokens", "total_tokens")
        return {**dict.fromkeys(keys, 0), "latency_ms": 0.0}

    total = empty()
    by_model: dict[str, dict[str, Any]] = {}
    for event in events:
        if not isinstance(event, LLMCall):
            continue
        model = by_model.setdefault(f"{event.provider}:{event.model}", empty())
        for bucket in (total, model):
            bucket["calls"] += 1
            bucket["failed_calls"] += 0 if event.ok else 1
            bucket["input_tokens"] += event.input_tokens
            bucket["output_tokens"] += event.output_tokens
            bucket["total_tokens"] += event.total_tokens
            bucket["latency_ms"] += event.latency_ms
    return {**total, "by_model": by_model}
