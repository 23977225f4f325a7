"""A table that counts the rows made into records: a block that works on columns makes none."""

from __future__ import annotations

from typing import Any

from keiri_agent.blocks.base import Block, BlockContext
from keiri_agent.blocks.schema import check_value, resolve_port
from keiri_agent.documents.table_value import Table


class CountingTable(Table):
    """A :class:`Table` whose ``rows_read`` counts the rows :meth:`records` turned into dicts."""

    __slots__ = ("rows_read",)

    def records(self, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        out = super().records(start, stop)
        self.rows_read = getattr(self, "rows_read", 0) + len(out)
        return out


def run_counted(block: Block, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
    """``run_like_runner`` for inputs that are CountingTables: the engine knows a table by its
    exact class, so the input schemas are not asked; the outputs are checked as the runner
    checks them."""
    spec = block.spec
    resolved = {
        name: port["default"]
        for name, port in spec.inputs.items()
        if "default" in port and name not in inputs
    }
    resolved.update(inputs)
    block.check_inputs(resolved)
    outputs = block.run(resolved, ctx)
    assert set(outputs) == set(spec.outputs)
    for name, value in outputs.items():
        problem = check_value(value, resolve_port(spec.outputs[name]))
        assert problem is None, f"output {name}: {problem}"
    return outputs
