"""Fixtures for plan engine tests: a registry with the test block kit, a runner, a plan writer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import PlanRunner
from tests.plan.blockkit import SPEC_DIR
from tests.plan.blockkit.blocks import Gauge


@pytest.fixture(scope="session")
def registry() -> BlockRegistry:
    return BlockRegistry([SPEC_DIR])


@pytest.fixture
def designs(tmp_path: Path) -> Path:
    path = tmp_path / "designs"
    path.mkdir()
    return path


@pytest.fixture
def runner(registry: BlockRegistry, tmp_path: Path, designs: Path) -> Iterator[PlanRunner]:
    Gauge.reset()
    with PlanRunner(registry, runs_dir=tmp_path / "runs", designs_dir=designs, config={}) as r:
        yield r


@pytest.fixture
def write_plan(designs: Path) -> Callable[[str, str], Path]:
    def write(name: str, text: str) -> Path:
        path = designs / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write
