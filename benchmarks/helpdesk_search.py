"""Help-desk search: retrieval quality on the sample knowledge base, and BM25 speed at 10,000 chunks.

Part 1 — quality. The sample knowledge base (``examples/helpdesk``: the XYZシステム manual PDF,
its release notes, 36 Q/A pairs) is ingested into a temporary index, and every question of
``tests/data/helpdesk_eval.yaml`` is asked of:

- **search_manual** — BM25 (Sudachi tokens, bm25s) over the manual chunks;
- **search_qa** — dense search in Qdrant when an embedding model is configured
  (``KEIRI_LLM_MODEL_EMBEDDING``), otherwise BM25 over the Q/A pairs (said in the output);
- **hybrid** — both sources in one ranking (``KnowledgeBase.search_hybrid``).

It prints recall@3 and MRR (gold: manual pages and Q/A rows) and the median time per query.
``--scripted-embeddings`` runs the dense path against the tests' scripted server, whose vectors
are character n-gram hashes: it exercises Qdrant and the cache, it is not a real model.

Part 2 — speed. A synthetic corpus of 10,000 chunks is made from the manual's chunks (sentences
mixed across chunks, numbers and error codes varied, a document number added; seeded), tokenized
once with the product tokenizer, and indexed twice on the SAME tokens: the product's BM25
(``BM25Index``, bm25s) and ``rank_bm25.BM25Okapi`` (the baseline). Each evaluation question is
searched ``--repeat`` times by both, query tokenization included; the medians and their ratio
are printed, with how often both put the same chunk first.

Run: ``python -m benchmarks.helpdesk_search [--chunks 10000] [--repeat 5] [--scripted-embeddings]``
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.helpdesk_eval import EVAL_TOOLS, HelpdeskCase, Tool, load_cases, searcher

from benchmarks.embeddings import embedding_settings
from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
from keiri_agent.agents.helpdesk.knowledge.chunking import search_text
from keiri_agent.agents.helpdesk.knowledge.storage import IndexDB
from keiri_agent.config import Settings
from keiri_agent.llm import get_embedder
from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.tokenize import get_tokenizer

__all__ = ["main", "synthetic_corpus"]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "helpdesk"
SEED = 20250401
_SENTENCE = re.compile(r"(?<=[。．])")
_CODE = re.compile(r"E-\d{4}")
_NUMBER = re.compile(r"(?<![A-Za-z\-])\d{1,3}(?![\d.])")


def _bm25_settings(cache: Path) -> Settings:
    return Settings(_env_file=None, keiri_llm_model_embedding=None, keiri_cache_dir=cache)  # type: ignore[call-arg]


def quality(
    kb: KnowledgeBase, cases: list[HelpdeskCase], tools: tuple[Tool, ...]
) -> list[tuple[str, int, float, float, float]]:
    """(tool, queries, recall@3, MRR, median ms) for each tool."""
    from tests.support.helpdesk_eval import RANKING_DEPTH, ranking

    from keiri_agent.retrieval.eval import summarize

    rows = []
    for tool in tools:
        search = searcher(kb, tool)
        used = [case for case in cases if case.gold(tool)]
        rankings, times = [], []
        for case in used:
            started = time.perf_counter()
            hits = search(case.question, RANKING_DEPTH)
            times.append((time.perf_counter() - started) * 1000)
            rankings.append(ranking(hits))
        summary = summarize(rankings, [case.gold(tool) for case in used], ks=(3,))
        rows.append((tool, len(used), summary.recall[3], summary.mrr, statistics.median(times)))
    return rows


def synthetic_corpus(base: list[str], size: int, seed: int = SEED) -> list[str]:
    """``size`` chunks varied from ``base``: mixed sentences, new numbers, codes and ids."""
    rng = random.Random(seed)
    sentences = [s.strip() for text in base for s in _SENTENCE.split(text) if len(s.strip()) > 8]
    corpus = []
    for number in range(size):
        picked = rng.sample(sentences, k=rng.randint(5, 11))
        text = "".join(picked)
        text = _CODE.sub(lambda _: f"E-{rng.randint(1000, 9999)}", text)
        text = _NUMBER.sub(lambda _: str(rng.randint(1, 999)), text)
        corpus.append(f"文書番号 DOC-{number:05d}（第 {rng.randint(1, 40)} 版）\n{text}")
    return corpus


def _timed(run: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def speed(base: list[str], size: int, questions: list[str], repeat: int) -> None:
    from rank_bm25 import BM25Okapi

    tokenizer = get_tokenizer()
    corpus = synthetic_corpus(base, size)
    started = time.perf_counter()
    tokens = tokenizer.tokenize_many(search_text(text) for text in corpus)
    tokenize_s = time.perf_counter() - started
    ids = [f"doc{i}" for i in range(len(corpus))]
    started = time.perf_counter()
    product = BM25Index.from_tokens(tokens, ids=ids, tokenizer=tokenizer)
    product_build_s = time.perf_counter() - started
    started = time.perf_counter()
    baseline = BM25Okapi(tokens)
    baseline_build_s = time.perf_counter() - started

    def rank_bm25_top(question: str, k: int = 3) -> list[int]:
        terms = list(dict.fromkeys(tokenizer.tokenize(question)))  # distinct, as the product
        scores = np.asarray(baseline.get_scores(terms))
        top = np.argpartition(-scores, k)[:k]
        return [int(i) for i in top[np.argsort(-scores[top], kind="stable")]]

    ours, theirs, same_first = [], [], 0
    for question in questions:
        product.search(question, 3)  # warm caches (query splits) before timing, both sides
        rank_bm25_top(question)
        ours += _timed(lambda q=question: product.search(q, 3), repeat)  # type: ignore[misc]
        theirs += _timed(lambda q=question: rank_bm25_top(q), repeat)  # type: ignore[misc]
        hits = product.search(question, 1)
        same_first += bool(hits) and hits[0].index == rank_bm25_top(question)[0]
    mean_tokens = statistics.fmean(len(t) for t in tokens)
    print(
        f"\n## BM25 query time over {len(corpus):,} chunks (same tokens)\n"
        f"corpus: {len(corpus):,} synthetic chunks from the manual's text, "
        f"{statistics.fmean(len(t) for t in corpus):.0f} characters and {mean_tokens:.0f} "
        f"tokens on average; tokenized once in {tokenize_s:.1f} s"
    )
    print("\n| engine | index build s | median ms/query | p90 ms/query | vs rank_bm25 |")
    print("|---|---:|---:|---:|---:|")
    base_median = statistics.median(theirs)
    for name, build, times in (
        ("rank_bm25 BM25Okapi (baseline)", baseline_build_s, theirs),
        ("keiri BM25Index (bm25s, product)", product_build_s, ours),
    ):
        median = statistics.median(times)
        p90 = float(np.percentile(times, 90))
        print(f"| {name} | {build:.2f} | {median:.2f} | {p90:.2f} | {base_median / median:.1f}x |")
    print(
        f"\n{len(questions)} questions x {repeat} runs each, query tokenization included on both"
        f" sides; the same chunk ranked first by both for {same_first}/{len(questions)} questions"
        " (bm25s uses Lucene's IDF, rank_bm25 Okapi's with an epsilon floor)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000, help="synthetic corpus size")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each query (speed)")
    parser.add_argument("--verbose", action="store_true", help="list the questions missed at 3")
    parser.add_argument(
        "--scripted-embeddings",
        action="store_true",
        help="dense search_qa against the tests' scripted server (n-gram-hash vectors)",
    )
    args = parser.parse_args(argv)
    cases = load_cases()
    print(
        machine_note(
            f"sudachipy {version('sudachipy')}, bm25s {version('bm25s')}, "
            f"rank-bm25 {version('rank-bm25')}, qdrant-client {version('qdrant-client')}"
        )
    )
    with tempfile.TemporaryDirectory(prefix="keiri-helpdesk-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        result = ingest(
            root / "bm25",
            manuals=[EXAMPLES / "manual"],
            qa=EXAMPLES / "qa.csv",
            settings=_bm25_settings(root / "cache"),
        )
        ingest_s = time.perf_counter() - started
        print(
            f"sample knowledge base: {result.files_seen} manuals, {result.chunks_total} chunks,"
            f" {result.qa_rows_total} Q/A pairs (ingest {ingest_s:.1f} s);"
            f" evaluation set: {len(cases)} questions"
        )
        kb = KnowledgeBase.open(root / "bm25", settings=_bm25_settings(root / "cache"))
        rows = quality(kb, cases, EVAL_TOOLS)
        labels = {"manual": "search_manual (BM25)", "qa": "search_qa (BM25)", "hybrid": "hybrid"}
        dense_note = ""
        settings, label, server = embedding_settings(args.scripted_embeddings, root / "cache")
        try:
            if settings is not None:
                ingest(
                    root / "dense",
                    manuals=[EXAMPLES / "manual"],
                    qa=EXAMPLES / "qa.csv",
                    settings=settings,
                    embedder=get_embedder(settings=settings),
                )
                dense = KnowledgeBase.open(root / "dense", settings=settings)
                for tool, *rest in quality(dense, cases, ("qa", "hybrid")):
                    rows.append((f"{tool}-dense", *rest))  # type: ignore[arg-type]
                labels |= {
                    "qa-dense": f"search_qa (dense: {label})",
                    "hybrid-dense": "hybrid (BM25 manual + dense/BM25 Q/A)",
                }
            else:
                dense_note = (
                    "dense search_qa: skipped — KEIRI_LLM_MODEL_EMBEDDING is not set, so"
                    " search_qa ran as BM25 (--scripted-embeddings runs the path offline)"
                )
        finally:
            if server is not None:
                server.stop()
        print("\n| tool | questions | recall@3 | MRR | median ms/query |")
        print("|---|---:|---:|---:|---:|")
        for tool, count, recall, mrr, median in rows:
            print(f"| {labels[tool]} | {count} | {recall:.3f} | {mrr:.3f} | {median:.2f} |")
        if dense_note:
            print(dense_note)
        print("(gold: manual pages for search_manual, Q/A rows for search_qa, both for hybrid)")
        if args.verbose:
            _misses(kb, cases)
        db = IndexDB.open(root / "bm25", create=False)
        ids, _ = db.chunk_tokens()
        base = [chunk.text for chunk in db.chunks(ids).values()]
        db.close()
    speed(base, args.chunks, [case.question for case in cases], args.repeat)
    return 0


def _misses(kb: KnowledgeBase, cases: list[HelpdeskCase]) -> None:
    from tests.support.helpdesk_eval import evaluate

    for tool in EVAL_TOOLS:
        _, ranked = evaluate(kb, cases, tool)
        for case, order in ranked:
            if not set(case.gold(tool)) & set(order[:3]):
                print(f"- {tool}: {case.id} gold {list(case.gold(tool))} top-3 {order[:3]}")


if __name__ == "__main__":
    raise SystemExit(main())
