"""Typed run event models and the summaries that keep logs small and JSON-safe."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import Enum, StrEnum
from pathlib import PurePath
from typing import Annotated, Any, Literal

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

from keiri_agent.errors import BlockError, input_error
from keiri_agent.events.chain import CHAIN_KEY
from keiri_agent.localtime import utc_text

TABLE_MODULE = "keiri_agent.documents.table_value"  # checked by name: pandas stays unloaded


def is_table(value: Any) -> bool:
    """Whether ``value`` is a ``documents.Table`` (without importing pandas to ask)."""
    return any(
        cls.__module__ == TABLE_MODULE and cls.__name__ == "Table" for cls in type(value).__mro__
    )


def type_label(value: Any) -> str:
    """A short Japanese name of a value's type for messages (``null``, ``数値``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "真偽値"
    if isinstance(value, int | float | Decimal):
        return "数値"
    if isinstance(value, str):
        return "文字列"
    if isinstance(value, list | tuple):
        return "リスト"
    if is_table(value):
        return "表"
    if isinstance(value, Mapping):
        return "辞書"
    if isinstance(value, bytes | bytearray | memoryview):
        return "バイナリデータ"
    return type(value).__name__


MAX_LOG_STRING_CHARS = 4000  # longer strings in payloads are cut to exactly this length
MAX_LOG_ITEMS = 200  # longer lists/dicts in payloads keep this many entries
MAX_LOG_DEPTH = 8  # deeper containers are replaced by a one-line summary


class EventType(StrEnum):
    """Every event kind: seed 002 §8.4, seed 003 §3, and LLM usage."""

    PLAN_START = "plan_start"
    NODE_START = "node_start"
    NODE_COMPLETE = "node_complete"
    NODE_SKIPPED = "node_skipped"
    NODE_ERROR = "node_error"
    NODE_WAITING = "node_waiting"
    LOOP_ITERATION = "loop_iteration"
    PLAN_COMPLETE = "plan_complete"
    STAGE = "stage"
    LOG = "log"
    CODE_GEN = "code_gen"
    CODE_EXEC = "code_exec"
    ERROR = "error"
    LLM_CALL = "llm_call"
    METRICS = "metrics"
    FILE_WRITE = "file_write"
    FILE_DIGEST = "file_digest"


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


def summarize_value(value: Any) -> Any:
    """A JSON-serializable summary of ``value`` for logs (idempotent on its own output)."""
    return _summarize(value, 0)


