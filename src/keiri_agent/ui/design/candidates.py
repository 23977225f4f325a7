"""The Top-K candidate blocks of the 設計 page: ranked for the current instruction before
anything is generated (retrieval needs no LLM), asked the way the generator asks and cached per
query, and shown as a table with what was cut.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import LLMRole, Settings
from keiri_agent.design.engine import prompt_documents, required_blocks, retrieve_candidates
from keiri_agent.design.models import DesignEngineOptions
from keiri_agent.design.templates import TemplateSpec
from keiri_agent.design.topk import BlockRetriever, RetrievalResult
from keiri_agent.plan import category_word
from keiri_agent.ui.design.check import DETAILS_TITLE
from keiri_agent.ui.design.inputs import Documents
from keiri_agent.ui.design.state import TOPK_KEY
from keiri_agent.ui.screen_words import shown_table

__all__ = ["candidate_rows", "candidates", "render_candidates", "retriever_for"]


@st.cache_resource(max_entries=4, show_spinner=False)
def _retriever(
    _registry: BlockRegistry, _settings: Settings, key: tuple[Any, ...]
) -> BlockRetriever:
    return BlockRetriever(_registry, settings=_settings)


def _setup(registry: BlockRegistry, settings: Settings) -> tuple[Any, ...]:
    """What a retriever depends on: the registry, the embedding model, the embedding cache."""
    return id(registry), str(settings.model_for(LLMRole.EMBEDDING)), str(settings.keiri_cache_dir)


def retriever_for(registry: BlockRegistry, settings: Settings) -> BlockRetriever:
    """One retriever per setup, shared by the candidates table and the generator."""
    return _retriever(registry, settings, _setup(registry, settings))


def candidates(
    instruction: str,
    documents: Documents | None,
    templates: list[TemplateSpec],
    registry: BlockRegistry,
    settings: Settings,
) -> RetrievalResult:
    """Top-K for the instruction, asked the way the generator asks (cached per query)."""
    options = DesignEngineOptions()
    normalized = prompt_documents(documents.texts if documents else [], options)
    query = instruction.strip()
    cache_key = (
        query,
        normalized,
        options.retrieval_mode,
        tuple(required_blocks(templates)),
        _setup(registry, settings),
    )
    cached = st.session_state.get(TOPK_KEY)
    if cached is not None and cached[0] == cache_key:
        result: RetrievalResult = cached[1]
        return result
    result = retrieve_candidates(
        retriever_for(registry, settings), query, normalized, templates, options
    )
    st.session_state[TOPK_KEY] = (cache_key, result)
    return result


def _ports(ports: Mapping[str, Any]) -> str:
    """A block's ports by their labels (``*``: required), as the plan's form names them."""
    parts = []
    for name, port in ports.items():
        port = port if isinstance(port, Mapping) else {}
        mark = "*" if port.get("required") else ""
        parts.append(f"{port.get('label') or name}{mark}")
    return "、".join(parts)


def _first_sentence(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    head, stop, _ = line.partition("。")
    return head + stop


def candidate_rows(result: RetrievalResult, registry: BlockRegistry) -> list[dict[str, Any]]:
    """One row per candidate block: its name, its category, inputs and outputs by their
    labels (``*`` = required), what it does (the description's first sentence); the block ids
    are in the 詳細 expander under the tables."""
    rows = []
    for number, ranked in enumerate(result.candidates, start=1):
        entry = registry.get(ranked.id).catalog_entry()
        rows.append(
            {
                "順位": number,
                "ブロック": entry.get("label") or entry["id"],
                "カテゴリ": category_word(entry["category"]),
                "入力": _ports(entry["inputs"]),
                "出力": _ports(entry["outputs"]),
                "説明": _first_sentence(entry["description"] or ""),
                "スコア": round(ranked.score, 3),
            }
        )
    return rows


def render_candidates(result: RetrievalResult, registry: BlockRegistry) -> None:
    mode = {"bm25": "BM25", "dense": "埋め込み", "hybrid": "BM25＋埋め込み"}[result.mode_used]
    st.caption(
        f"{len(result.candidates)} 件（全 {len(result.ranking)} ブロック中、検索: {mode}）。"
        "自動生成では LLM にこの候補だけを示します。入力の * は必須です。"
    )
    if result.note:
        st.info(result.note, icon="ℹ️")
    st.dataframe(shown_table(candidate_rows(result, registry)), hide_index=True, width="stretch")
    budget = (
        f"トークン予算 {result.token_budget:,} のうち約 {result.candidate_tokens:,} を使用。"
        if result.token_budget
        else ""
    )
    st.caption(f"{budget}{result.cut_summary()}")
    if result.cut:
        rows = [
            {
                "ブロック": registry.get(c.id).shown_name,
                "順位": c.rank,
                "除外の理由": c.detail,
            }
            for c in result.cut
        ]
        st.dataframe(shown_table(rows), hide_index=True, width="stretch")
    with st.expander(DETAILS_TITLE):  # the ids a plan's YAML is written with
        blocks = [*(c.id for c in result.candidates), *(c.id for c in result.cut)]
        ids = [{"ブロック": registry.get(b).shown_name, "YAML での名前": b} for b in blocks]
        st.dataframe(shown_table(ids), hide_index=True, width="stretch")
