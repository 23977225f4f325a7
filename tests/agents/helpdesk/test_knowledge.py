"""Searching the sample knowledge base: what a hit carries, error codes, the two Q/A modes
(BM25 when no embedding model is set, dense in Qdrant local mode otherwise), hybrid ranking and
the errors of a missing or half-written index."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
from keiri_agent.agents.helpdesk.knowledge.storage import QDRANT_DIR, STATE_FILE
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.llm import get_embedder
from tests.agents.helpdesk.conftest import EXAMPLES, bm25_settings
from tests.support.llm_server import ScriptedLLMServer

MANUAL = "XYZシステム_ユーザーマニュアル.pdf"


@pytest.fixture
def kb(helpdesk_index: Path) -> KnowledgeBase:
    return KnowledgeBase.open(helpdesk_index, settings=bm25_settings())


def test_manual_hits_cite_file_page_chunk_and_score(kb: KnowledgeBase) -> None:
    hits = kb.search_manual("経費の締め日と支払日", k=3, min_relevance=0.0)  # the floor: elsewhere
    assert len(hits) == 3
    first = hits[0]
    assert (first.file_name, first.page, first.row, first.source) == (MANUAL, 8, None, "manual")
    assert "毎月 25 日" in first.content
    assert first.chunk_id.endswith(f"-p8-c{first.chunk_id.rsplit('-c', 1)[1]}")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert first.citation() == f"{MANUAL} p.8"


@pytest.mark.parametrize(
    ("code", "page"),
    [("E-1004", 12), ("E-2007", 13), ("E-3004", 14), ("E-5004", 14)],
)
def test_error_codes_are_found_by_search_manual(kb: KnowledgeBase, code: str, page: int) -> None:
    hits = kb.search_manual(code, k=3)
    assert any(h.page == page and code in h.content for h in hits), [h.citation() for h in hits]
    # Every chunk with the exact code ranks before chunks with other codes (E-1005, ...).
    contains = [code in h.content for h in kb.search_manual(code, k=10)]
    assert contains[0]
    assert contains == sorted(contains, reverse=True)


def test_qa_hits_cite_the_csv_row(kb: KnowledgeBase) -> None:
    (hit,) = kb.search_qa("パスワードを忘れてしまいました", k=1)
    assert (hit.file_name, hit.row, hit.page, hit.source) == ("qa.csv", 1, None, "qa")
    assert hit.content.startswith("Q: パスワードを忘れてしまいました")
    assert "A: ログイン画面の「パスワードをお忘れの方」" in hit.content
    assert hit.chunk_id.endswith("-r1")
    assert hit.score > 0
    assert hit.citation() == "qa.csv 1 行目"


def test_without_an_embedding_model_search_qa_is_bm25_and_says_so(
    helpdesk_index: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="keiri_agent.agents.helpdesk"):
        kb = KnowledgeBase.open(helpdesk_index, settings=bm25_settings())
    assert kb.qa_mode == "bm25"
    assert [r for r in caplog.records if "search_qa mode bm25" in r.getMessage()]
    stats = kb.stats()
    assert (stats.qa_mode, stats.embedding_model, stats.qdrant) == ("bm25", None, None)
    assert "KEIRI_LLM_MODEL_EMBEDDING" in stats.qa_mode_reason
    assert (stats.files, stats.chunks, stats.qa_rows) == (2, 41, 36)
    assert stats.file_names == [MANUAL, "リリースノート.md"]
    assert not (helpdesk_index / QDRANT_DIR).exists()


def test_hybrid_ranks_manual_pages_and_qa_rows_together(kb: KnowledgeBase) -> None:
    hits = kb.search_hybrid("ワンタイムパスワードを入れてもエラーになる", k=4)
    assert {h.source for h in hits} == {"manual", "qa"}
    # The FAQ row about E-1004 and the manual's one-time-password page lead.
    assert {(h.source, h.row or h.page) for h in hits[:2]} == {("qa", 4), ("manual", 3)}
    assert all(0.0 <= h.score <= 1.0 and h.above_floor for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_searches_can_run_from_several_threads(kb: KnowledgeBase) -> None:
    queries = ["E-1004", "締め日", "請求書の取消し", "CSV 取込", "バックアップ", "代理承認"]
    expected = {q: kb.search_manual(q) for q in queries}
    seen: dict[str, list[object]] = {}

    def work(query: str) -> None:
        seen[query] = kb.search_manual(query) + kb.search_qa(query)

    threads = [threading.Thread(target=work, args=(q,)) for q in queries * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for query in queries:
        assert seen[query][: len(expected[query])] == expected[query]


def test_bad_search_arguments_are_explained(kb: KnowledgeBase) -> None:
    with pytest.raises(BlockError, match="検索語が空です") as empty:
        kb.search_manual("  ")
    assert empty.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    with pytest.raises(BlockError, match="1〜50"):
        kb.search_qa("パスワード", k=0)


def test_a_missing_index_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(BlockError) as missing:
        KnowledgeBase.open(tmp_path / "nowhere", settings=bm25_settings())
    assert "ナレッジベース" in missing.value.message
    assert "keiri-agent helpdesk ingest" in missing.value.hint
    assert str(tmp_path / "nowhere") in missing.value.hint


def test_a_folder_holding_no_manual_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """Mirrored, a folder of no manual (empty, or of files of other types) would empty the
    index: the ingest stops, naming the folder and what it skipped."""
    folder = tmp_path / "4月 マニュアル"
    folder.mkdir()
    (folder / "memo.csv").write_bytes(b"not a manual")
    with pytest.raises(BlockError, match="取り込めるマニュアルがありません") as refused:
        ingest(tmp_path / "index", manuals=[folder], settings=bm25_settings())
    assert f"「{folder}」" in refused.value.message
    assert "1 件" in refused.value.message
    assert "何も変更していません" in refused.value.hint
    assert not (tmp_path / "index").exists()


def test_an_empty_index_says_how_to_fill_it(tmp_path: Path) -> None:
    empty_folder = tmp_path / "manuals"
    empty_folder.mkdir()
    (empty_folder / "memo.pdf").write_bytes(b"not a manual")  # listed as failed, not added
    result = ingest(tmp_path / "index", manuals=[empty_folder], settings=bm25_settings())
    assert (result.files_seen, len(result.failures)) == (1, 1)
    with pytest.raises(BlockError, match="マニュアルも Q/A もありません") as empty:
        KnowledgeBase.open(tmp_path / "index", settings=bm25_settings())
    assert "--manual" in empty.value.hint


def test_a_half_written_index_is_refused(helpdesk_index_copy: Path) -> None:
    state = json.loads((helpdesk_index_copy / STATE_FILE).read_text(encoding="utf-8"))
    state["generation"] -= 1  # as if the BM25 rebuild had not finished
    (helpdesk_index_copy / STATE_FILE).write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(BlockError, match="前回の取り込みが完了していません") as stale:
        KnowledgeBase.open(helpdesk_index_copy, settings=bm25_settings())
    assert "ingest" in stale.value.hint


@pytest.fixture
def embedding_settings(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:scripted-embed")
    monkeypatch.setenv("KEIRI_CACHE_DIR", str(tmp_path / "cache"))


def _embedded_texts(server: ScriptedLLMServer) -> list[str]:
    texts: list[str] = []
    for body in server.embedding_requests():
        raw = body["input"]
        texts.extend(raw if isinstance(raw, list) else [raw])
    return texts


@pytest.mark.usefixtures("embedding_settings")
def test_dense_search_qa_uses_qdrant_local_mode_and_the_embedding_cache(
    llm_server: ScriptedLLMServer, helpdesk_index_copy: Path, tmp_path: Path
) -> None:
    # The index was ingested without a model: opening it with one adds the vectors.
    kb = KnowledgeBase.open(helpdesk_index_copy)
    assert kb.qa_mode == "dense"
    stats = kb.stats()
    assert stats.embedding_model == "openai:scripted-embed"
    assert stats.qdrant == f"local:{helpdesk_index_copy / QDRANT_DIR}"
    assert (helpdesk_index_copy / QDRANT_DIR).is_dir()
    assert len(_embedded_texts(llm_server)) == 36

    question = "スマートフォンを機種変更しました。認証アプリはどうすればいいですか？"
    hits = kb.search_qa(question, k=3)
    assert hits[0].row == 5
    assert all(-1.0 <= h.score <= 1.0 and h.source == "qa" for h in hits)
    assert llm_server.embedding_requests()[-1]["model"] == "scripted-embed"

    # Changing one answer embeds that pair only; the rest come from Qdrant and the cache.
    csv_text = (EXAMPLES / "qa.csv").read_bytes().decode("cp932")
    changed = tmp_path / "qa.csv"
    changed.write_bytes(
        csv_text.replace("翌営業日までにリセットします", "当日中にリセットします").encode("cp932")
    )
    before = len(_embedded_texts(llm_server))
    result = ingest(helpdesk_index_copy, qa=changed)
    assert result.qa is not None
    assert result.qa.changed
    assert result.qa.embedded == 1
    assert result.qa_mode == "dense"
    assert len(_embedded_texts(llm_server)) == before + 1
    assert "当日中にリセットします" in _embedded_texts(llm_server)[-1]
    assert kb.search_qa(question, k=1)[0].content.endswith("当日中にリセットします。")


@pytest.mark.usefixtures("embedding_settings")
def test_dense_hybrid_fuses_bm25_and_vectors(helpdesk_index_copy: Path) -> None:
    kb = KnowledgeBase.open(helpdesk_index_copy, embedder=get_embedder())
    hits = kb.search_hybrid("E-3001 文字コードを判別できません", k=5)
    assert {h.source for h in hits} == {"manual", "qa"}
    assert next(h for h in hits if h.source == "qa").row == 24


@pytest.mark.usefixtures("embedding_settings")
def test_an_unreachable_qdrant_server_is_named_in_the_error(
    helpdesk_index_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("KEIRI_QDRANT_URL", url)
    with pytest.raises(BlockError) as failed:
        KnowledgeBase.open(helpdesk_index_copy)
    assert failed.value.code == ErrorCode.API_ERROR
    assert url in failed.value.message
    assert "KEIRI_QDRANT_URL" in failed.value.hint
    assert not (helpdesk_index_copy / QDRANT_DIR).exists()  # no silent switch to local mode


@pytest.mark.usefixtures("embedding_settings")
def test_dense_searches_and_a_sync_can_overlap_in_threads(helpdesk_index_copy: Path) -> None:
    kb = KnowledgeBase.open(helpdesk_index_copy)
    questions = ["パスワードを忘れた", "締め日はいつ", "画面が真っ白", "領収書の原本"] * 4
    expected = {q: [h.row for h in kb.search_qa(q)] for q in set(questions)}
    errors: list[BaseException] = []

    def ask(question: str) -> None:
        try:
            assert [h.row for h in kb.search_qa(question)] == expected[question]
        except BaseException as exc:
            errors.append(exc)

    def reopen() -> None:
        try:
            KnowledgeBase.open(helpdesk_index_copy).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(q,)) for q in questions]
    threads.append(threading.Thread(target=reopen))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