def _summarize(value: Any, depth: int) -> Any:
    """:func:`summarize_value` of a value ``depth`` containers deep."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, Enum):
        return _summarize(value.value, depth)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{type(value).__name__} {len(value)}>"
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, BlockError):
        return _summarize(value.to_dict(), depth)
    if isinstance(value, BaseException):
        return _cut(f"<{type(value).__name__}: {value}>")
    if isinstance(value, BaseModel):
        return _summarize(value.model_dump(mode="json"), depth)
    if type(value).__module__.split(".")[0] == "numpy" and getattr(value, "shape", None) == ():
        return _summarize(value.item(), depth)  # numpy scalar
    if depth >= MAX_LOG_DEPTH and isinstance(value, Mapping | list | tuple | set | frozenset):
        return _describe(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for i, (key, item) in enumerate(value.items()):
            if i == MAX_LOG_ITEMS - 1 and len(value) > MAX_LOG_ITEMS:
                out["…"] = f"(全{len(value)}件)"
                break
            out[str(key)] = _summarize(item, depth + 1)
        return out
    if is_table(value):
        head = value.records(0, MAX_LOG_ITEMS - 1 if len(value) > MAX_LOG_ITEMS else None)
        rows = [_summarize(row, depth + 1) for row in head]
        return [*rows, f"…(全{len(value)}件)"] if len(value) > MAX_LOG_ITEMS else rows
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        if len(items) > MAX_LOG_ITEMS:
            head = [_summarize(v, depth + 1) for v in items[: MAX_LOG_ITEMS - 1]]
            return [*head, f"…(全{len(items)}件)"]
        return [_summarize(v, depth + 1) for v in items]
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
    sub_run_id: str | None = None  # "run#1.sub#2" for events of a subflow (seed 002 §5.3)

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    @field_serializer("timestamp")
    def _iso_z(self, value: datetime) -> str:
        return utc_text(value)

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
    plan_version: str | None = None
    plan_file: str | None = None  # the snapshot of the plan this run executed
    # ``inputs`` is a display copy (long values cut, binaries described). The exact vars a
    # resume or rerun uses are in ``vars_file`` (relative to the log's directory); ``vars_saved``
    # false says they could not be stored. Both absent: a log written before they existed.
    vars_file: str | None = None
    vars_saved: bool | None = None
    resume_of: str | None = None  # run id whose finished nodes this run reuses
    rerun_from: str | None = None  # node path a rerun starts from
    # Change control (keiri_agent.versions): the SHA-256 of the plan text this run executes
    # (its version), the approval standing when it started (None: not approved), who started
    # it, and the versions of the subflows it calls (plan id -> hash).
    plan_hash: str | None = None
    approval: JsonDict | None = None
    started_by: str | None = None
    subflow_versions: dict[str, str] | None = None


class NodeStart(RunEvent):
    event: Literal["node_start"] = "node_start"
    block: str | None = None


class NodeComplete(RunEvent):
    event: Literal["node_complete"] = "node_complete"
    outputs: JsonDict = Field(default_factory=dict)
    duration_ms: float = 0.0
    # Exact outputs for resume/rerun: inline in ``stored`` when small and JSON-exact, else a file
    # beside the log (``outputs_file``, relative to the log's directory).
    stored: dict[str, Any] | None = None
    outputs_file: str | None = None
    reused: bool | None = None  # true: taken from an earlier run instead of executed


class NodeWaiting(RunEvent):
    event: Literal["node_waiting"] = "node_waiting"
    request: JsonDict = Field(default_factory=dict)


class NodeSkipped(RunEvent):
    event: Literal["node_skipped"] = "node_skipped"
    reason: str
    condition: str | None = None


class NodeFailed(RunEvent):
    event: Literal["node_error"] = "node_error"
    error: JsonDict  # BlockError.to_dict()
    retry: int = 0
    will_retry: bool | None = None  # true: policy on_error=retry runs the node again


class LoopIteration(RunEvent):
    event: Literal["loop_iteration"] = "loop_iteration"
    iteration: int
    item: JsonValue = None


# How a plan run ended (or paused): the one type of a run's status wherever it is held
# (the engine's frames, RunResult, the run log's plan_complete, the CLI, the server, the app).
RunStatus = Literal["success", "failed", "waiting_input", "cancelled", "partial"]


class PlanComplete(RunEvent):
    event: Literal["plan_complete"] = "plan_complete"
    status: RunStatus
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
    code: str | None = None  # for warnings a program acts on, e.g. LOOP_LIMIT_REACHED


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


class LLMUsage(BaseModel):
    """One logical LLM call (all its retries included): the payload of an ``llm_call`` event
    and what ``llm.usage.UsageLedger`` sums (one model, so the two cannot drift)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
    # Personal data masked in the request, per kind (keiri_agent.privacy): counts, never values.
    masked: dict[str, int] | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_total(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("total_tokens") is None:
            total = int(data.get("input_tokens") or 0) + int(data.get("output_tokens") or 0)
            return {**data, "total_tokens": total}
        return data


class LLMCall(LLMUsage, RunEvent):
    event: Literal["llm_call"] = "llm_call"


class FileWrite(RunEvent):
    """A block is about to write ``path`` (logged first, so a resume knows the file is its own).

    The temporary file is ``<folder of path>/<temp_prefix>*``; if the run dies before the
    rename, a resume removes it, and if it dies after, the resume may replace ``path``.
    """

    event: Literal["file_write"] = "file_write"
    path: str
    temp_prefix: str


class FileDigest(RunEvent):
    """A file a run read (``role: input``, when a block first opened it) or wrote (``output``,
    when the run ended), with its SHA-256 (None for a folder, or a file that was gone)."""

    event: Literal["file_digest"] = "file_digest"
    role: Literal["input", "output"]
    path: str
    sha256: str | None = None
    size: int | None = None
    field: str | None = None  # the block input that named it (inputs)


class Metrics(RunEvent):
    """Measurements of a whole run (seed 004: attempts, error counts, repair rounds, timings)."""

    event: Literal["metrics"] = "metrics"
    scope: str
    values: JsonDict = Field(default_factory=dict)


AnyEvent = Annotated[
    PlanStart
    | NodeStart
    | NodeComplete
    | NodeSkipped
    | NodeFailed
    | NodeWaiting
    | LoopIteration
    | PlanComplete
    | Stage
    | Log
    | CodeGen
    | CodeExec
    | ErrorEvent
    | LLMCall
    | Metrics
    | FileWrite
    | FileDigest,
    Field(discriminator="event"),
]
_ADAPTER: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)


def _invalid_event(exc: ValidationError, data: Mapping[str, Any]) -> BlockError:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '(全体)'}: {err['msg']}" for err in exc.errors()
    )
    return input_error(
        f"イベント '{data.get('event')}' の内容が不正です: {problems}",
        f"event は {', '.join(EventType)} のいずれかで、必須項目がそろっている必要があります。"
        " 項目名の綴りも確認してください。",
        event=data.get("event"),
        errors=exc.errors(include_url=False),
    )


def parse_event(data: Mapping[str, Any]) -> RunEvent:
    """Validate one event object (a decoded log line) into its typed model; the line's
    hash-chain value (``events.chain``) belongs to the log, not to the event, and is dropped."""
    fields = dict(data)
    fields.pop(CHAIN_KEY, None)
    try:
        return _ADAPTER.validate_python(fields)
    except ValidationError as exc:
        raise _invalid_event(exc, data) from exc
