"""Semantic search with the bundled model (issue 38): paraphrases found, off-topic refused,
fusion with the lexical ranking, the floor on both signals, and no network needed.

The sample knowledge base is ingested once per session with the default settings and no keys
(the model that ships with the install embeds the manual pieces and the Q/A pairs).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.agents.helpdesk.knowledge.ranking import (
    LEXICAL_WEIGHT,
    QUESTION_FORM_WEIGHT,
    RELATIVE_WINDOW,
    SHARED_WORDS_ALLOWANCE,
    SHARED_WORDS_RELEVANCE,
    Candidate,
    apply_semantic_floor,
    coverage,
    fuse_semantic,
)
from keiri_agent.agents.helpdesk.knowledge.semantic import SEMANTIC_FORMAT, SEMANTIC_STAMP
from keiri_agent.config import DEFAULT_HELPDESK_MIN_MARGIN
from keiri_agent.retrieval.dense import CACHE_FILE, FloatMatrix
from keiri_agent.retrieval.local_embedding import LOCAL_MODEL_KEY
from keiri_agent.retrieval.semantic import Background, embed_query, split_pieces
from tests.agents.helpdesk.conftest import bm25_settings, semantic_settings
from tests.support.helpdesk_eval import gold_id
from tests.support.helpdesk_paraphrases import found, load_lists, refused

PDF = "XYZシステム_ユーザーマニュアル.pdf"
# The examples: lexical matching cannot bridge ホテル代 / 宿泊費, 辞めた人 / 退職者.
PARAPHRASES = {
    "ホテル代はいくらまで出ますか": (f"{PDF}#p8",),
    "辞めた人のアカウントはどうなりますか": (f"{PDF}#p5", f"{PDF}#p12"),
    "上司が休暇中のとき、ほかの人に承認してもらえますか": (f"{PDF}#p6", "qa#18"),
    "インボイス番号の桁数を教えて": (f"{PDF}#p7", f"{PDF}#p13", "qa#16"),
}
LEXICAL_MISSES = ("ホテル代はいくらまで出ますか", "辞めた人のアカウントはどうなりますか")
OFF_TOPIC = [
    "社員食堂のメニューは？",
    "有給休暇はあと何日残っていますか",
    "会議室を予約したい",
    "明日の天気はどうですか",
]


@pytest.fixture(scope="module")
def kb(semantic_index: tuple[Path, Path]) -> KnowledgeBase:
    index, cache = semantic_index
    return KnowledgeBase.open(index, settings=semantic_settings(cache))


@pytest.fixture(scope="module")
def lexical_kb(semantic_index: tuple[Path, Path]) -> KnowledgeBase:
    return KnowledgeBase.open(semantic_index[0], settings=bm25_settings())


@pytest.mark.parametrize(("question", "gold"), PARAPHRASES.items())
def test_paraphrases_find_their_page_where_lexical_search_does_not(
    kb: KnowledgeBase, lexical_kb: KnowledgeBase, question: str, gold: tuple[str, ...]
) -> None:
    assert {gold_id(h) for h in kb.search(question, 3, tool="hybrid")} & set(gold)
    lexical = {gold_id(h) for h in lexical_kb.search(question, 3, tool="hybrid")}
    if question in LEXICAL_MISSES:
        assert not lexical & set(gold)


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_off_topic_questions_get_no_match(kb: KnowledgeBase, question: str) -> None:
    assert kb.search(question, 3, tool="hybrid") == []
    covered = kb.coverage(question)
    assert covered is not None
    assert not covered.covered
    assert covered.margin < DEFAULT_HELPDESK_MIN_MARGIN
    assert all(not h.above_floor for h in kb.rank(question, 3, tool="hybrid"))


# Off-topic questions that share the manual's words (パスワード, 明細, 取引先…) or sit near its
# pages as passages; the floor on the passage form alone (before the question-form margin)
# answered every one of them from the manual.
SHARED_WORD_OFF_TOPIC = [
    "社内のWi-Fiのパスワードを教えて",
    "給与明細の見方がわからない",
    "社用のタブレットが充電できない",
    "受付にお客様が来たときの案内の仕方",
    "ログインボーナスはありますか",
]


@pytest.mark.parametrize("question", SHARED_WORD_OFF_TOPIC)
def test_off_topic_questions_sharing_the_manuals_words_get_no_match(
    kb: KnowledgeBase, question: str
) -> None:
    assert kb.search(question, 3, tool="hybrid") == []
    covered = kb.coverage(question)
    assert covered is not None
    assert covered.as_question < covered.best - covered.background  # the question form decides


def test_vectors_of_an_older_format_are_embedded_again(
    tmp_path: Path, semantic_index: tuple[Path, Path]
) -> None:
    """An index whose semantic vectors were stored before the question form (no format in the
    stamp) is not read as current: its vectors are embedded again, in both forms."""
    index, cache = tmp_path / "index", semantic_index[1]
    shutil.copytree(semantic_index[0], index)
    stamp = index / SEMANTIC_STAMP
    old = json.loads(stamp.read_text(encoding="utf-8"))
    assert old.pop("format") == SEMANTIC_FORMAT
    stamp.write_text(json.dumps(old), encoding="utf-8")
    with KnowledgeBase.open(index, settings=semantic_settings(cache)) as reopened:
        search = reopened._semantic
        assert search is not None
        assert search.index.questions.shape == search.index.matrix.shape
        assert reopened.search("社内のWi-Fiのパスワードを教えて", 3) == []


def test_the_development_lists_as_measured(kb: KnowledgeBase) -> None:
    """benchmarks/helpdesk_floor.py measured 39/45 paraphrases found and 15/15 off-topic refused
    on the development lists; a change that loses more than one of each fails here."""
    dev = load_lists("dev")
    assert sum(found(kb, case) for case in dev.answerable) >= 38
    assert sum(refused(kb, q) for q in dev.off_topic) >= 14


def test_off_topic_questions_on_other_workplace_topics_get_no_match(kb: KnowledgeBase) -> None:
    """A reviewer's off-topic list (社宅, 忌引き, 副業, 定年, 名刺の渡し方…): 18 of 30 were refused
    with the first background, 29 of 30 once it covered workplace life beyond the canteen and
    leave; a change that loses more than one fails here."""
    dev2 = load_lists("dev2")
    assert sum(refused(kb, q) for q in dev2.off_topic) >= 28
    assert sum(found(kb, case) for case in dev2.answerable) >= 29


def test_an_exact_error_code_still_leads(kb: KnowledgeBase) -> None:
    hits = kb.search_manual("E-1004", k=10)
    contains = ["E-1004" in h.content for h in hits]
    assert contains[:3] == [True, True, True]
    assert contains == sorted(contains, reverse=True)


def test_the_search_says_how_it_searched(kb: KnowledgeBase) -> None:
    stats = kb.stats()
    assert stats.qa_mode == "dense"
    assert stats.semantic_model is not None
    assert "multilingual-e5-small" in stats.semantic_model
    assert stats.min_margin == DEFAULT_HELPDESK_MIN_MARGIN
    assert "ネットワーク不要" in stats.qa_mode_reason
    hit = kb.search("ホテル代はいくらまで出ますか", 1, tool="manual")[0]
    assert hit.similarity is not None
    assert 0.0 < hit.similarity <= 1.0


def test_the_margin_is_a_setting(semantic_index: tuple[Path, Path]) -> None:
    index, cache = semantic_index
    question = "ホテル代はいくらまで出ますか"
    with KnowledgeBase.open(
        index, settings=semantic_settings(cache, keiri_helpdesk_min_margin=0.5)
    ) as strict:
        assert strict.search(question, 3) == []
    with KnowledgeBase.open(
        index, settings=semantic_settings(cache, keiri_helpdesk_min_margin=-1.0)
    ) as lenient:
        assert lenient.search("社員食堂のメニューは？", 3) != []


def _covered(margin: float, relevance: float = 0.0, shared: float = 0.0) -> bool:
    """Coverage of a question whose margin is ``margin`` in both forms (before its words)."""
    return coverage(
        0.85,
        0.85 - margin,
        relevance,
        shared,
        as_question=margin,
        min_margin=DEFAULT_HELPDESK_MIN_MARGIN,
    ).covered


def test_the_floor_weighs_the_semantic_margin_and_the_lexical_relevance() -> None:
    # The same similarities: the question's words found in the manual decide.
    just_below = DEFAULT_HELPDESK_MIN_MARGIN - LEXICAL_WEIGHT * 0.5
    assert not _covered(just_below)
    assert _covered(just_below, relevance=0.6)
    # Nearer unrelated text than the manual: words alone do not make it covered.
    assert not _covered(-0.05, relevance=0.5, shared=0.5)


def test_the_margin_weighs_the_question_form_as_much_as_the_passage_form() -> None:
    """Near the manual as passages, but nearer the background once both sides are questions
    (社内の Wi-Fi のパスワード against パスワードの再設定): not covered. The old floor looked at
    the passage form only and took it."""
    margin = DEFAULT_HELPDESK_MIN_MARGIN
    as_passages = margin + 0.01
    as_questions = -0.04  # nearer the background
    mixed = (1 - QUESTION_FORM_WEIGHT) * as_passages + QUESTION_FORM_WEIGHT * as_questions
    assert mixed < margin - SHARED_WORDS_ALLOWANCE
    found = coverage(0.9, 0.9 - as_passages, 0.0, 1.0, as_question=as_questions, min_margin=margin)
    assert (found.margin, found.covered) == (pytest.approx(mixed), False)
    # Near in both forms: covered.
    assert coverage(0.9, 0.9 - as_passages, 0.0, 0.0, as_question=margin + 0.01, min_margin=margin)


def test_a_small_margin_needs_the_questions_words_in_a_text_nearest_in_meaning() -> None:
    margin = DEFAULT_HELPDESK_MIN_MARGIN
    between = margin - SHARED_WORDS_ALLOWANCE / 2  # below min_margin, within allowance
    assert not _covered(between, shared=SHARED_WORDS_RELEVANCE / 2)
    assert _covered(between, shared=SHARED_WORDS_RELEVANCE)
    # Beyond the allowance the words do not help; above min_margin they are not needed.
    assert not _covered(margin - 2 * SHARED_WORDS_ALLOWANCE, shared=1.0)
    assert _covered(margin + 0.001)


class _Without:
    """The background with the texts nearest one question left out (a topic it lacks)."""

    def __init__(self, background: Background, vector: FloatMatrix, left_out: int) -> None:
        self.matrix, self.questions = (
            matrix[np.argsort(matrix @ vector)[: -left_out or None]]
            for matrix in (background.matrix, background.questions)
        )

    def best(self, query: FloatMatrix) -> float:
        return float((self.matrix @ query).max())

    def best_as_question(self, query: FloatMatrix) -> float:
        return float((self.questions @ query).max())


def _on_a_topic_the_background_lacks(
    kb: KnowledgeBase, questions: list[str], check: Callable[[str], bool], left_out: int = 3
) -> int:
    search = kb._semantic
    assert search is not None
    full = search.background()
    count = 0
    try:
        for question in questions:
            vector = embed_query(search.embedder, question, search._cache)
            reduced = _Without(full, vector, left_out)
            search.background = lambda reduced=reduced: reduced  # type: ignore[method-assign,misc]
            count += check(question)
    finally:
        del search.background
    return count


def test_off_topic_questions_on_topics_the_background_lacks_get_no_match(
    kb: KnowledgeBase,
) -> None:
    """The background cannot hold every topic employees ask about. dev2's off-topic questions
    with each one's 3 nearest background texts left out: the margin alone refused 12 of 30;
    with the shared-words signal 20 of 30 (benchmarks/README.md), and the paraphrases are still
    found."""
    dev2 = load_lists("dev2")
    refused_count = _on_a_topic_the_background_lacks(
        kb, list(dev2.off_topic), lambda q: refused(kb, q)
    )
    assert refused_count >= 19
    cases = {case.question: case for case in dev2.answerable}
    found_count = _on_a_topic_the_background_lacks(kb, list(cases), lambda q: found(kb, cases[q]))
    assert found_count >= 28


def test_a_hit_counts_near_the_questions_best_or_with_the_words() -> None:
    best = 0.9
    hits = [
        Candidate("manual", "near", 0.03, relevance=0.0, similarity=best - RELATIVE_WINDOW / 2),
        Candidate("manual", "far", 0.02, relevance=0.1, similarity=best - 2 * RELATIVE_WINDOW),
        Candidate("qa", "1", 0.01, relevance=0.8, similarity=best - 3 * RELATIVE_WINDOW),
    ]
    covered = coverage(best, 0.8, 0.8, 0.8, as_question=0.1, min_margin=0.0)
    flags = [c.above_floor for c in apply_semantic_floor(hits, covered, min_relevance=0.35)]
    assert flags == [True, False, True]
    refused_all = coverage(best, 0.95, 0.8, 0.0, as_question=-0.05, min_margin=0.0)
    assert not any(
        c.above_floor for c in apply_semantic_floor(hits, refused_all, min_relevance=0.35)
    )


def test_fusion_lets_exact_words_lead_and_meaning_decide_otherwise() -> None:
    similarity = {"manual:a": 0.80, "manual:b": 0.85, "manual:c": 0.88}
    semantic = ["manual:c", "manual:b"]
    # Every word of the question in "a": the semantic ranking has no weight, "a" leads.
    exact = [Candidate("manual", "a", 1.0, 1.0), Candidate("manual", "b", 0.5, 0.4)]
    fused = {c.key: c for c in fuse_semantic(exact, semantic, similarity, {"manual:a": 1.0})}
    assert max(fused.values(), key=lambda c: c.score).key == "a"
    assert fused["c"].score == 0.0
    # None of its words anywhere: meaning alone ranks, "c" first, as any lexical first.
    none = [Candidate("manual", "a", 0.0, 0.0), Candidate("manual", "b", 0.0, 0.0)]
    fused = {c.key: c for c in fuse_semantic(none, semantic, similarity, {})}
    assert fused["c"].score == pytest.approx(fused["a"].score)
    assert fused["c"].score > 0
    # Ranked by both, "b" comes before either; every candidate keeps its similarity.
    assert fused["b"].score > fused["c"].score
    assert {k: c.similarity for k, c in fused.items()} == {"a": 0.80, "b": 0.85, "c": 0.88}


def test_pieces_are_sentences_of_a_bounded_length() -> None:
    text = "宿泊費の上限は 1 泊 12,000 円です。" * 12 + "\n短い見出し\n" + "日当は 2,000 円です。"
    pieces = split_pieces(text)
    assert all(len(p) <= 160 or "。" not in p[:-1] for p in pieces)
    assert "短い見出し 日当は 2,000 円です。" in pieces  # a heading joins the next line
    assert split_pieces(" \n\n ") == []


OFFLINE = textwrap.dedent(
    """
    import json, socket, sys
    def refuse(*args, **kwargs):
        raise OSError("network is off in this test")
    socket.socket.connect = refuse
    socket.create_connection = refuse
    from pathlib import Path
    from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
    from keiri_agent.config import Settings
    root = Path(sys.argv[1])
    manual = root / "manual"
    manual.mkdir()
    (manual / "出張旅費.md").write_text(
        "# 出張旅費\\n出張は事前に出張申請を出して承認を受けてから行ってください。"
        "宿泊費の上限は 1 泊 12,000 円で、超える場合は理由の入力が必要です。", "utf-8")
    (manual / "ログイン.md").write_text("# ログイン\\nパスワードを 5 回間違えるとロックされます。", "utf-8")
    settings = Settings(_env_file=None, keiri_cache_dir=Path(sys.argv[2]))
    result = ingest(root / "index", manuals=[manual], settings=settings)
    with KnowledgeBase.open(root / "index", settings=settings) as kb:
        hits = kb.search("出張のホテル代はいくらまで出ますか", 1)
    print(json.dumps({"model": result.embedding_model, "embedded": result.semantic_embedded,
                      "top": hits[0].file_name if hits else None}))
    """
)


def test_semantic_search_needs_no_network(
    tmp_path: Path, semantic_index: tuple[Path, Path]
) -> None:
    """A fresh process whose sockets refuse to connect loads the model, ingests and searches
    by meaning. It starts from a copy of the session's embedding cache (the background text is
    embedded there once, not again in every process); the new manual is embedded offline."""
    cache = tmp_path / "cache"
    cache.mkdir()
    # The session's cache is shared by the workers: copied by SQLite's backup, never mid-write.
    with (
        closing(sqlite3.connect(semantic_index[1] / CACHE_FILE)) as source,
        closing(sqlite3.connect(cache / CACHE_FILE)) as copy,
    ):
        source.backup(copy)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE, str(tmp_path), str(cache)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    # Each manual's one piece, as a passage and in the form of a question.
    assert report == {"model": LOCAL_MODEL_KEY, "embedded": 4, "top": "出張旅費.md"}
