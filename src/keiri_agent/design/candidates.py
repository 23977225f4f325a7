"""Which ranked blocks the model is shown: the category pre-filter, caps and a token budget.

Top-K (``design.topk``) ranks every block; this module decides the candidate set, and says for
each block left out why (:class:`CutBlock`), which the CLI and the 設計 page show:

1. **Required** blocks (``ui.interactive_input``, the selected templates' blocks) are always in.
2. **Category pre-filter** (seed 004 §3): a category whose best block scores under
   ``CATEGORY_FLOOR`` of the query's best score is not about this request; its blocks are cut.
3. **Relevance floor**: a block under ``RELEVANCE_FLOOR`` of the best score is cut.
4. In rank order, a block is cut when its category already has ``k_per_category``, when
   ``max_total`` are chosen, or when its cost would pass the **token budget**.

A block's cost is what it adds to every request of the generation: its catalog entry in the
prompt plus its node in the stage-2 schema, in estimated tokens (:func:`estimate_tokens`).
The defaults were set on tests/data/topk_eval.yaml (benchmarks/README.md, topk.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel

from keiri_agent.plan import category_word

__all__ = [
    "CATEGORY_FLOOR",
    "DEFAULT_TOKEN_BUDGET",
    "RELEVANCE_FLOOR",
    "CutBlock",
    "CutReason",
    "Ranked",
    "Selection",
    "estimate_tokens",
    "select_candidates",
    "summarize_cut",
]

DEFAULT_TOKEN_BUDGET = 10_000  # estimated tokens of all candidates' catalog entries and schemas
CATEGORY_FLOOR = 0.1  # a category's best block against the query's best score
RELEVANCE_FLOOR = 0.03  # a block's score against the query's best score
CutReason = Literal["category", "relevance", "per_category", "max_total", "budget"]
CUT_LABELS: dict[str, str] = {
    "category": "カテゴリの事前絞り込み",
    "relevance": "関連度が低い",
    "per_category": "カテゴリごとの上限",
    "max_total": "候補数の上限",
    "budget": "トークン予算",
}


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate: ~4 ASCII characters or ~1 Japanese character each."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


class Ranked(Protocol):
    """The part of a ranked block selection needs (``design.topk.RankedBlock`` has more)."""

    @property
    def id(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def rank(self) -> int: ...


class CutBlock(BaseModel):
    """A block left out of the candidates, and why (Japanese, for the CLI and the UI)."""

    id: str
    category: str
    rank: int
    score: float
    reason: CutReason
    detail: str


@dataclass
class Selection:
    chosen: list[str]
    cut: list[CutBlock] = field(default_factory=list)
    tokens: int = 0  # estimated tokens of the chosen blocks


def _cut(block: Ranked, reason: CutReason, detail: str) -> CutBlock:
    return CutBlock(
        id=block.id,
        category=block.category,
        rank=block.rank,
        score=round(block.score, 6),
        reason=reason,
        detail=detail,
    )


def _weak_categories(ranking: Sequence[Ranked], best: float) -> dict[str, float]:
    top: dict[str, float] = {}
    for block in ranking:
        top[block.category] = max(top.get(block.category, 0.0), block.score)
    if best <= 0:
        return {}
    return {c: s / best for c, s in top.items() if s < CATEGORY_FLOOR * best}


def select_candidates(
    ranking: Sequence[Ranked],
    *,
    k_per_category: int,
    max_total: int,
    required: Sequence[str],
    token_budget: int | None,
    cost: Callable[[str], int],
    prefilter: bool = True,
) -> Selection:
    """The candidate ids (required first, then by rank) and the blocks cut, with reasons."""
    selection = Selection(chosen=list(dict.fromkeys(required)))
    per_category: dict[str, int] = {}
    for block in ranking:
        if block.id in selection.chosen:
            per_category[block.category] = per_category.get(block.category, 0) + 1
            selection.tokens += cost(block.id)
    best = max((b.score for b in ranking), default=0.0)
    weak = _weak_categories(ranking, best) if prefilter else {}
    full = False  # the budget is spent: everything after the first block that did not fit
    for block in ranking:
        if block.id in selection.chosen:
            continue
        share = block.score / best if best > 0 else 0.0
        price = cost(block.id)
        if block.category in weak:
            detail = (
                f"カテゴリ「{category_word(block.category)}」は最もよく合うブロックでもスコアが最上位の "
                f"{weak[block.category]:.0%}（{CATEGORY_FLOOR:.0%} 未満）で、指示との関係が薄い"
            )
            selection.cut.append(_cut(block, "category", detail))
        elif prefilter and share < RELEVANCE_FLOOR:
            detail = f"スコアが最上位の {share:.0%}（{RELEVANCE_FLOOR:.0%} 未満）"
            selection.cut.append(_cut(block, "relevance", detail))
        elif per_category.get(block.category, 0) >= k_per_category:
            detail = (
                f"カテゴリ「{category_word(block.category)}」の上限 {k_per_category} 件に達した"
            )
            selection.cut.append(_cut(block, "per_category", detail))
        elif len(selection.chosen) >= max_total:
            selection.cut.append(_cut(block, "max_total", f"候補の上限 {max_total} 件に達した"))
        elif full or (token_budget is not None and selection.tokens + price > token_budget):
            full = True
            detail = (
                f"トークン予算 {token_budget:,} を超える（使用 {selection.tokens:,}、"
                f"このブロック約 {price:,}）"
            )
            selection.cut.append(_cut(block, "budget", detail))
        else:
            selection.chosen.append(block.id)
            selection.tokens += price
            per_category[block.category] = per_category.get(block.category, 0) + 1
    return selection


def summarize_cut(cut: Sequence[CutBlock]) -> str:
    """One Japanese line: how many blocks were left out, by reason."""
    if not cut:
        return "除外なし（全ブロックが候補）"
    counts: dict[str, int] = {}
    for block in cut:
        counts[block.reason] = counts.get(block.reason, 0) + 1
    parts = [f"{CUT_LABELS[reason]} {n} 件" for reason, n in counts.items()]
    return f"除外 {len(cut)} 件（{'、'.join(parts)}）"
