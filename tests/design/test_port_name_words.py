"""Property: a shipped block's descriptions name its ports by their labels, not their YAML names.

``keiri-agent blocks show``, ``blocks list``, the catalog and docs/blocks.md print a block's
description and its ports' descriptions to people who read the ports by their labels (「見出しの行」,
「表」); a description that names a port by its YAML name (``header_row を指定したときは…``) sends
them to a name they never see. Every shipped block, every description: no port of that block is
written as an identifier, except where a YAML name is the thing described: a port's own
description, the keys an object output holds (its description lists them), a dotted path or a
file name (``summary.warnings``, ``report.md``), a key or value given with its meaning
(``left（左の列）``, ``report=…``) or in a list of keys (``items / records / rows``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from keiri_agent.blocks.registry import default_registry
from keiri_agent.blocks.spec import BlockSpec


def _texts(spec: BlockSpec) -> Iterator[tuple[str, str | None, str]]:
    """(where, the port described or None, text) of each description people read."""
    yield spec.id, None, spec.description
    for side, ports in (("in", spec.inputs), ("out", spec.outputs)):
        for name, port in ports.items():
            if side == "out" and port.get("type") == "object":
                continue  # its description lists the keys of the value
            yield f"{spec.id} {side}.{name}", name, str(port.get("description") or "")


def port_names_written(spec: BlockSpec) -> list[tuple[str, str]]:
    """(where, port) for every port of ``spec`` its descriptions write as an identifier."""
    found: list[tuple[str, str]] = []
    for where, own, text in _texts(spec):
        for port in {*spec.inputs, *spec.outputs} - {own}:
            word = re.compile(
                rf"(?<![A-Za-z0-9_.$/\"])(?<!/ ){re.escape(port)}"
                rf"(?![A-Za-z0-9_.（(=＝/\"])(?! /)(?!\s*[（(=＝])"
            )
            found += [(where, port) for _ in word.finditer(text)]
    return found


def test_no_shipped_description_names_a_port_by_its_yaml_name() -> None:
    specs = default_registry().list()
    assert len(specs) > 20
    wrong = [hit for spec in specs for hit in port_names_written(spec)]
    assert wrong == [], f"{len(wrong)} descriptions name a port by its YAML name: {wrong}"
