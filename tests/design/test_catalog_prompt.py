"""The block catalog as the plan generator reads it: what a port takes must be in the prompt."""

from __future__ import annotations

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.design.prompts import catalog_text


def _port_line(text: str, port: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"    - {port} ("))


def test_file_ports_name_direction_and_accepted_types() -> None:
    # A plan that hands a PDF to the table reader fails only at run time; the model must see
    # which files a port reads, as docs/blocks.md shows people.
    text = catalog_text(BlockRegistry(), ["file.read_table", "file.parse_zip_2tier"])
    line = _port_line(text, "path")
    assert "パス（読み込み: .csv / .tsv / .txt / .xlsx / .xlsm）" in line
    assert "必須" in line
    assert "パス（読み込み: .zip）" in _port_line(text, "zip_bytes")


def test_choices_and_plain_ports_unchanged() -> None:
    registry = BlockRegistry()
    with_enum = [
        (spec.id, name, port)
        for spec in registry.list()
        for name, port in spec.inputs.items()
        if port.get("enum") and "path" not in port
    ]
    assert with_enum, "the catalog has no port with choices to check"
    block_id, name, port = with_enum[0]
    line = _port_line(catalog_text(registry, [block_id]), name)
    assert "（" + " / ".join(str(v) for v in port["enum"]) + "）" in line
    assert "パス（" not in line
