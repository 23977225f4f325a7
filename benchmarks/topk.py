"""Top-K block retrieval quality and speed, against baselines measured in the same run.

Runs every instruction of ``tests/data/topk_eval.yaml`` (Japanese back-office requests, each
with the blocks a correct plan uses) through:

- **substring** — the registry's word match (``BlockRegistry.search``), unmatched blocks after
  it in id order: what the catalog browser does, no ranking model at all.
- **BM25 char-bigram** (the baseline) — the same BM25 engine over the same block documents, but
  with character bigrams instead of the dictionary tokenizer: what BM25 over Japanese gives
  without morphological analysis.
- **BM25** — the product (``BlockRetriever.retrieve(mode="bm25")``: Sudachi tokens, BM25 in NumPy).
- **dense** and **hybrid** — only when an embedding model is configured
  (``KEIRI_LLM_MODEL_EMBEDDING``); otherwise they are reported as skipped, with the reason.
  ``--scripted-embeddings`` runs them against the tests' scripted server instead, whose vectors
  are character n-gram hashes: it exercises the path and the cache, it is not a real model.

For each it prints recall@5, recall@8 and MRR, and the median time of one query over the whole
catalog (each query ``--repeat`` times; dense and hybrid once per query, since a repeated query
would be answered from the embedding cache), each with its ratio to the baseline.

Then the **candidate sets** plan generation sends (BM25, ``ui.interactive_input`` required), the
old selection (6 per category, 30 in all, nothing else: in effect every block) against the
product (category pre-filter, relevance floor, 5 per category, token budget): candidates per
request, recall of the needed blocks within them, the stage-2 schema in bytes (old: Pydantic's
schema as it was sent; new: the strict and the tool variant) and the estimated tokens of the
candidates' catalog text plus schema, with new/old ratios.

Last, the **reference documents' effect** on that candidate set: every instruction with a
document attached (an invoice with a bank account, an expense memo with 振込先・普通), the text
appended to the query (as plan generation did before) against ranked apart with
``DOCUMENT_WEIGHT`` (``retrieve(documents=...)``, the product): recall of the needed blocks.

Run: ``python -m benchmarks.topk [--repeat 20] [--verbose] [--scripted-embeddings]``
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TypedDict

import numpy as np
import yaml

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.embeddings import embedding_settings
from benchmarks.machine import machine_note as common_machine_note
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.design.candidates import estimate_tokens
from keiri_agent.design.prompts import catalog_text
from keiri_agent.design.schema import design_model
from keiri_agent.design.topk import BlockRetriever, RetrievalMode, block_document
from keiri_agent.design.wire import schema_bytes, wiring_schema
from keiri_agent.llm import get_embedder
from keiri_agent.retrieval.bm25 import BM25Index
from keiri_agent.retrieval.eval import EvalCase, summarize

__all__ = ["load_cases", "main"]

EVAL_SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "topk_eval.yaml"
BASELINE = "BM25 char-bigram"
KS = (5, 8)
Ranker = Callable[[str], list[str]]


@dataclass
class Method:
    name: str
    rank: Ranker
    repeat: bool = True  # False: time each query once (answers would come from a cache)


@dataclass
class Outcome:
    name: str
    recall: dict[int, float]
    mrr: float
    median_ms: float
    rankings: list[list[str]]


def load_cases(path: Path = EVAL_SET) -> list[EvalCase]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [
        EvalCase(id=str(c["id"]), query=str(c["instruction"]), gold=tuple(c["gold"]))
        for c in data["cases"]
    ]


def _bigrams(text: str) -> list[str]:
    import unicodedata

    compact = "".join(unicodedata.normalize("NFKC", text).lower().split())
    return [a + b for a, b in itertools.pairwise(compact)]


def substring_ranker(registry: BlockRegistry) -> Ranker:
    ids = [spec.id for spec in registry.list()]

    def rank(query: str) -> list[str]:
        found = [spec.id for spec in registry.search(query, limit=len(ids))]
        return found + [i for i in ids if i not in found]

    return rank


def bigram_ranker(registry: BlockRegistry) -> Ranker:
    specs = registry.list()
    ids = [spec.id for spec in specs]
    index = BM25Index.from_tokens([_bigrams(block_document(s)) for s in specs], ids=ids)

    def rank(query: str) -> list[str]:
        scores = index.scores_for_terms(_bigrams(query))
        return [ids[int(i)] for i in np.argsort(-scores, kind="stable")]

    return rank


def retriever_ranker(retriever: BlockRetriever, mode: RetrievalMode) -> Ranker:
    def rank(query: str) -> list[str]:
        result = retriever.retrieve(query, mode=mode)
        if result.mode_used != mode:
            raise RuntimeError(f"asked for {mode}, retrieval used {result.mode_used}")
        return [block.id for block in result.ranking]

    return rank


def evaluate(method: Method, cases: list[EvalCase], repeat: int) -> Outcome:
    rankings: list[list[str]] = []
    times: list[float] = []
    for case in cases:
        runs = repeat if method.repeat else 1
        for _ in range(runs):
            started = time.perf_counter()
            ranking = method.rank(case.query)
            times.append((time.perf_counter() - started) * 1000)
        rankings.append(ranking)
    summary = summarize(rankings, [case.gold for case in cases], ks=KS)
    return Outcome(
        method.name, dict(summary.recall), summary.mrr, statistics.median(times), rankings
    )


# Reference-document text as plan generation appends it to the instruction (~4,000 characters).
DOCUMENT_TEXT = (
    "請求書 株式会社山田商事 御中 請求番号 INV-2025-001 発行日 2025年1月10日 "
    "品目 コンサルティング料 数量 1 単価 100,000円 小計 100,000円 消費税 10,000円 "
    "合計 110,000円 お支払期限 2025年1月31日 振込先 みずほ銀行 本店 普通 1234567\n"
) * 40
DOCUMENT_TEXT = DOCUMENT_TEXT[:4000]
# A short expense memo whose bank words (振込先・普通) match the bank blocks (issue 33).
MEMO_TEXT = (
    "経費精算の担当: 経理部 山本。\n"
    "高額の経費は 5 万円以上（50,000円）とし、2025年4月1日から適用する。\n"
    "立替金の振込先は 普通 3958211、本人確認のマイナンバーは別途保管。\n"
)
ATTACHED = {"invoice (4,000 chars)": DOCUMENT_TEXT, "expense memo": MEMO_TEXT}


def long_query_ms(retriever: BlockRetriever, cases: list[EvalCase], repeat: int) -> float:
    times: list[float] = []
    for case in cases:
        for _ in range(max(1, repeat // 4)):
            started = time.perf_counter()
            retriever.retrieve(case.query, documents=DOCUMENT_TEXT, mode="bm25")
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


@dataclass
class SetStats:
    name: str
    counts: list[int]
    recall: float
    schema: dict[str, list[int]]  # variant → bytes per request
    tokens: list[int]  # estimated tokens of catalog text + schema per request


def _old_schema_bytes(registry: BlockRegistry, ids: list[str]) -> int:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return schema_bytes(
        convert_to_openai_tool(design_model(registry, ids))["function"]["parameters"]
    )


class _Selection(TypedDict, total=False):
    """The arguments of ``BlockRetriever.retrieve`` that a compared selection sets."""

    k_per_category: int
    token_budget: int | None
    prefilter: bool


def candidate_sets(
    retriever: BlockRetriever, registry: BlockRegistry, cases: list[EvalCase]
) -> list[SetStats]:
    """Old selection (caps only) against the product's, per evaluation request."""
    setups: dict[str, _Selection] = {
        "old: 6 per category, 30 in all (every block)": {
            "k_per_category": 6,
            "token_budget": None,
            "prefilter": False,
        },
        "product: pre-filter + token budget": {},
    }
    stats: list[SetStats] = []
    for name, knobs in setups.items():
        counts, tokens, found, needed = [], [], 0, 0
        sizes: dict[str, list[int]] = {}
        for case in cases:
            result = retriever.retrieve(
                case.query, mode="bm25", required=["ui.interactive_input"], **knobs
            )
            ids = result.candidate_ids()
            counts.append(len(ids))
            found += len(set(case.gold) & set(ids))
            needed += len(case.gold)
            if name.startswith("old"):
                variants = {"Pydantic (as sent before)": _old_schema_bytes(registry, ids)}
            else:
                variants = {
                    v: wiring_schema(registry, ids, variant=v).size for v in ("strict", "tool")
                }
            for variant, size in variants.items():
                sizes.setdefault(variant, []).append(size)
            main_size = next(iter(variants.values()))
            text = catalog_text(registry, ids)
            tokens.append(estimate_tokens(text) + main_size // 4)
        stats.append(SetStats(name, counts, found / needed, sizes, tokens))
    return stats


def document_effect(
    retriever: BlockRetriever, cases: list[EvalCase]
) -> list[tuple[str, str, float, int]]:
    """(document, how, recall of needed blocks, max candidates) with each attached document."""
    rows: list[tuple[str, str, float, int]] = []
    required = ["ui.interactive_input"]
    for name, text in ATTACHED.items():
        for how in ("appended to the query (before)", "ranked apart (product)"):
            found = needed = most = 0
            for case in cases:
                if how.startswith("appended"):
                    result = retriever.retrieve(
                        case.query + "\n" + text, mode="bm25", required=required
                    )
                else:
                    result = retriever.retrieve(
                        case.query, documents=text, mode="bm25", required=required
                    )
                ids = result.candidate_ids()
                found += len(set(case.gold) & set(ids))
                needed += len(case.gold)
                most = max(most, len(ids))
            rows.append((name, how, found / needed, most))
    return rows


def print_document_effect(rows: list[tuple[str, str, float, int]]) -> None:
    print("\n| attached document | documents | recall of needed blocks | max candidates |")
    print("|---|---|---:|---:|")
    for name, how, recall, most in rows:
        print(f"| {name} | {how} | {recall:.3f} | {most} |")


def print_candidate_sets(stats: list[SetStats]) -> None:
    old, new = stats
    print(
        "\n| candidate set | candidates (median / max) | recall of needed blocks"
        " | stage-2 schema bytes (median / max) | est. tokens catalog+schema (median) |"
    )
    print("|---|---:|---:|---|---:|")
    for row in stats:
        schema = "; ".join(
            f"{variant}: {statistics.median(values):,.0f} / {max(values):,}"
            for variant, values in row.schema.items()
        )
        print(
            f"| {row.name} | {statistics.median(row.counts):.0f} / {max(row.counts)}"
            f" | {row.recall:.3f} | {schema} | {statistics.median(row.tokens):,.0f} |"
        )
    old_schema = statistics.median(next(iter(old.schema.values())))
    print(
        f"\nproduct / old: candidates {_ratio(statistics.median(new.counts), statistics.median(old.counts))},"
        f" recall {_ratio(new.recall, old.recall)},"
        f" strict schema {_ratio(statistics.median(new.schema['strict']), old_schema)},"
        f" tool schema {_ratio(statistics.median(new.schema['tool']), old_schema)},"
        f" tokens {_ratio(statistics.median(new.tokens), statistics.median(old.tokens))}"
    )
    within = sum(1 for c in new.counts if c <= 12)
    print(f"requests with <= 12 candidates: {within}/{len(new.counts)}")


def machine_note() -> str:
    return common_machine_note(
        f"sudachipy {version('sudachipy')}, "
        f"sudachidict-core {version('sudachidict-core')}, numpy {version('numpy')}"
    )


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "—"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="runs of each query (BM25)")
    parser.add_argument("--verbose", action="store_true", help="list the gold blocks BM25 misses")
    parser.add_argument(
        "--scripted-embeddings",
        action="store_true",
        help="dense/hybrid against the tests' scripted server (n-gram-hash vectors)",
    )
    args = parser.parse_args(argv)

    cases = load_cases()
    registry = BlockRegistry()
    print(f"catalog: {len(registry.list())} blocks; evaluation set: {len(cases)} instructions")
    print(machine_note())

    with tempfile.TemporaryDirectory(prefix="keiri-topk-") as tmp:
        settings, label, server = embedding_settings(args.scripted_embeddings, Path(tmp))
        try:
            started = time.perf_counter()
            retriever = BlockRetriever(
                registry, settings=Settings(_env_file=None, keiri_llm_model_embedding=None)
            )
            build_ms = (time.perf_counter() - started) * 1000
            methods = [
                Method("substring (BlockRegistry.search)", substring_ranker(registry)),
                Method(BASELINE, bigram_ranker(registry)),
                Method("BM25 (Sudachi, product)", retriever_ranker(retriever, "bm25")),
            ]
            if settings is not None:
                for mode in ("dense", "hybrid"):
                    # One cache per mode: hybrid must not find dense's query vectors cached.
                    own = settings.model_copy(update={"keiri_cache_dir": Path(tmp) / mode})
                    embedded = BlockRetriever(
                        registry, settings=own, embedder=get_embedder(settings=own)
                    )
                    started = time.perf_counter()
                    embedded.dense_index()  # embed the catalog once (not part of a query)
                    embed_ms = (time.perf_counter() - started) * 1000
                    print(f"{mode}: catalog embedded in {embed_ms:.0f} ms ({label})")
                    methods.append(Method(mode, retriever_ranker(embedded, mode), repeat=False))
            outcomes = [evaluate(m, cases, args.repeat) for m in methods]
            long_ms = long_query_ms(retriever, cases, args.repeat)
            sets = candidate_sets(retriever, registry, cases)
            effect = document_effect(retriever, cases)
        finally:
            if server is not None:
                server.stop()

    print(
        f"BM25 index build (tokenizer load + {len(registry.list())} block documents): "
        f"{build_ms:.0f} ms"
    )
    if settings is None:
        print(
            "dense / hybrid: skipped — KEIRI_LLM_MODEL_EMBEDDING is not set "
            "(no embedding model configured; --scripted-embeddings runs the path offline)"
        )
    elif args.scripted_embeddings:
        print(f"dense / hybrid: {label}")
    base = next(o for o in outcomes if o.name == BASELINE)
    print(
        "\n| method | recall@5 | recall@8 | MRR | recall@8 vs baseline | MRR vs baseline"
        " | median ms/query | time vs baseline |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for o in outcomes:
        print(
            f"| {o.name} | {o.recall[5]:.3f} | {o.recall[8]:.3f} | {o.mrr:.3f}"
            f" | {_ratio(o.recall[8], base.recall[8])} | {_ratio(o.mrr, base.mrr)}"
            f" | {o.median_ms:.3f} | {_ratio(o.median_ms, base.median_ms)} |"
        )
    print(f"\nbaseline: {BASELINE}; time ratio > 1 means slower than the baseline")
    print(
        f"BM25 (product) with {len(DOCUMENT_TEXT):,} characters of document text beside each"
        f" instruction (what plan generation passes): median {long_ms:.2f} ms/query"
    )
    print_candidate_sets(sets)
    print_document_effect(effect)
    if args.verbose:
        product = next(o for o in outcomes if o.name.startswith("BM25 (Sudachi"))
        print("\ngold blocks outside the BM25 top 8:")
        for case, ranking in zip(cases, product.rankings, strict=True):
            missed = [f"{g} (#{ranking.index(g) + 1})" for g in case.gold if g not in ranking[:8]]
            if missed:
                print(f"- {case.id}: {', '.join(missed)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
