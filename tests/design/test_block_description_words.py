"""Property: a shipped block's description names the other blocks as people do, by their label.

A block's description and its ports' descriptions are shown to people (the 設計 page's block
list, ``keiri-agent blocks show``, docs/blocks.md); a block named there by its id
(``table.aggregate を使って…``) is a YAML name where the block has a label for people
(「表の集計」). Every shipped block, every description.
"""

from __future__ import annotations

import re

from keiri_agent.blocks.registry import default_registry


def _shown_texts() -> list[tuple[str, str]]:
    texts: list[tuple[str, str]] = []
    for spec in default_registry().list():
        texts.append((spec.id, spec.description))
        for side, ports in (("in", spec.inputs), ("out", spec.outputs)):
            texts.extend(
                (f"{spec.id} {side}.{name}", str(port.get("description") or ""))
                for name, port in ports.items()
            )
    return texts


def test_no_shipped_description_names_a_block_by_its_id() -> None:
    registry = default_registry()
    ids = sorted((spec.id for spec in registry.list()), key=len, reverse=True)
    block_id = re.compile(rf"(?<![\w.])(?:{'|'.join(map(re.escape, ids))})(?![\w])")
    texts = _shown_texts()
    assert len(texts) > 100  # every block's and port's description is read
    wrong = [(where, found) for where, text in texts for found in block_id.findall(text)]
    assert wrong == [], f"{len(wrong)} descriptions name a block by its id: {wrong[:10]}"
