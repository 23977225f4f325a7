"""The retrieval methods that benchmarks/helpdesk_search.py compares, over one ingested index."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

from benchmarks.embeddings import bundled_settings, embedding_settings
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, SearchOutput, ingest
from keiri_agent.agents.helpdesk.knowledge.chunking import search_text
from keiri_agent.agents.helpdesk.knowledge.evaluate import (
    EvalQuestion,
    Expected,
    read_questions,
)
from keiri_agent.agents.helpdesk.knowledge.storage import IndexDB
from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.hybrid import reciprocal_rank_fusion
from keiri_agent.retrieval.lexical import LexicalIndex, char_ngrams
from keiri_agent.retrieval.tokenize import get_tokenizer

__all__ = ["LARGE_SET", "SAMPLE_KB", "evaluate_methods", "sample_questions"]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_KB = ROOT / "examples" / "helpdesk"
LARGE_SET = ROOT / "examples" / "helpdesk_eval"
SAMPLE_CASES = ROOT / "tests" / "data" / "helpdesk_eval.yaml"
DEPTH = 10
Ranker = Callable[[str], list[str]]  # question → chunk ids, best first


def sample_questions() -> list[EvalQuestion]:
    """The manual questions of tests/data/helpdesk_eval.yaml (pages of the PDF, unpaged files)."""
    data = yaml.safe_load(SAMPLE_CASES.read_text(encoding="utf-8"))
    manual = str(data["manual_file"])
    questions = []
    for case in data["cases"]:
        expected = [Expected(file=manual, page=int(p)) for p in case.get("pages", [])]
        expected += [Expected(file=str(f)) for f in case.get("files", [])]
        if expected:
            questions.append(EvalQuestion(str(case["id"]), str(case["question"]), tuple(expected)))
    return questions


def _score(
    rank: Ranker, questions: Sequence[EvalQuestion], chunks: dict[str, SearchOutput]
) -> tuple[float, float, float, list[EvalQuestion]]:
    """(recall@3, MRR, median ms, misses at 3)."""
    hits3 = 0
    reciprocal = 0.0
    times = []
    misses = []
    for question in questions:
        started = time.perf_counter()
        ids = rank(question.question)[:DEPTH]
        times.append((time.perf_counter() - started) * 1000)
        position = question.rank([chunks[i] for i in ids])
        if position is not None:
            reciprocal += 1 / position
        if position is not None and position <= 3:
            hits3 += 1
        else:
            misses.append(question)
    n = len(questions)
    return hits3 / n, reciprocal / n, statistics.median(times), misses


def _methods(
    kb: KnowledgeBase,
    semantic: KnowledgeBase,
    ids: list[str],
    texts: list[str],
    dense: Ranker | None,
) -> dict[str, Ranker]:
    tokenizer = get_tokenizer()
    sudachi = BM25Index.from_tokens(tokenizer.tokenize_many(texts), ids=ids)
    bigram = BM25Index.from_tokens([char_ngrams(t) for t in texts], ids=ids)
    lexical = LexicalIndex.build(texts, ids=ids)

    def ids_of(hits: Sequence[object]) -> list[str]:
        return [str(getattr(hit, "id", "")) for hit in hits]

    def hybrid(query: str) -> list[str]:
        assert dense is not None
        fused = reciprocal_rank_fusion([ids_of(lexical.search(query, 20)), dense(query)[:20]])
        return list(fused)

    methods: dict[str, Ranker] = {
        "Sudachi BM25 (before)": lambda q: ids_of(sudachi.search(q, DEPTH)),
        "char-bigram BM25": lambda q: ids_of(
            bigram.top(bigram.scores_for_terms(char_ngrams(q)), DEPTH)
        ),
        "new lexical (no floor)": lambda q: ids_of(lexical.search(q, DEPTH)),
        f"new lexical, floor {kb.min_relevance:g} (search_manual, semantic off)": lambda q: [
            h.chunk_id for h in kb.search_manual(q, DEPTH)
        ],
        "semantic + lexical, default floor (search_manual, default)": lambda q: [
            h.chunk_id for h in semantic.search_manual(q, DEPTH)
        ],
    }
    if dense is not None:
        methods["hybrid: new lexical + scripted embeddings (RRF)"] = hybrid
    return methods


def _dense_ranker(ids: list[str], texts: list[str], cache: Path) -> tuple[Ranker | None, object]:
    settings, _, server = embedding_settings(True, cache)
    if settings is None:
        return None, server
    from keiri_agent.llm import get_embedder
    from keiri_agent.retrieval.dense import DenseIndex, EmbeddingCache

    index = DenseIndex.build(
        texts, embedder=get_embedder(settings=settings), cache=EmbeddingCache(cache), ids=ids
    )
    return (lambda q: [hit.id for hit in index.search(q, 20)]), server


def evaluate_methods(tmp: Path, *, verbose: bool = False) -> tuple[list[str], list[str]]:
    """Print the comparison table; return the sample KB's chunk texts and all questions."""
    sets = [
        ("large set", [LARGE_SET / "manual"], read_questions(LARGE_SET / "questions.jsonl")),
        ("sample KB", [SAMPLE_KB / "manual"], sample_questions()),
    ]
    rows = []
    sample_texts: list[str] = []
    all_questions: list[str] = []
    for label, manuals, questions in sets:
        index_dir = tmp / label.replace(" ", "_")
        settings = bundled_settings(tmp / "cache")
        result = ingest(index_dir, manuals=manuals, settings=settings)
        kb = KnowledgeBase.open(
            index_dir, settings=bundled_settings(tmp / "cache", keiri_helpdesk_semantic=False)
        )
        semantic = KnowledgeBase.open(index_dir, settings=settings)
        db = IndexDB.open(index_dir, create=False)
        ids, texts, _ = db.chunk_analyses()
        chunks = {
            cid: SearchOutput(
                file_name=c.file_name,
                content=c.text,
                page=c.page,
                chunk_id=cid,
                score=0.0,
                source="manual",
            )
            for cid, c in db.chunks(ids).items()
        }
        db.close()
        texts = [search_text(t) for t in texts]
        dense, server = _dense_ranker(ids, texts, tmp / "cache")
        try:
            for method, rank in _methods(kb, semantic, ids, texts, dense).items():
                recall, mrr, median, misses = _score(rank, questions, chunks)
                rows.append(
                    (label, len(questions), result.chunks_total, method, recall, mrr, median)
                )
                if verbose and method.startswith("new lexical (no"):
                    for miss in misses:
                        print(
                            f"- {label}: {miss.id} {miss.question} → {miss.expected[0].describe()}"
                        )
        finally:
            if server is not None:
                server.stop()  # type: ignore[attr-defined]
            kb.close()
            semantic.close()
        if label == "sample KB":
            sample_texts = texts
        all_questions += [q.question for q in questions]
    print("\n## Lexical retrieval: recall@3 and MRR on the same chunks\n")
    print("| set | questions | chunks | method | recall@3 | MRR | median ms/query |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for label, n, chunk_count, method, recall, mrr, median in rows:
        print(
            f"| {label} | {n} | {chunk_count} | {method} | {recall:.3f} | {mrr:.3f} | {median:.2f} |"
        )
    print(
        "\n(an answer counts when an answering chunk — the expected page, file or passage — is"
        " ranked; the scripted embeddings are character n-gram hashes, not a real model)"
    )
    return sample_texts, all_questions
