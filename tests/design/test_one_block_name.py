"""Property: every place that names a block names it by one rule, never by a YAML id.

A block is named in the checks' messages, the 設計 page and the dry run (``block_said``), in
``blocks list/show``, the catalog, docs/blocks.md and the 実行 page (``BlockSpec.shown_name``,
``catalog_entry``), and, for a node with no description of its own, as the node's name (the run's
lines, the dry run's rows). Generated block specs (with or without a label, a short, long or
empty description, a shipped or custom category) go through every such place: each must say the
same name, and none the block's id or the node's id.
"""

from __future__ import annotations

import random
import re

from keiri_agent.blocks.catalog import render_markdown
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.plan import Plan, block_said, plan_names

LABELS = ["売上の集計", "請求書の確認", "取引先の突き合わせ", None, None]
DESCRIPTIONS = [
    "",
    "指定秒数待ってから返す",
    "仕訳を月ごとにまとめます。金額は税込みで、科目ごとに小計を出します。",
    "この説明は一文が長すぎて名前にはならないので、ブロックの名前には使われないはずの説明文です",
    "\n\n",
]
CATEGORIES = ["table", "ai", "excel", "file", "report", "text", "data", "custom", "zz_local"]
CASES = 200


def _specs(seed: int = 21) -> list[BlockSpec]:
    rng = random.Random(seed)
    specs = []
    for index in range(CASES):
        category = rng.choice(CATEGORIES)
        specs.append(
            BlockSpec(
                id=f"{category}.gen_{index}",
                version="1.0.0",
                label=rng.choice(LABELS),
                entrypoint="my_blocks.py:Block",
                description=rng.choice(DESCRIPTIONS),
                category=category,
                outputs={"rows": {"type": "array", "label": "結果の行"}},
            )
        )
    return specs


def _places(spec: BlockSpec, registry: BlockRegistry) -> dict[str, str]:
    """The name each place gives ``spec`` (a node ``n_1`` of it, with no description)."""
    plan = Plan.model_validate(
        {"id": "p", "graph": [{"id": "n_1", "type": "block", "block": spec.id, "in": {}}]}
    )
    said = block_said(spec.id, registry)
    doc = render_markdown([spec])
    return {
        "shown_name": spec.shown_name,
        "catalog_entry": str(spec.catalog_entry()["label"]),
        "docs_section": re.findall(r"^\*\*(.+?)\*\*", doc, re.M)[0],
        "block_said": said[1 : said.index("」")] if said.startswith("「") else said,
        "node_name": plan_names(plan, registry).node("n_1"),
    }


def test_every_place_names_a_block_by_one_rule_and_never_by_an_id() -> None:
    registry = BlockRegistry(builtin=False)
    specs = _specs()
    for spec in specs:
        registry.add(spec)
    by_id, differ = [], []
    for spec in specs:
        places = _places(spec, registry)
        by_id += [(spec.id, place) for place, name in places.items() if name in (spec.id, "n_1")]
        if len(set(places.values())) > 1:
            differ.append((spec.id, places))
    assert by_id == [], f"{len(by_id)} places name a block by an id: {by_id[:6]}"
    assert differ == [], f"{len(differ)} blocks named two ways: {differ[:3]}"


def test_two_custom_blocks_without_words_are_told_apart_by_number() -> None:
    registry = BlockRegistry(builtin=False)
    for index in (1, 2):
        registry.add(
            BlockSpec(
                id=f"custom.step_{index}",
                version="1.0.0",
                entrypoint="my_blocks.py:Block",
                description="",
                category="table",
            )
        )
    graph = [{"id": f"s{i}", "type": "block", "block": f"custom.step_{i}"} for i in (1, 2)]
    names = plan_names(Plan.model_validate({"id": "p", "graph": graph}), registry)
    assert [names.node("s1"), names.node("s2")] == ["表の処理のブロック", "表の処理のブロック 2"]
