"""Fixtures of the ledger tests that run table blocks on what read_table gave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from tests.blocks.conftest import run_like_runner


@pytest.fixture(scope="module")
def registry() -> BlockRegistry:
    return BlockRegistry()


def run_block(registry: BlockRegistry, block: str, tmp_path: Path, **inputs: Any) -> dict[str, Any]:
    """Run ``block`` on ``inputs`` as the plan runner does, in a run folder under ``tmp_path``."""
    ctx = BlockContext(
        run_id="run-1",
        plan_id="plan-1",
        node_id=block.replace(".", "-"),
        block_version="0.1.0",
        workspace=tmp_path / "run",
    )
    return run_like_runner(registry.load(block), inputs, ctx)
