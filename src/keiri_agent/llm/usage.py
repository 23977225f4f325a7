"""Token and latency accounting for LLM calls.

Every call made through ``LLMClient`` produces one :class:`~keiri_agent.events.LLMUsage`: it is
the payload of an ``llm_call`` event (so it lands in the run's JSONL log and reaches every
subscriber) and is added to a ``UsageLedger``, which sums the calls of one run for the UI, the
CLI and the API with ``events.summarize_llm_usage`` (the same sums as a run log's summary).
"""

from __future__ import annotations

import threading
from typing import Self

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from keiri_agent.events import LLMUsage, summarize_llm_usage

__all__ = ["UsageLedger", "UsageSums", "UsageTotals", "usage_from_message"]


class UsageSums(BaseModel):
    """The sums over a set of LLM calls (what an agent's result reports as its usage)."""

    calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    latency_ms: float = 0.0
    # Personal data masked before the calls, per kind: how many values (never the values).
    masked: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, sums: UsageSums) -> Self:
        """The sums of ``sums`` (a run's ``UsageTotals``, say), latency rounded to the µs."""
        own = sums.model_dump(include=set(UsageSums.model_fields))
        return cls(**{**own, "latency_ms": round(sums.latency_ms, 3)})


class UsageTotals(UsageSums):
    """The sums of one run, overall and per ``provider:model`` (the same sums, ``masked`` aside)."""

    by_model: dict[str, dict[str, int | float]] = Field(default_factory=dict)


class UsageLedger:
    """Thread-safe sum of the LLM calls of one run (parallel nodes share one ledger)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[LLMUsage] = []

    def add(self, record: LLMUsage) -> None:
        with self._lock:
            self._records.append(record)

    @property
    def records(self) -> list[LLMUsage]:
        with self._lock:
            return list(self._records)

    def totals(self) -> UsageTotals:
        return UsageTotals.model_validate(summarize_llm_usage(self.records))


def usage_from_message(message: BaseMessage | None) -> tuple[int, int, int]:
    """(input, output, total) tokens reported by the provider on an AI message, else zeros."""
    usage = getattr(message, "usage_metadata", None) if message is not None else None
    if not usage:
        return 0, 0, 0
    input_tokens = int(usage.get("input_tokens", 0) or 0)
    output_tokens = int(usage.get("output_tokens", 0) or 0)
    total = int(usage.get("total_tokens", 0) or 0) or input_tokens + output_tokens
    return input_tokens, output_tokens, total
