"""Dump the product's hybrid-search candidates for paraphrase lists (keiri-agent venv).

As benchmarks/helpdesk_heldout.py: ingest examples/helpdesk into a temp dir with default settings
and no keys; for each question record the product's decision (search(q, 3, tool="hybrid"):
empty = 該当なし, and its top-3 gold ids) and the top-K UNFLOORED fused candidates
(rank(q, K, tool="hybrid", min_relevance=0.0): with the semantic floor, an uncovered question
returns its first k candidates flagged below the floor, so this is the fused ranking either way).

Run (from the repository root; OUT outside the repository):
  PYTHONPATH=src python -m benchmarks.cross_encoder.dump_hits OUT/hits_tuning.json \\
      dev dev2 heldout heldout2 heldout3
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import cast

from tests.support.helpdesk import EXAMPLES
from tests.support.helpdesk_eval import gold_id
from tests.support.helpdesk_paraphrases import Split, load_lists

from benchmarks.cross_encoder.kb import default_settings, ingested

K = 10  # unfloored candidates per question the cross-encoder scores
PRODUCT_K = 3  # the help desk's own answer size


def row(h) -> dict:
    return {
        "gold_id": gold_id(h),
        "content": h.content,
        "score": h.score,
        "relevance": h.relevance,
        "similarity": h.similarity,
        "above_floor": h.above_floor,
    }


def dump(out_path: Path, splits: list[str]) -> int:
    recs = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = default_settings(root)
        manuals = [EXAMPLES / "manual"]
        with ingested(root / "kb", settings, manuals, EXAMPLES / "qa.csv") as kb:
            for split in splits:
                lists = load_lists(cast(Split, split))
                items = [(c.question, list(c.gold), True) for c in lists.answerable]
                items += [(q, [], False) for q in lists.off_topic]
                for q, gold, ans in items:
                    prod = kb.search(q, PRODUCT_K, tool="hybrid")
                    ranked = kb.rank(q, K, tool="hybrid", min_relevance=0.0)
                    recs.append(
                        {
                            "split": split,
                            "question": q,
                            "gold": gold,
                            "answerable": ans,
                            "product_top3": [gold_id(h) for h in prod],
                            "product_refused": not prod,
                            "hits": [row(h) for h in ranked],
                        }
                    )
    out_path.write_text(json.dumps(recs, ensure_ascii=False, indent=0), encoding="utf-8")
    return len(recs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=Path, help="hits JSON to write (outside the repository)")
    ap.add_argument("splits", nargs="+", help="lists of tests/data/helpdesk_paraphrases.yaml")
    args = ap.parse_args()
    print("wrote", dump(args.out, args.splits))


if __name__ == "__main__":
    main()
