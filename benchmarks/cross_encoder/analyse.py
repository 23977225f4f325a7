"""The figures of a score_hits.py output: reranking, a threshold on the best CE score, and the
combination with today's floor; the separation (AUC) of paraphrases from off-topic questions by
the best CE score, the best e5 similarity and the best lexical relevance over the candidates.

Off-topic questions are split into 'manual-word' (some top-10 hit has lexical relevance >=
SHARED_WORDS: the question shares the manual's words) and 'everyday'. The threshold is the highest
one keeping >= KEEP of the paraphrases answered (best CE >= t), chosen on the given (tuning) file;
pass --thr / --thr-and to apply thresholds chosen elsewhere.

Run (standard library only): python analyse.py SCORES.json [--thr T] [--thr-and T2] [-v]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

KEEP = 0.97  # share of paraphrases a threshold must keep answered
# keiri_agent.agents.helpdesk.knowledge.ranking.SHARED_WORDS_RELEVANCE at main 3daa8c2 (copied:
# this script runs without the package)
SHARED_WORDS = 0.25
NO_SCORE = -99.0  # best score of a question without candidates

Rec = dict
Answered = Callable[[Rec], bool]


def manual_word(r: Rec) -> bool:
    return max((h["relevance"] for h in r["hits"]), default=0) >= SHARED_WORDS


def found_top3(r: Rec, order: list[int]) -> bool:
    return any(r["hits"][i]["gold_id"] in r["gold"] for i in order[:3])


def rerank(r: Rec) -> list[int]:
    return sorted(range(len(r["hits"])), key=lambda i: -r["ce"][i])


def best(r: Rec, key: str = "ce") -> float:
    """Best score over the candidates: the CE logit (key 'ce') or a hit field."""
    vals = r["ce"] if key == "ce" else [h[key] for h in r["hits"] if h[key] is not None]
    return max(vals) if vals else NO_SCORE


def auc(pos: list[float], neg: list[float]) -> float:
    """P(a positive scores above a negative), ties counted half."""
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def pick(keep_ok: Callable[[float], bool], cands: list[float]) -> float | None:
    """Highest threshold for which keep_ok(t) holds."""
    ok = [t for t in cands if keep_ok(t)]
    return max(ok) if ok else None


def report(name: str, answered: Answered, para: list[Rec], off: list[Rec]) -> None:
    n = len(para)
    kept = [r for r in para if answered(r)]
    f3 = sum(found_top3(r, rerank(r)) for r in kept)
    mw = [r for r in off if manual_word(r)]
    ev = [r for r in off if not manual_word(r)]

    def refused(rs: list[Rec]) -> int:
        return sum(not answered(r) for r in rs)

    print(
        f"  {name}: paraphrases answered {len(kept)}/{n} ({len(kept) / n:.1%}), "
        f"answered+found@3(reranked) {f3}/{n} ({f3 / n:.1%}); "
        f"off-topic refused {refused(off)}/{len(off)} ({refused(off) / max(1, len(off)):.1%}) "
        f"[everyday {refused(ev)}/{len(ev)}, manual-word {refused(mw)}/{len(mw)}]"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("scores", type=Path, help="score_hits.py output")
    ap.add_argument("--thr", type=float, default=None, help="CE threshold chosen elsewhere")
    ap.add_argument("--thr-and", type=float, default=None, help="AND threshold chosen elsewhere")
    ap.add_argument("-v", action="store_true", help="list the questions on the wrong side")
    args = ap.parse_args()
    data = json.loads(args.scores.read_text(encoding="utf-8"))
    recs = data["recs"]
    para = [r for r in recs if r["answerable"]]
    off = [r for r in recs if not r["answerable"]]
    n = len(para)
    n_mw = sum(map(manual_word, off))
    print(f"file {args.scores.name}  ckpt {data['ckpt']}  max_len {data['max_len']}")
    print(f"paraphrases {n}, off-topic {len(off)} (manual-word {n_mw}, everyday {len(off) - n_mw})")
    prod_found = sum(any(g in r["gold"] for g in r["product_top3"]) for r in para)
    unf = sum(found_top3(r, list(range(len(r["hits"])))) for r in para)
    rr = sum(found_top3(r, rerank(r)) for r in para)
    in10 = sum(any(h["gold_id"] in r["gold"] for h in r["hits"]) for r in para)
    print(
        f"(a) gold in top-10 unfloored {in10}/{n}; found@3: product (floored) {prod_found}/{n}, "
        f"unfloored fused {unf}/{n}, CE-reranked top-10 {rr}/{n}"
    )

    cands = sorted({best(r) for r in recs})
    print("product today:")
    report("floor only", lambda r: not r["product_refused"], para, off)
    t = args.thr
    if t is None:
        t = pick(lambda t: sum(best(r) >= t for r in para) >= KEEP * n, cands)
        how = f" (highest keeping >= {KEEP:.0%} of paraphrases)"
    else:
        how = " (given)"
    assert t is not None
    print(f"(b) threshold on best CE score t={t:.3f}{how}")
    report("CE only", lambda r: best(r) >= t, para, off)
    ta = args.thr_and
    if ta is None:
        ta = pick(
            lambda t: sum(best(r) >= t and not r["product_refused"] for r in para) >= KEEP * n,
            cands,
        )
    print("(c) with today's floor:")
    if ta is None:
        print(f"  AND: no threshold keeps >= {KEEP:.0%} (the floor alone keeps fewer)")
    else:
        print(f"  AND (answer when the floor passes AND CE >= {ta:.3f}):")
        report("floor AND CE", lambda r: best(r) >= ta and not r["product_refused"], para, off)
    print(f"  OR (answer when the floor passes OR CE >= t={t:.3f}):")
    report("floor OR CE", lambda r: best(r) >= t or not r["product_refused"], para, off)
    print("  per split, CE only at t:")
    for s in sorted({r["split"] for r in recs}):
        sp = [r for r in para if r["split"] == s]
        so = [r for r in off if r["split"] == s]
        f3 = sum(found_top3(r, rerank(r)) for r in sp)
        print(
            f"    {s}: paraphrases answered {sum(best(r) >= t for r in sp)}/{len(sp)}, "
            f"found@3 reranked {f3}/{len(sp)}, off-topic refused {sum(best(r) < t for r in so)}/{len(so)}"
        )
    aucs = {
        name: auc([best(r, key) for r in para], [best(r, key) for r in off])
        for name, key in (("CE", "ce"), ("e5 similarity", "similarity"), ("lexical", "relevance"))
    }
    print(
        "AUC paraphrase vs off-topic by best score: "
        + ", ".join(f"{k} {v:.3f}" for k, v in aucs.items())
    )
    if args.v:
        print(
            "paraphrases below t:",
            [(r["question"], round(best(r), 2)) for r in para if best(r) < t],
        )
        print(
            "off-topic at/above t:",
            [(r["question"], round(best(r), 2)) for r in off if best(r) >= t],
        )


if __name__ == "__main__":
    main()
