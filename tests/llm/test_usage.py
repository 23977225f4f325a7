"""A run's LLM usage summed once: the ledger's totals and the run log's summary agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.events import (
    EventStream,
    JsonlSink,
    LLMUsage,
    read_events,
    summarize_llm_usage,
)
from keiri_agent.llm import UsageLedger

CALLS = [
    LLMUsage(role="reason", provider="openai", model="gpt-4.1-mini", input_tokens=100,
             output_tokens=20, latency_ms=120.25, masked={"person": 2}),
    LLMUsage(role="plan", provider="openai", model="gpt-4.1-mini", input_tokens=50,
             output_tokens=5, latency_ms=80.5, masked={"person": 1, "phone": 1}),
    LLMUsage(role="report", provider="anthropic", model="claude-sonnet-4-6", input_tokens=10,
             latency_ms=30.125, attempts=3, ok=False, error_code="API_ERROR"),
]  # fmt: skip


def test_ledger_totals_and_run_log_summary_are_the_same_sums(tmp_path: Path) -> None:
    ledger = UsageLedger()
    stream = EventStream("run_usage", "plan", sink=JsonlSink(tmp_path / "run.jsonl"))
    for call in CALLS:
        ledger.add(call)
        stream.emit("llm_call", **call.model_dump())
    stream.emit("log", msg="not an llm call")
    stream.close()
    summary = summarize_llm_usage(read_events(tmp_path / "run.jsonl"))
    totals = ledger.totals()
    assert totals.model_dump() == summary
    assert (totals.calls, totals.failed_calls, totals.total_tokens) == (3, 1, 185)
    assert totals.latency_ms == pytest.approx(230.875)
    assert totals.masked == {"person": 3, "phone": 1}
    failed = totals.by_model["anthropic:claude-sonnet-4-6"]
    assert (failed["calls"], failed["failed_calls"], failed["latency_ms"]) == (1, 1, 30.125)
    assert totals.by_model["openai:gpt-4.1-mini"]["total_tokens"] == 175
