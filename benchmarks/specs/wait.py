"""The block ``bench.wait``: waits ``seconds`` (as an LLM call or I/O would), returns ``value``."""

from __future__ import annotations

import time
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock


class WaitBlock(ProcessingBlock):
    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        time.sleep(float(inputs["seconds"]))
        return {"value": inputs.get("value")}
