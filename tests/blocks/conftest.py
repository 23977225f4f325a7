"""Block test support: the built-in registry, a BlockContext factory, a runner stand-in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.base import Block, BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.schema import check_value, resolve_port

ContextFactory = Callable[..., BlockContext]


class AnswerBook:
    """An InputProvider holding a person's answers per node (qualified path or plain id)."""

    def __init__(self, answers: Mapping[str, Mapping[str, Any]]) -> None:
        self.answers = {key: dict(value) for key, value in answers.items()}

    def answers_for(self, node_path: str, node_id: str) -> Mapping[str, Any] | None:
        return self.answers.get(node_path, self.answers.get(node_id))


@pytest.fixture(scope="session")
def registry() -> BlockRegistry:
    """The built-in specs, loaded exactly as the runner loads them."""
    return BlockRegistry()


@pytest.fixture
def make_ctx(tmp_path: Path) -> ContextFactory:
    """``make_ctx(node_id="n", answers={...})``: a context whose workspace is tmp_path/run."""

    def factory(
        node_id: str = "node", *, answers: Mapping[str, Mapping[str, Any]] | None = None
    ) -> BlockContext:
        return BlockContext(
            run_id="run-1",
            plan_id="plan-1",
            node_id=node_id,
            block_version="0.1.0",
            workspace=tmp_path / "run",
            inputs=AnswerBook(answers) if answers is not None else None,
        )

    return factory


def run_like_runner(block: Block, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
    """What the runner does around a block: defaults, input schemas, check_inputs, run, and
    the output contract (every declared port present and valid)."""
    spec = block.spec
    resolved = {
        name: port["default"]
        for name, port in spec.inputs.items()
        if "default" in port and name not in inputs
    }
    resolved.update(inputs)
    for name, value in resolved.items():
        problem = check_value(value, resolve_port(spec.inputs[name]))
        assert problem is None, f"input {name}: {problem}"
    block.check_inputs(resolved)
    outputs = block.run(resolved, ctx)
    assert set(outputs) == set(spec.outputs), "every declared output port must be returned"
    for name, value in outputs.items():
        problem = check_value(value, resolve_port(spec.outputs[name]))
        assert problem is None, f"output {name}: {problem}"
    return outputs
