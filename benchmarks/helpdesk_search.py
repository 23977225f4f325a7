"""Help-desk search: lexical methods side by side on two evaluation sets, and BM25 speed.

Part 1 — quality. Two knowledge bases are ingested into temporary indexes:

- **large set** — ``examples/helpdesk_eval`` (made by its ``make_eval_set.py``): 300 passages of
  a back-office manual in 6 Markdown files and 600 questions written with other spellings
  (振込 / 振り込み / ふりこみ, 取消 / とりけし, 二重申請 / 2回申請, full-width digits...);
- **sample KB** — ``examples/helpdesk`` (the XYZシステム manual PDF and release notes), with the
  manual questions of ``tests/data/helpdesk_eval.yaml``.

Over the same manual chunks, each method ranks every question; recall@3 (the share of
questions with an answering chunk in the first 3) and MRR (first 10) are printed per method:

- **Sudachi BM25 (before)** — BM25 over the Sudachi terms, what search_manual did before issue 20;
- **char-bigram BM25** — BM25 over character bigrams of the NFKC text (a 30-line baseline);
- **new lexical** — the product's :class:`LexicalIndex` (words with spelling variants, character
  bigrams, reading bigrams; calibrated score), without and with the relevance floor;
- **hybrid, scripted embeddings** — RRF of the new lexical ranking and a dense ranking whose
  vectors come from the tests' scripted server (character n-gram hashes, not a real model:
  it shows the fusion's mechanics, not a model's quality).

Part 2 — speed. A synthetic corpus of 10,000 chunks is made from the manual's chunks (sentences
mixed across chunks, numbers and error codes varied, a document number added; seeded), tokenized
once with the product tokenizer, and indexed twice on the SAME tokens: the product's BM25
(``BM25Index``, NumPy) and ``rank_bm25.BM25Okapi`` (the baseline). Each evaluation question is
searched ``--repeat`` times by both, query tokenization included; the medians and their ratio
are printed, with how often both put the same chunk first.

Run: ``python -m benchmarks.helpdesk_search [--chunks 10000] [--repeat 5] [--skip-speed]``
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

from benchmarks.helpdesk_methods import evaluate_methods
from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge.chunking import search_text
from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.tokenize import get_tokenizer

__all__ = ["main", "synthetic_corpus"]

SEED = 20250401
_SENTENCE = re.compile(r"(?<=[。．])")
_CODE = re.compile(r"E-\d{4}")
_NUMBER = re.compile(r"(?<![A-Za-z\-])\d{1,3}(?![\d.])")


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
        ("keiri BM25Index (NumPy, product)", product_build_s, ours),
    ):
        median = statistics.median(times)
        p90 = float(np.percentile(times, 90))
        print(f"| {name} | {build:.2f} | {median:.2f} | {p90:.2f} | {base_median / median:.1f}x |")
    print(
        f"\n{len(questions)} questions x {repeat} runs each, query tokenization included on both"
        f" sides; the same chunk ranked first by both for {same_first}/{len(questions)} questions"
        " (the product uses Lucene's IDF, rank_bm25 Okapi's with an epsilon floor)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000, help="synthetic corpus size")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each query (speed)")
    parser.add_argument("--skip-speed", action="store_true", help="quality only")
    parser.add_argument("--verbose", action="store_true", help="list the new method's misses")
    args = parser.parse_args(argv)
    print(
        machine_note(
            f"sudachipy {version('sudachipy')}, numpy {version('numpy')}, "
            f"rank-bm25 {version('rank-bm25')}"
        )
    )
    with tempfile.TemporaryDirectory(prefix="keiri-helpdesk-") as tmp:
        base = evaluate_methods(Path(tmp), verbose=args.verbose)
    if not args.skip_speed:
        texts, questions = base
        speed(texts, args.chunks, questions[:60], args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
