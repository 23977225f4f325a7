"""Top-K block retrieval for plan generation (seed 004 §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.config import Settings
from keiri_agent.design.prior import PRIOR_WEIGHT
from keiri_agent.design.topk import (
    DEFAULT_K_PER_CATEGORY,
    DEFAULT_MAX_TOTAL,
    DOCUMENT_WEIGHT,
    NO_EMBEDDING_NOTE,
    BlockRetriever,
    RetrievalMode,
    block_document,
)
from keiri_agent.errors import BlockError, ConfigurationError, ErrorCode
from keiri_agent.retrieval.eval import summarize
from tests.support.llm_server import ScriptedLLMServer

EVAL_SET = Path(__file__).resolve().parent.parent / "data" / "topk_eval.yaml"


@pytest.fixture(scope="module")
def registry() -> BlockRegistry:
    return BlockRegistry()  # built-in specs only


@pytest.fixture
def retriever(registry: BlockRegistry) -> BlockRetriever:
    return BlockRetriever(registry)


def _spec(block_id: str, description: str, **extra: Any) -> BlockSpec:
    return BlockSpec(
        id=block_id,
        version="1.0.0",
        entrypoint="tests.nowhere:Block",
        description=description,
        category=block_id.split(".")[0],
        **extra,
    )


def _small_registry(descriptions: dict[str, str]) -> BlockRegistry:
    registry = BlockRegistry(builtin=False)
    for block_id, description in descriptions.items():
        registry.add(_spec(block_id, description))
    return registry


def test_block_document_covers_id_words_tags_ports_and_category(registry: BlockRegistry) -> None:
    document = block_document(registry.get("table.reconcile"))
    for expected in (
        "table.reconcile",
        "table reconcile",
        "消込",
        "unmatched_left",
        "unmatched left",
    ):
        assert expected in document
    assert "請求一覧と入金明細" in document  # the description
    assert "照合する左の表" in document  # first sentence of a port description


def test_bm25_ranks_the_obvious_block_first(retriever: BlockRetriever) -> None:
    result = retriever.retrieve("入金消込をしたい", mode="bm25")
    assert result.ranking[0].id == "table.match_payments"  # the 入金消込 block (issue 35)
    assert [b.rank for b in result.ranking] == list(range(1, len(result.ranking) + 1))
    assert {b.id for b in result.ranking} == {s.id for s in retriever.specs}
    top = result.ranking[0]
    assert top.bm25 is not None
    assert top.bm25 > 0
    assert top.dense is None
    assert result.mode_used == "bm25"
    assert result.note is None


def test_the_usage_prior_is_a_bounded_head_start(registry: BlockRegistry) -> None:
    plain = BlockRetriever(registry, prior_weight=0)
    with_prior = BlockRetriever(registry)
    query = "督促リストを作って"
    raw = {b.id: b for b in plain.retrieve(query, mode="bm25").ranking}
    ranked = with_prior.retrieve(query, mode="bm25").ranking
    best = max(b.bm25 or 0.0 for b in ranked)
    for block in ranked:
        assert block.bm25 == raw[block.id].bm25
        assert block.score == pytest.approx(
            block.bm25 + PRIOR_WEIGHT * best * block.prior, abs=1e-5
        )
        assert 0.0 <= block.prior <= 1.0
    # Blocks the shipped plans use most get the largest prior; unused ones get none.
    priors = {b.id: b.prior for b in ranked}
    assert priors["ui.interactive_input"] == 1.0
    assert priors["ai.helpdesk_answer"] == 0.0
    assert all(b.score == b.bm25 for b in plain.retrieve(query, mode="bm25").ranking)


def test_hybrid_without_an_embedding_model_says_it_used_bm25(retriever: BlockRetriever) -> None:
    result = retriever.retrieve("月次売上を集計してグラフにしたい")
    assert result.mode_requested == "hybrid"
    assert result.mode_used == "bm25"
    assert result.note == NO_EMBEDDING_NOTE
    assert "KEIRI_LLM_MODEL_EMBEDDING" in result.note
    metrics = result.metrics()
    assert metrics["mode_used"] == "bm25"
    assert metrics["note"] == NO_EMBEDDING_NOTE
    assert metrics["candidates"] == result.candidate_ids()
    assert metrics["duration_ms"] == result.duration_ms >= 0


def test_dense_without_an_embedding_model_is_a_configuration_error(
    retriever: BlockRetriever,
) -> None:
    with pytest.raises(ConfigurationError) as info:
        retriever.retrieve("請求書を読み取る", mode="dense")
    assert "埋め込みモデル" in info.value.message
    assert "KEIRI_LLM_MODEL_EMBEDDING" in info.value.hint


def test_candidates_respect_the_per_category_and_total_caps(retriever: BlockRetriever) -> None:
    result = retriever.retrieve("表を集計して重複を除き、照合する", mode="bm25", k_per_category=2)
    per_category: dict[str, int] = {}
    for block in result.candidates:
        per_category[block.category] = per_category.get(block.category, 0) + 1
    assert max(per_category.values()) == 2
    table_blocks = [b.id for b in result.ranking if b.category == "table"][:2]
    assert [b.id for b in result.candidates if b.category == "table"] == table_blocks
    capped = retriever.retrieve("表を集計して重複を除き、照合する", mode="bm25", max_total=3)
    assert len(capped.candidates) == 3
    assert capped.candidate_ids() == [b.id for b in capped.ranking[:3]]


def test_the_defaults_follow_the_seed() -> None:
    assert 5 <= DEFAULT_K_PER_CATEGORY <= 8
    assert DEFAULT_MAX_TOTAL == 30


def test_required_blocks_are_always_candidates(retriever: BlockRetriever) -> None:
    result = retriever.retrieve(
        "入金消込", mode="bm25", max_total=2, required=["ui.interactive_input", "report.chart@0"]
    )
    ids = result.candidate_ids()
    assert {"ui.interactive_input", "report.chart"} <= set(ids)
    assert len(ids) == 2  # the required blocks fill the total; nothing else fits
    assert result.metrics()["required"] == ["ui.interactive_input", "report.chart"]
    wider = retriever.retrieve("入金消込", mode="bm25", max_total=3, required=["report.chart"])
    assert wider.candidate_ids()[0] == "table.match_payments"
    assert "report.chart" in wider.candidate_ids()


def test_an_unknown_required_block_is_refused(retriever: BlockRetriever) -> None:
    with pytest.raises(BlockError) as info:
        retriever.retrieve("入金消込", required=["table.reconcilee"])
    assert info.value.code == ErrorCode.BLOCK_NOT_FOUND
    assert "table.reconcilee" in info.value.message


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"mode": "semantic"}, "検索モード"),
        ({"k_per_category": 0}, "k_per_category"),
        ({"max_total": -1}, "max_total"),
    ],
)
def test_bad_options_are_refused_in_japanese(
    retriever: BlockRetriever, kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(BlockError, match=field) as info:
        retriever.retrieve("入金消込", **kwargs)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED


def test_a_blank_query_is_refused(retriever: BlockRetriever) -> None:
    with pytest.raises(BlockError, match="空です"):
        retriever.retrieve("  \n ")


def test_a_long_query_with_document_text_still_finds_the_block(retriever: BlockRetriever) -> None:
    documents = ("株式会社山田商事 御中 請求金額 110,000円 支払期日 2025年1月31日。" * 80)[:4000]
    result = retriever.retrieve(
        "請求書と入金明細を照合して消込したい", documents=documents, mode="bm25"
    )
    assert "table.reconcile" in result.candidate_ids()[:3]


EXPENSE_INSTRUCTION = (
    "経費明細の Excel を読み込み、金額が 5 万円以上の行だけを抜き出して Excel に出力してください"
)
BANK_MEMO = (
    "経費精算の担当: 長谷川 美咲（携帯 090-4412-7788、misaki.hasegawa@example.jp）。\n"
    "高額の経費は 5 万円以上（50,000円）とし、2025年4月1日から適用する。\n"
    "立替金の振込先は 普通 3958211、本人確認のマイナンバー 123456789018 は別途保管。\n"
)


@pytest.mark.parametrize("required", [[], ["ui.interactive_input"]])
def test_reference_documents_do_not_outvote_the_instruction(
    retriever: BlockRetriever, required: list[str]
) -> None:
    # The memo's bank words (振込先・普通) would put the bank blocks ahead of the Excel writer.
    result = retriever.retrieve(
        EXPENSE_INSTRUCTION, documents=BANK_MEMO, mode="bm25", required=required
    )
    assert {"excel.write_report", "file.read_table", "table.filter"} <= set(result.candidate_ids())
    assert result.query == EXPENSE_INSTRUCTION
    assert result.documents_chars == len(BANK_MEMO.strip())
    alone = retriever.retrieve(EXPENSE_INSTRUCTION, mode="bm25", required=required)
    assert all(block.documents is None for block in alone.ranking)
    # The documents still count: the memo's words move the bank matcher up.
    rank = {block.id: block.rank for block in result.ranking}
    rank_alone = {block.id: block.rank for block in alone.ranking}
    assert rank["table.match_payments"] < rank_alone["table.match_payments"]


def test_documents_alone_decide_when_the_instruction_matches_nothing(
    retriever: BlockRetriever,
) -> None:
    result = retriever.retrieve(
        "よろしくお願いします", documents="請求書と入金明細を照合して消込", mode="bm25"
    )
    assert result.candidate_ids()[0] == "table.reconcile"


def test_bm25_recall_at_8_on_the_evaluation_set(retriever: BlockRetriever) -> None:
    cases = yaml.safe_load(EVAL_SET.read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 30
    known = {spec.id for spec in retriever.specs}
    for case in cases:
        assert set(case["gold"]) <= known, case["id"]
    rankings = [
        [block.id for block in retriever.retrieve(case["instruction"], mode="bm25").ranking]
        for case in cases
    ]
    summary = summarize(rankings, [case["gold"] for case in cases], ks=(8,))
    assert summary.recall[8] >= 0.9, summary


# --- with an embedding model (the scripted OpenAI-compatible server) -----------------------


@pytest.fixture
def embedding_model(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Path:
    cache_dir = tmp_path / "keiri-cache"
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:scripted-embed")
    monkeypatch.setenv("KEIRI_CACHE_DIR", str(cache_dir))
    return cache_dir


def test_hybrid_with_an_embedding_model_uses_both_scores(
    registry: BlockRegistry, embedding_model: Path
) -> None:
    result = BlockRetriever(registry).retrieve("請求一覧と入金明細を照合して消込したい")
    assert result.mode_used == "hybrid"
    assert result.note is None
    assert result.ranking[0].id == "table.reconcile"
    for block in result.ranking:
        assert block.bm25 is not None
        assert block.dense is not None
        assert 0.0 <= block.score <= 1.0
    assert (embedding_model / "embeddings.sqlite3").is_file()


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_reference_documents_only_add_a_bounded_share_in_every_mode(
    registry: BlockRegistry, embedding_model: Path, mode: RetrievalMode
) -> None:
    retriever = BlockRetriever(registry, prior_weight=0)
    alone = retriever.retrieve(EXPENSE_INSTRUCTION, mode=mode)
    result = retriever.retrieve(EXPENSE_INSTRUCTION, documents=BANK_MEMO, mode=mode)
    assert result.mode_used == mode
    base = {block.id: block.score for block in alone.ranking}
    ceiling = DOCUMENT_WEIGHT * max(base.values())
    added = {block.id: block.score - base[block.id] for block in result.ranking}
    assert max(added.values()) == pytest.approx(ceiling, abs=1e-5)
    for block in result.ranking:
        assert block.documents == pytest.approx(added[block.id], abs=1e-5)
        assert -1e-6 <= added[block.id] <= ceiling + 1e-6
    assert "excel.write_report" in result.candidate_ids()


def test_block_embeddings_are_cached_across_retrievers(
    registry: BlockRegistry, llm_server: ScriptedLLMServer, embedding_model: Path
) -> None:
    query = "フォルダのファイル一覧を作る"
    first = BlockRetriever(registry).retrieve(query, mode="dense")
    assert first.mode_used == "dense"
    assert first.ranking[0].dense is not None
    assert first.ranking[0].bm25 is None
    sent = len(llm_server.embedding_requests())
    assert sent >= 2  # the block documents, then the query
    again = BlockRetriever(registry).retrieve(query, mode="dense")
    assert len(llm_server.embedding_requests()) == sent
    assert again.candidate_ids() == first.candidate_ids()


def test_only_changed_specs_are_embedded_again(
    llm_server: ScriptedLLMServer, embedding_model: Path
) -> None:
    before = _small_registry({"a.one": "請求書を読む", "b.two": "売上を集計する"})
    BlockRetriever(before).retrieve("請求", mode="dense")
    sent = len(llm_server.embedding_requests())
    after = _small_registry({"a.one": "請求書を読む", "b.two": "売上を月別に集計する"})
    BlockRetriever(after).retrieve("請求", mode="dense")
    new_requests = llm_server.embedding_requests()[sent:]
    assert len(new_requests) == 1
    (changed,) = new_requests[0]["input"]
    assert "月別" in changed
    assert "b.two" in changed


def test_an_injected_embedder_and_settings_are_used(
    registry: BlockRegistry, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    from keiri_agent.llm import get_embedder

    settings = Settings(
        _env_file=None,
        keiri_llm_model_embedding="openai:scripted-embed",
        keiri_cache_dir=tmp_path / "cache",
    )
    retriever = BlockRetriever(
        registry, embedder=get_embedder(settings=settings), settings=settings
    )
    assert retriever.retrieve("入金消込").mode_used == "hybrid"
    assert (tmp_path / "cache" / "embeddings.sqlite3").is_file()


# --- the candidate set: pre-filter, budget, what was cut ------------------------------------

MAX_CANDIDATES = 12  # a typical request (issue 19)
SCHEMA_BUDGET = 16_000  # bytes of the strict stage-2 schema


def test_candidate_sets_on_the_evaluation_set_are_small_and_keep_the_needed_blocks(
    retriever: BlockRetriever, registry: BlockRegistry
) -> None:
    from keiri_agent.design.wire import wiring_schema

    cases = yaml.safe_load(EVAL_SET.read_text(encoding="utf-8"))["cases"]
    found = needed = 0
    for case in cases:
        result = retriever.retrieve(
            case["instruction"], mode="bm25", required=["ui.interactive_input"]
        )
        ids = result.candidate_ids()
        assert len(ids) <= MAX_CANDIDATES, (case["id"], ids)
        assert result.candidate_tokens <= result.token_budget if result.token_budget else True
        assert wiring_schema(registry, ids, variant="strict").size <= SCHEMA_BUDGET, case["id"]
        assert len(ids) + len(result.cut) == len(result.ranking)
        found += len(set(case["gold"]) & set(ids))
        needed += len(case["gold"])
    assert found / needed >= 0.9, found / needed
    # The old selection (6 per category, 30 in all, nothing else) sent 20 of the 22 blocks.
    old = retriever.retrieve(
        cases[0]["instruction"], mode="bm25", k_per_category=6, token_budget=None, prefilter=False
    )
    assert len(old.candidates) >= 20
    assert {b.reason for b in old.cut} <= {"per_category"}


def test_cut_blocks_say_why(retriever: BlockRetriever) -> None:
    result = retriever.retrieve("請求書と入金明細を照合して差異を Excel に出力", mode="bm25")
    reasons = {block.reason for block in result.cut}
    assert reasons
    assert reasons <= {"category", "relevance", "per_category", "max_total", "budget"}
    assert all(block.detail and block.id not in result.candidate_ids() for block in result.cut)
    assert "report.chart" not in result.candidate_ids()
    assert result.cut_summary().startswith(f"除外 {len(result.cut)} 件")
    tight = retriever.retrieve(
        "請求書と入金明細を照合して差異を Excel に出力", mode="bm25", token_budget=2000
    )
    budget = [block for block in tight.cut if block.reason == "budget"]
    assert budget
    assert "トークン予算 2,000" in budget[0].detail
    assert tight.candidate_tokens <= 2000
    assert tight.metrics()["cut"][0]["reason"] in reasons | {"budget"}


def test_required_blocks_stay_in_over_the_budget(retriever: BlockRetriever) -> None:
    result = retriever.retrieve(
        "入金消込", mode="bm25", token_budget=500, required=["ui.interactive_input", "report.chart"]
    )
    assert set(result.candidate_ids()) == {"ui.interactive_input", "report.chart"}
    assert {b.reason for b in result.cut} >= {"budget"}
