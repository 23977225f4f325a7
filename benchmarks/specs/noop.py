"""The no-op block ``bench.noop``: returns its ``value`` input unchanged (benchmarks/runner.py)."""

from __future__ import annotations

from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock


class NoopBlock(ProcessingBlock):
    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {"value": inputs.get("value")}
