"""A usage prior for block retrieval: how often the shipped plans and templates use each block.

BM25 only sees the words of a request. Requests rarely say "read the table" even though almost
every plan over accounting data starts with one, so blocks that real plans use often deserve a
small head start. The prior is ``log(1 + uses) / log(1 + max uses)`` over the example plans
(``designs/examples``) and the templates (``designs/templates``), in 0..1; the retriever adds
``PRIOR_WEIGHT`` × the query's best score × prior to each block's score. It never outweighs a
real match: a block with no matching word gains at most a twentieth of the best score. Measured on
tests/data/topk_eval.yaml in benchmarks/README.md (topk.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from keiri_agent.design.plan_nodes import node_blocks
from keiri_agent.plan import load_yaml

__all__ = ["PRIOR_WEIGHT", "block_uses", "usage_prior"]

PRIOR_WEIGHT = 0.05


def _plan_files() -> list[Path]:
    from keiri_agent.design.templates import templates_root
    from keiri_agent.examples import PLANS_DIR, examples_root

    files = sorted((examples_root() / PLANS_DIR).glob("*.yaml"))
    return files + sorted(templates_root().glob("*/*.yaml"))


def block_uses(files: Sequence[Path] | None = None) -> Counter[str]:
    """How many nodes of the shipped plans and templates use each block id."""
    uses: Counter[str] = Counter()
    for path in _plan_files() if files is None else files:
        data = load_yaml(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            uses.update(node_blocks(data.get("graph") or data.get("graph_snippet")))
    return uses


def usage_prior(block_ids: Sequence[str], uses: Counter[str]) -> dict[str, float]:
    """Each block's prior in 0..1 (0 for blocks no shipped plan uses)."""
    most = max((uses[b] for b in block_ids), default=0)
    if most == 0:
        return dict.fromkeys(block_ids, 0.0)
    return {b: math.log1p(uses[b]) / math.log1p(most) for b in block_ids}
