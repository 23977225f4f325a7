"""Top-K block retrieval for plan generation (seed 004 §3).

The plan generator shows the model only the blocks retrieved here, which keeps the search space
small and leaves the model no unlisted block to invent. Each block is a document
(:func:`block_document`: id, description, port names and descriptions, tags, category); the
query is the user's instruction.

Reference documents only help: their text is ranked on its own and added with
``DOCUMENT_WEIGHT`` (scaled to 0..1 over the blocks, times the instruction's best score), so
they move a block by at most a tenth of the instruction's best score: a memo full of bank words
nudges the bank blocks up, and only past blocks the instruction ranks about as high.
Appending the documents to the query let them outvote the instruction: a memo's 振込先・普通
pushed three bank blocks (~4,100 tokens) ahead of ``excel.write_report`` for
「… Excel に出力してください」 and out of the candidate budget.

Modes: ``bm25`` (Japanese BM25, always available), ``dense`` (cosine similarity of embeddings
from ``KEIRI_LLM_MODEL_EMBEDDING``, cached on disk under ``KEIRI_CACHE_DIR``) and ``hybrid``
(both, normalized per query and mixed). Without an embedding model, ``hybrid`` runs as BM25 and
says so in ``note`` and the metrics; ``dense`` asked for explicitly is a configuration error.

Candidates are chosen from the ranking by ``design.candidates``: the ``required`` blocks (a chosen
template's, ``ui.interactive_input``), then the best of the rest after the category pre-filter,
at most ``k_per_category`` per category and ``max_total`` in all (seed 004: 5–8 per category, 30
at most) within a token budget; every block left out is listed in ``cut`` with the reason.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, Field

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.config import LLMRole, Settings, load_settings
from keiri_agent.design.candidates import (
    DEFAULT_TOKEN_BUDGET,
    CutBlock,
    estimate_tokens,
    select_candidates,
    summarize_cut,
)
from keiri_agent.design.prior import PRIOR_WEIGHT, block_uses, usage_prior
from keiri_agent.errors import ConfigurationError, check_choice, input_error
from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.dense import DenseIndex, EmbeddingCache
from keiri_agent.retrieval.hybrid import DEFAULT_DENSE_WEIGHT, fuse, minmax

if TYPE_CHECKING:
    from keiri_agent.llm import EmbeddingClient

__all__ = [
    "DEFAULT_K_PER_CATEGORY",
    "DEFAULT_MAX_TOTAL",
    "DOCUMENT_WEIGHT",
    "NO_EMBEDDING_NOTE",
    "RETRIEVAL_MODES",
    "TAG_WEIGHT",
    "BlockRetriever",
    "RankedBlock",
    "RetrievalMode",
    "RetrievalResult",
    "block_document",
]

RetrievalMode = Literal["bm25", "dense", "hybrid"]
RETRIEVAL_MODES: tuple[str, ...] = get_args(RetrievalMode)
DEFAULT_K_PER_CATEGORY = 5  # seed 004 §3: 5–8 per category
DEFAULT_MAX_TOTAL = 30  # seed 004 §3: 30 at most (the token budget usually stops earlier)
TAG_WEIGHT = 2  # tags are repeated this many times in a block's document
# The reference documents' share: their best-matching block gains this fraction of the
# instruction's best score (set on tests/data/topk_eval.yaml with an invoice or an expense
# memo attached, benchmarks/README.md topk.py).
DOCUMENT_WEIGHT = 0.1
MAX_PORT_SUMMARY_CHARS = 80  # of a port description in the block's document
_SENTENCE_END = re.compile(r"(?<=。)|\n")
NO_EMBEDDING_NOTE = (
    "埋め込みモデルが未設定のため BM25 のみで検索しました"
    "（KEIRI_LLM_MODEL_EMBEDDING を設定すると dense/hybrid になります）"
)


class RankedBlock(BaseModel):
    """One block in a ranking: its final score and the component scores behind it.

    ``bm25`` is the raw BM25 score and ``dense`` the cosine similarity of the instruction; a
    component the mode did not use is ``None``. In hybrid mode the instruction's part of
    ``score`` is the normalized mix (0..1). ``documents`` is what the reference documents added
    to ``score`` (``None`` without documents).
    """

    id: str
    category: str
    score: float
    bm25: float | None
    dense: float | None
    rank: int = Field(ge=1)
    prior: float = 0.0  # the usage prior (design.prior) that was added to ``score``
    documents: float | None = None


class RetrievalResult(BaseModel):
    """What one retrieval found, how, and how long it took."""

    query: str  # the instruction
    documents_chars: int = 0  # of the reference-document text ranked beside it
    mode_requested: RetrievalMode
    mode_used: RetrievalMode
    note: str | None
    ranking: list[RankedBlock]  # every block, best first
    candidates: list[RankedBlock]  # what the model is shown, best first
    duration_ms: float
    k_per_category: int = DEFAULT_K_PER_CATEGORY
    max_total: int = DEFAULT_MAX_TOTAL
    required: list[str] = Field(default_factory=list)
    token_budget: int | None = DEFAULT_TOKEN_BUDGET
    candidate_tokens: int = 0  # estimated tokens the candidates add to each request
    cut: list[CutBlock] = Field(default_factory=list)  # blocks left out, best first, with why

    def candidate_ids(self) -> list[str]:
        return [block.id for block in self.candidates]

    def cut_summary(self) -> str:
        """One Japanese line: how many blocks were left out, by reason."""
        return summarize_cut(self.cut)

    def metrics(self) -> dict[str, Any]:
        """The run-log / UI summary: modes, note, candidate ids and timing."""
        return {
            "mode_requested": self.mode_requested,
            "mode_used": self.mode_used,
            "note": self.note,
            "documents_chars": self.documents_chars,
            "candidates": self.candidate_ids(),
            "candidate_count": len(self.candidates),
            "block_count": len(self.ranking),
            "k_per_category": self.k_per_category,
            "max_total": self.max_total,
            "required": list(self.required),
            "token_budget": self.token_budget,
            "candidate_tokens": self.candidate_tokens,
            "cut": [{"id": c.id, "reason": c.reason} for c in self.cut],
            "duration_ms": self.duration_ms,
        }


def _words(name: str) -> str:
    return name.replace(".", " ").replace("_", " ")


def _first_sentence(text: str) -> str:
    head = _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
    return head[:MAX_PORT_SUMMARY_CHARS]


def _port_text(name: str, port: dict[str, Any]) -> list[str]:
    parts = [name, _words(name)]
    title = port.get("title")
    if isinstance(title, str) and title.strip():
        parts.append(title.strip())
    description = port.get("description")
    if isinstance(description, str) and description.strip():
        parts.append(_first_sentence(description))
    return parts


def block_document(spec: BlockSpec) -> str:
    """The text a block is retrieved by: id (whole and in words), category, tags, description,
    and each input and output port's name, title and the first sentence of its description.

    Tags are the words users type for what the block does (照合, 消込, 名寄せ, ...), curated per
    block, so they count ``TAG_WEIGHT`` times, like a BM25F field weight. Only the first sentence
    of a port description is used: the rest details formats and options, often naming other
    blocks and business terms, which would drown what the block is for. Both choices were
    measured on tests/data/topk_eval.yaml (see benchmarks/README.md).
    """
    tags = " ".join(spec.tags)
    lines = [
        spec.id,
        _words(spec.id),
        spec.category,
        *([tags] * TAG_WEIGHT),
        spec.description.strip(),
    ]
    for name, port in (*spec.inputs.items(), *spec.outputs.items()):
        lines.append(" ".join(_port_text(name, port)))
    return "\n".join(line for line in lines if line)


class BlockRetriever:
    """Ranks a registry's blocks (latest versions) for an instruction.

    The BM25 index is built once, when the retriever is created; block embeddings are computed
    on the first dense or hybrid query (read from the on-disk cache when unchanged). Safe to use
    from several threads.
    """

    def __init__(
        self,
        registry: BlockRegistry,
        *,
        embedder: EmbeddingClient | None = None,
        settings: Settings | None = None,
        dense_weight: float = DEFAULT_DENSE_WEIGHT,
        prior_weight: float = PRIOR_WEIGHT,
    ) -> None:
        self.settings = settings if settings is not None else load_settings()
        self._embedder = embedder
        self.dense_weight = dense_weight
        self.specs: list[BlockSpec] = registry.list()
        self._registry = registry
        self._ids = [spec.id for spec in self.specs]
        self._category = {spec.id: spec.category for spec in self.specs}
        self._documents = [block_document(spec) for spec in self.specs]
        self.bm25 = BM25Index.build(self._documents, ids=self._ids)
        self.prior_weight = prior_weight
        self.prior = usage_prior(self._ids, block_uses()) if prior_weight else {}
        self._dense: DenseIndex | None = None
        self._lock = threading.Lock()
        self._costs: dict[str, int] = {}

    def cost(self, block_id: str) -> int:
        """Estimated tokens the block adds to a generation request: its catalog entry in the
        prompt and its node in the stage-2 schema (``design.candidates``)."""
        if block_id not in self._costs:
            from keiri_agent.design.prompts import catalog_text
            from keiri_agent.design.wire import block_node_schema

            spec = self._registry.get(block_id)
            schema = json.dumps(block_node_schema(spec, strict=True), ensure_ascii=False)
            text = catalog_text(self._registry, [block_id])
            self._costs[block_id] = estimate_tokens(text) + estimate_tokens(schema)
        return self._costs[block_id]

    @property
    def embedder(self) -> EmbeddingClient:
        """The embedding client (built from the settings on first use)."""
        if self._embedder is None:
            from keiri_agent.llm import get_embedder  # BM25-only use never loads the LLM layer

            self._embedder = get_embedder(settings=self.settings)
        return self._embedder

    @property
    def embedding_configured(self) -> bool:
        """Whether dense and hybrid retrieval can run (an embedding model is set or given)."""
        if self._embedder is not None:
            return self._embedder.configured
        return self.settings.model_for(LLMRole.EMBEDDING) is not None

    def dense_index(self) -> DenseIndex:
        """The block embeddings (built on first use; unchanged specs come from the cache)."""
        with self._lock:
            if self._dense is None:
                if not self.embedding_configured:
                    raise _dense_unavailable()
                self._dense = DenseIndex.build(
                    self._documents,
                    ids=self._ids,
                    embedder=self.embedder,
                    cache=EmbeddingCache(self.settings.keiri_cache_dir),
                )
            return self._dense

    def retrieve(
        self,
        query: str,
        *,
        documents: str = "",
        mode: RetrievalMode = "hybrid",
        k_per_category: int = DEFAULT_K_PER_CATEGORY,
        max_total: int = DEFAULT_MAX_TOTAL,
        required: Sequence[str] = (),
        token_budget: int | None = DEFAULT_TOKEN_BUDGET,
        prefilter: bool = True,
    ) -> RetrievalResult:
        """Rank every block for ``query`` (the instruction) and pick the candidates shown to
        the model. ``documents`` (reference-document text) is ranked separately and only
        weighs ``DOCUMENT_WEIGHT`` (module docstring).

        ``token_budget=None`` and ``prefilter=False`` give the caps alone (the old behaviour)."""
        started = time.perf_counter()
        _check_options(query, mode, k_per_category, max_total)
        required_ids = self._required(required)
        note: str | None = None
        mode_used: RetrievalMode = mode
        if mode == "dense" and not self.embedding_configured:
            raise _dense_unavailable()
        if mode == "hybrid" and not self.embedding_configured:
            mode_used = "bm25"
            note = NO_EMBEDDING_NOTE
        ranking = self._rank(query, documents, mode_used)
        selection = select_candidates(
            ranking,
            k_per_category=k_per_category,
            max_total=max_total,
            required=required_ids,
            token_budget=token_budget,
            cost=self.cost,
            prefilter=prefilter,
        )
        chosen = set(selection.chosen)
        return RetrievalResult(
            query=query,
            documents_chars=len(documents.strip()),
            mode_requested=mode,
            mode_used=mode_used,
            note=note,
            ranking=ranking,
            candidates=[block for block in ranking if block.id in chosen],  # best first
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            k_per_category=k_per_category,
            max_total=max_total,
            required=required_ids,
            token_budget=token_budget,
            candidate_tokens=selection.tokens,
            cut=selection.cut,
        )

    def _required(self, required: Sequence[str]) -> list[str]:
        ids: list[str] = []
        for ref in required:
            spec = self._registry.get(ref)  # BLOCK_NOT_FOUND with close names otherwise
            if spec.id not in ids:
                ids.append(spec.id)
        return ids

    def _rank(self, query: str, documents: str, mode: RetrievalMode) -> list[RankedBlock]:
        rows = self._scores(query, mode)
        extra = [0.0] * len(rows)
        if documents.strip():
            best_query = max((score for _, score, _, _ in rows), default=0.0)
            scale = DOCUMENT_WEIGHT * (best_query if best_query > 0 else 1.0)
            from_documents = minmax([score for _, score, _, _ in self._scores(documents, mode)])
            extra = [scale * float(value) for value in from_documents]
            rows = [
                (block_id, score + added, bm25, dense)
                for (block_id, score, bm25, dense), added in zip(rows, extra, strict=True)
            ]
        added_by = dict(zip(self._ids, extra, strict=True)) if documents.strip() else {}
        best = max((score for _, score, _, _ in rows), default=0.0)
        boost = self.prior_weight * max(best, 0.0)
        scored = [
            (block_id, score + boost * self.prior.get(block_id, 0.0), bm25, dense)
            for block_id, score, bm25, dense in rows
        ]
        scored.sort(key=lambda row: -row[1])  # stable: ties keep the catalog's order
        return [
            self._ranked(block_id, score, bm25, dense, rank, added_by.get(block_id))
            for rank, (block_id, score, bm25, dense) in enumerate(scored, start=1)
        ]

    def _scores(
        self, text: str, mode: RetrievalMode
    ) -> list[tuple[str, float, float | None, float | None]]:
        """Every block's (id, score, bm25, dense) for ``text``, in catalog order."""
        if mode == "hybrid":
            dense = self.dense_index().scores(text)
            bm25 = self.bm25.scores(text)
            hits = fuse(self._ids, bm25, dense, dense_weight=self.dense_weight)
            by_id = {hit.id: (hit.id, hit.score, hit.bm25, hit.dense) for hit in hits}
            return [by_id[block_id] for block_id in self._ids]
        scores = self.dense_index().scores(text) if mode == "dense" else self.bm25.scores(text)
        return [
            (
                block_id,
                float(value),
                float(value) if mode == "bm25" else None,
                float(value) if mode == "dense" else None,
            )
            for block_id, value in zip(self._ids, scores, strict=True)
        ]

    def _ranked(
        self,
        block_id: str,
        score: float,
        bm25: float | None,
        dense: float | None,
        rank: int,
        documents: float | None,
    ) -> RankedBlock:
        return RankedBlock(
            id=block_id,
            category=self._category[block_id],
            score=round(score, 6),
            bm25=None if bm25 is None else round(bm25, 6),
            dense=None if dense is None else round(dense, 6),
            rank=rank,
            prior=round(self.prior.get(block_id, 0.0), 6),
            documents=None if documents is None else round(documents, 6),
        )


def _check_options(query: str, mode: str, k_per_category: int, max_total: int) -> None:
    check_choice("mode", mode, RETRIEVAL_MODES, message=f"検索モード '{mode}' は使えません。")
    if not query.strip():
        raise input_error(
            "ブロックを検索する文（指示）が空です。",
            "やりたいことを日本語で書いてください（例: 請求書と入金明細を照合したい）。",
        )
    for name, value in (("k_per_category", k_per_category), ("max_total", max_total)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise input_error(
                f"{name} は 1 以上の整数で指定してください（指定値: {value!r}）。",
                f"既定はカテゴリごと {DEFAULT_K_PER_CATEGORY} 件、合計 {DEFAULT_MAX_TOTAL} 件です。",
                **{name: value},
            )


def _dense_unavailable() -> ConfigurationError:
    return ConfigurationError(
        "埋め込みモデルが設定されていないため、dense 検索はできません。",
        hint="KEIRI_LLM_MODEL_EMBEDDING に provider:model（例: openai:text-embedding-3-small）を"
        "設定するか、検索モードを bm25 または hybrid にしてください。",
        details={"variable": "KEIRI_LLM_MODEL_EMBEDDING", "mode": "dense"},
    )
