"""Typed run events: one stream that the CLI, Streamlit and the SSE server all consume.

A run (a plan run, an agent session, a conversion task) emits events into an
:class:`EventStream`. The stream numbers them (``id`` 1, 2, 3, ... in order), appends each as one
JSON line to ``runs/{source_id}/{timestamp}.jsonl`` (seed 002 §8.4), keeps only the newest ones
in memory and wakes every subscriber. Readers subscribe live (:meth:`EventStream.subscribe`,
:meth:`EventStream.asubscribe`, replaying from any id first: older events from the log, then
memory) or read a run back from its log (:func:`read_events`, :func:`replay`); an SSE client
reconnecting with ``Last-Event-ID: k`` gets exactly the events after ``k``.

Event kinds: plan/node events (seed 002 §8.4), progress events (seed 003 §3) and ``llm_call`` for
token accounting. Each line is one flat JSON object (keys whose value is null are left out)::

    {"id": 3, "event": "node_start", "run_id": "run_...", "timestamp": "2025-01-01T10:00:01Z",
     "node_id": "collect_inputs", "block": "ui.interactive_input"}

Logs carry summaries, not data (seed 002 §12): non-JSON values (DataFrames, bytes, paths, ...)
and oversized strings or lists in ``inputs``/``outputs``/``item``/``error`` are replaced by short
descriptions such as ``"<DataFrame 100x3>"`` or ``"<bytes 2048>"``. The summary is applied when
the event is built, so the live event and the one read back from the log are equal. Secrets
registered with a stream's :class:`Redactor` are masked (``****``) at the same point, and so is
personal data (``〔電話番号〕``, ``〔人名〕``: see ``keiri_agent.privacy``).
"""

from __future__ import annotations

from keiri_agent.events.models import (
    MAX_LOG_ITEMS,
    MAX_LOG_STRING_CHARS,
    AnyEvent,
    CodeExec,
    CodeGen,
    ErrorEvent,
    EventType,
    FileDigest,
    FileWrite,
    LLMCall,
    LLMUsage,
    Log,
    LoopIteration,
    Metrics,
    NodeComplete,
    NodeFailed,
    NodeSkipped,
    NodeStart,
    NodeWaiting,
    PlanComplete,
    PlanStart,
    RunEvent,
    RunStatus,
    Stage,
    parse_event,
    summarize_value,
)
from keiri_agent.events.node_events import NodeEvents
from keiri_agent.events.redact import MASK, Redactor
from keiri_agent.events.runlog import (
    list_runs,
    open_run,
    read_events,
    replay,
    summarize_llm_usage,
)
from keiri_agent.events.sink import JsonlSink
from keiri_agent.events.stream import EventEmitter, EventStream, NullEmitter

__all__ = [
    "MASK",
    "MAX_LOG_ITEMS",
    "MAX_LOG_STRING_CHARS",
    "AnyEvent",
    "CodeExec",
    "CodeGen",
    "ErrorEvent",
    "EventEmitter",
    "EventStream",
    "EventType",
    "FileDigest",
    "FileWrite",
    "JsonlSink",
    "LLMCall",
    "LLMUsage",
    "Log",
    "LoopIteration",
    "Metrics",
    "NodeComplete",
    "NodeEvents",
    "NodeFailed",
    "NodeSkipped",
    "NodeStart",
    "NodeWaiting",
    "NullEmitter",
    "PlanComplete",
    "PlanStart",
    "Redactor",
    "RunEvent",
    "RunStatus",
    "Stage",
    "list_runs",
    "open_run",
    "parse_event",
    "read_events",
    "replay",
    "summarize_llm_usage",
    "summarize_value",
]
