"""BM25 over Japanese text: ranking, edge cases, and saving to / loading from a directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.errors import FileProcessingError
from keiri_agent.retrieval.bm25 import META_FILE, BM25Index

MANUAL = {
    "reconcile": "入金消込の手順: 銀行の入金明細と請求一覧を突合し、差額を確認します。",
    "expense": "経費精算は月末までに申請してください。領収書の原本を添付します。",
    "e1024": "エラーコード E-1024 は通信の切断です。ルーターを再起動してください。",
    "e2048": "エラーコード E-2048 はディスクの容量不足です。不要なファイルを削除してください。",
    "sales": "月次の売上を得意先別に集計し、前月比をグラフにします。",
}


@pytest.fixture
def index() -> BM25Index:
    return BM25Index.build(list(MANUAL.values()), ids=list(MANUAL))


def test_the_document_about_the_query_ranks_first(index: BM25Index) -> None:
    hits = index.search("入金の消込はどうやるの？", k=3)
    assert hits[0].id == "reconcile"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert index.search("売り上げを集計したい")[0].id == "sales"


def test_an_error_code_finds_exactly_its_own_entry(index: BM25Index) -> None:
    hits = index.search("E-1024 が出ました", k=5)
    assert hits[0].id == "e1024"
    # The whole code outweighs the shared pieces ("e", "エラーコード").
    assert hits[0].score > 2 * next(h.score for h in hits if h.id == "e2048")


def test_search_returns_only_matching_documents_up_to_k(index: BM25Index) -> None:
    hits = index.search("領収書", k=10)
    assert [h.id for h in hits] == ["expense"]
    assert len(index.search("エラーコード", k=1)) == 1
    with pytest.raises(ValueError, match="k must"):
        index.search("領収書", k=0)


def test_a_query_without_indexable_terms_finds_nothing(index: BM25Index) -> None:
    assert index.search("をにはが。、") == []
    assert index.search("存在しない単語ばかりｚｚｚ") == []
    assert index.scores("").tolist() == [0.0] * len(MANUAL)


def test_repeating_a_query_word_does_not_change_the_scores(index: BM25Index) -> None:
    once = index.scores("請求 経費")
    assert index.scores("請求 請求 請求 経費").tolist() == once.tolist()


def test_an_empty_corpus_is_a_valid_index_that_finds_nothing(tmp_path: Path) -> None:
    empty = BM25Index.build([])
    assert len(empty) == 0
    assert empty.search("請求書") == []
    loaded = BM25Index.load(empty.save(tmp_path / "empty"))
    assert len(loaded) == 0
    assert loaded.search("請求書") == []


def test_ids_must_match_the_documents() -> None:
    with pytest.raises(ValueError, match="unique"):
        BM25Index.build(["a", "b"], ids=["x", "x"])
    with pytest.raises(ValueError, match="ids for"):
        BM25Index.build(["a", "b"], ids=["x"])


def test_save_and_load_give_the_same_results(index: BM25Index, tmp_path: Path) -> None:
    target = index.save(tmp_path / "manual-index")
    loaded = BM25Index.load(target)
    assert loaded.ids == index.ids
    for query in ("入金消込", "E-1024", "領収書 申請", "グラフ"):
        assert loaded.search(query) == index.search(query)


def test_saving_again_replaces_the_index_as_a_whole(index: BM25Index, tmp_path: Path) -> None:
    target = tmp_path / "indexes" / "idx"
    index.save(target)
    BM25Index.build(["固定資産台帳の更新"], ids=["assets"]).save(target)
    loaded = BM25Index.load(target)
    assert loaded.ids == ["assets"]
    assert loaded.search("固定資産")[0].id == "assets"
    assert [p.name for p in target.parent.iterdir()] == ["idx"]  # no staging left behind


def test_loading_a_missing_or_damaged_index_is_a_clear_error(
    index: BM25Index, tmp_path: Path
) -> None:
    with pytest.raises(FileProcessingError, match="検索インデックスがありません"):
        BM25Index.load(tmp_path / "nowhere")
    target = index.save(tmp_path / "idx")
    (target / META_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(FileProcessingError, match="壊れている") as info:
        BM25Index.load(target)
    assert "作り直して" in info.value.hint


def test_an_index_built_with_other_tokenizer_rules_is_refused(
    index: BM25Index, tmp_path: Path
) -> None:
    target = index.save(tmp_path / "idx")
    meta = json.loads((target / META_FILE).read_text(encoding="utf-8"))
    meta["tokenizer"] = "sudachipy-0.0.1/sudachidict_core-1/rules-0"
    (target / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(FileProcessingError, match="別の形態素解析の設定") as info:
        BM25Index.load(target)
    assert info.value.details["built_with"] == meta["tokenizer"]
