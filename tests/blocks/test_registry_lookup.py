"""Block look-up answers follow the registry's specs, also after specs are added."""

from __future__ import annotations

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import BlockSpec


def _spec(version: str) -> BlockSpec:
    return BlockSpec(
        id="demo.echo",
        version=version,
        entrypoint="tests.nowhere:Block",
        description="echo",
        category="demo",
    )


def test_a_spec_added_after_a_look_up_is_found() -> None:
    registry = BlockRegistry(builtin=False)
    registry.add(_spec("1.0.0"))
    assert registry.find("demo.echo").version == "1.0.0"  # type: ignore[union-attr]
    assert registry.find("demo.echo@2") is None
    registry.add(_spec("2.1.0"))
    assert registry.find("demo.echo").version == "2.1.0"  # type: ignore[union-attr]
    assert registry.find("demo.echo@2").version == "2.1.0"  # type: ignore[union-attr]
    assert registry.find("demo.echo@1").version == "1.0.0"  # type: ignore[union-attr]
    assert "demo.echo@2" in registry


def test_many_distinct_look_ups_keep_answering_right() -> None:
    registry = BlockRegistry(builtin=False)
    registry.add(_spec("1.0.0"))
    for i in range(3000):  # more unknown refs than the registry keeps answers for
        assert registry.find(f"demo.missing{i}") is None
    assert registry.find("demo.echo@1.0.0").version == "1.0.0"  # type: ignore[union-attr]
